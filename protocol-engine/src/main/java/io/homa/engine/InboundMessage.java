package io.homa.engine;

import java.nio.ByteBuffer;

/**
 * Receiver's state of one message: bytes reassembled by offset, and what has been granted.
 *
 * <p>Memory is taken as bytes arrive, in chunks of {@value #CHUNK_BYTES} bytes, never for the
 * whole declared length up front: a flood of first packets that announce huge messages costs
 * only what it carries. The complete message is handed out as these chunks ({@link #parts()}),
 * never joined: a long message is neither copied again nor allocated as one large object.
 */
final class InboundMessage {
    /** Granularity of buffer allocation. */
    static final int CHUNK_BYTES = 16 * 1024;

    final int lengthBytes;
    /** The sender, and the rpcid (S bit as in our GRANTs and RESENDs) for packets about this message. */
    final Peer peer;
    final long wireRpcId;
    final RangeSet received = new RangeSet();
    /** Arrival order, for the FIFO share of grants. */
    long sequence;
    /** Set when the message completed or was dropped; the scheduler forgets it. */
    boolean ended;
    /**
     * Set while its sender ignores our grant: no byte we authorised came over two of the peer's
     * RTOs, for which we asked twice. Its outstanding bytes then leave the total incoming and it
     * takes no part in grant scheduling, until bytes of it arrive ({@link GrantScheduler#stalled}).
     */
    boolean stalled;
    /** Bytes received when we last asked for missing ones (-1: never asked): unchanged at the next ask means stalled. */
    long receivedAtLastResend = -1;
    /** Bytes below this offset are authorised: unscheduled (from DATA's incoming) or granted. */
    int grantedOffset;
    /** The offset in our last GRANT (at first, the unscheduled bytes): where the next GRANT releases bytes. */
    int grantSentOffset;
    /**
     * A round-trip sample in progress ({@link RttEstimate}): the first byte a GRANT or RESEND of
     * ours released and when it left, or -1 when none is pending.
     */
    int rttProbeOffset = -1;
    long rttProbeSentNs;
    /** Chunk {@code i} holds bytes {@code [i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES)}; null until written. */
    private final byte[][] chunks;
    /** Bytes of memory taken by {@link #chunks}. */
    private long bufferedBytes;

    InboundMessage(int lengthBytes, int incomingBytes, Peer peer, long wireRpcId) {
        this.lengthBytes = lengthBytes;
        this.peer = peer;
        this.wireRpcId = wireRpcId;
        this.grantedOffset = Math.min(lengthBytes, Math.max(0, incomingBytes));
        this.grantSentOffset = grantedOffset;
        this.chunks = new byte[(lengthBytes + CHUNK_BYTES - 1) / CHUNK_BYTES][];
    }

    /** Starts a round-trip sample at {@code offset}, the first byte a packet of ours leaving at {@code nowNs} released. */
    void probeRtt(int offset, long nowNs) {
        rttProbeOffset = offset;
        rttProbeSentNs = nowNs;
    }

    /**
     * DATA for {@code [dataOffset, dataOffset + dataBytes)} arrived at {@code nowNs}: if it holds
     * the pending sample's byte, the sample ends; it counts only if the DATA was sent for the first
     * time (Karn's rule: a retransmission may answer an earlier request).
     *
     * @return the round-trip time in nanoseconds, or -1 if this DATA gives no sample
     */
    long rttSample(int dataOffset, int dataBytes, boolean retransmitted, long nowNs) {
        if (rttProbeOffset < dataOffset || rttProbeOffset >= dataOffset + dataBytes) {
            return -1;
        }
        rttProbeOffset = -1;
        return retransmitted ? -1 : nowNs - rttProbeSentNs;
    }

    boolean complete() {
        return received.coveredBytes() == lengthBytes;
    }

    long receivedBytes() {
        return received.coveredBytes();
    }

    /** Bytes still to arrive: the SRPT key. */
    long remainingBytes() {
        return lengthBytes - received.coveredBytes();
    }

    /** Bytes of memory this message holds now. */
    long bufferedBytes() {
        return bufferedBytes;
    }

    /**
     * Copies {@code length} bytes from {@code packet} at {@code from} into the message at
     * {@code offset}, taking chunks as needed (full-size ones from {@code pool}, whose stale bytes
     * are overwritten before the message can complete).
     *
     * @return the bytes of memory newly taken
     */
    long write(ByteBuffer packet, int from, int offset, int length, ChunkPool pool) {
        long taken = 0;
        while (length > 0) {
            int index = offset / CHUNK_BYTES;
            int within = offset % CHUNK_BYTES;
            byte[] chunk = chunks[index];
            if (chunk == null) {
                int chunkBytes = Math.min(CHUNK_BYTES, lengthBytes - index * CHUNK_BYTES);
                chunk = chunkBytes == CHUNK_BYTES ? pool.take() : new byte[chunkBytes];
                chunks[index] = chunk;
                taken += chunk.length;
            }
            int n = Math.min(length, chunk.length - within);
            packet.get(from, chunk, within, n);
            from += n;
            offset += n;
            length -= n;
        }
        bufferedBytes += taken;
        return taken;
    }

    /**
     * Whether the packet's bytes agree with every byte of {@code [offset, offset + length)} that
     * has arrived before: a retransmission repeats what was sent, so overlapping segments that
     * differ mean a forged or broken sender ("last writer wins" would let a forger change a
     * message silently). Reads without allocating; costs nothing beyond a binary search
     * unless the packet overlaps bytes already received.
     *
     * @param packet holds the bytes from index {@code from} on
     */
    boolean agreesWithReceived(ByteBuffer packet, int from, int offset, int length) {
        int end = offset + length;
        for (int i = received.firstEndingAfter(offset); i < received.size() && received.start(i) < end; i++) {
            int overlapEnd = Math.min(end, received.end(i));
            for (int at = Math.max(offset, received.start(i)); at < overlapEnd; at++) {
                if (chunks[at / CHUNK_BYTES][at % CHUNK_BYTES] != packet.get(from + at - offset)) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Whether writing {@code [offset, offset + length)} would take a chunk not taken yet. */
    boolean wouldTakeMemory(int offset, int length) {
        for (int index = offset / CHUNK_BYTES; index <= (offset + length - 1) / CHUNK_BYTES; index++) {
            if (chunks[index] == null) {
                return true;
            }
        }
        return false;
    }

    /**
     * The whole message, in order, as its chunks ({@value #CHUNK_BYTES} bytes each but the last,
     * {@link MessageBytes}); call once, when {@link #complete()}: the caller owns them.
     */
    byte[][] parts() {
        return chunks;
    }
}
