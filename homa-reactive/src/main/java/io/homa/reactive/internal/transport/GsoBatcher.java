package io.homa.reactive.internal.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.unix.SegmentedDatagramPacket;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.jspecify.annotations.Nullable;

/**
 * Turns the engine's packets into datagram writes, joining the packets of equal length that one
 * transmit pass has for one peer at one priority into one UDP GSO send (Linux {@code UDP_SEGMENT}, Netty's
 * {@link SegmentedDatagramPacket}): the kernel, or the NIC, cuts the buffer back into the same
 * datagrams, each a complete Homa packet, so a receiver sees ordinary packets (or, with
 * {@code UDP_GRO}, gets them back in one read). One system call and one trip through the stack
 * carry up to {@value #MAX_SEGMENTS} packets instead of one; at a 1500-byte MTU a 1 MiB message
 * is about 17 sends instead of 741.
 *
 * <p>Rules: a batch holds packets for one destination, at one priority, all of the first
 * packet's length except the last, which may be shorter and ends the batch (GSO's own rule). A
 * batch is at most {@code maxBatchBytes} long: the pacer's {@code max-nic-queue} at the link rate,
 * capped at the largest UDP payload, because a batch leaves as one burst and a long burst is
 * head-of-line blocking for the packets behind it (Linux Homa caps its GSO size for the same
 * reason). A packet longer than half of that goes alone. Up to {@value #MAX_OPEN_BATCHES} batches
 * are open at once, for different peers, so a pass that alternates between peers (a fan-out's
 * requests, round-robin over servers) still joins each peer's packets; they leave oldest first.
 * Each peer's packets keep their order: only its newest batch takes packets, and a packet that
 * cannot join it starts the next.
 *
 * <p>Short packets join too, whatever the MTU: on loopback (64 KB packets, so a long message's
 * packets go alone) the responses of a burst to one client, 100 B or 10 KB each, leave in one
 * send, and a receiver with {@code UDP_GRO} takes them in one read.
 *
 * <p>Turned off ({@code maxBatchBytes} 0, or {@link #disable()}), every packet is its own
 * datagram in a buffer of its own length, as without this class.
 *
 * <p>Confined to the channel's event loop.
 */
final class GsoBatcher {
    /** Linux's UDP_MAX_SEGMENTS on the kernels we support: segments per GSO send. */
    static final int MAX_SEGMENTS = 64;
    /** Batches open at once, for as many peers: a transmit pass that alternates between peers still joins their packets. */
    static final int MAX_OPEN_BATCHES = 8;
    /** The largest UDP payload over IPv4, bytes: a GSO send is one UDP datagram until it is cut. */
    static final int MAX_BATCH_BYTES = 65_507;

    /** Where finished datagrams go (the priority writer). */
    interface Output {
        void write(DatagramPacket datagram, int priority);
    }

    private final ByteBufAllocator allocator;
    private final Output output;
    private final int fullPacketBytes;
    private int maxBatchBytes;
    /** Batches being built, oldest first. */
    private final Batch[] open = new Batch[MAX_OPEN_BATCHES];
    private int openCount;
    /** The batch {@link #claim} lent memory of, and the packet's length; null and 0 when none is pending. */
    private @Nullable Batch claimed;
    private int claimedBytes;
    private long segmentedSends;
    private long segmentedPackets;

    /**
     * @param allocator where batch buffers come from (pooled direct buffers)
     * @param output takes each finished datagram
     * @param fullPacketBytes the length of a full DATA packet (the engine's MTU less the IP and UDP
     *     headers): a packet of that length starts a buffer of {@code maxBatchBytes}, since more
     *     of its message usually follows; any other packet starts a buffer of its own length
     * @param maxBatchBytes the longest GSO send, bytes; at most {@value #MAX_BATCH_BYTES}; 0 turns
     *     batching off, and packets longer than half of it always go alone
     */
    GsoBatcher(ByteBufAllocator allocator, Output output, int fullPacketBytes, int maxBatchBytes) {
        this.allocator = allocator;
        this.output = output;
        this.fullPacketBytes = fullPacketBytes;
        this.maxBatchBytes = Math.min(maxBatchBytes, MAX_BATCH_BYTES);
    }

    /**
     * The longest GSO send for a pacer: what the link carries in {@code maxNicQueueNs}, capped at
     * {@value #MAX_BATCH_BYTES} (no pacing: the cap).
     *
     * @param linkMbps the pacer's rate, Mbit/s, 0 for none
     * @param maxNicQueueNs the pacer's queue allowance, ns
     */
    static int maxBatchBytes(int linkMbps, long maxNicQueueNs) {
        if (linkMbps <= 0) {
            return MAX_BATCH_BYTES;
        }
        long bytes = linkMbps * maxNicQueueNs / 8_000L;
        return (int) Math.min(MAX_BATCH_BYTES, bytes);
    }

    /** Whether packets may be joined at all (each only with packets it fits twice into a send with). */
    boolean enabled() {
        return maxBatchBytes > 0;
    }

    /** Whether a packet of {@code lengthBytes} may share a send of up to {@code maxBatchBytes}: two must fit. */
    static boolean joins(int maxBatchBytes, int lengthBytes) {
        return maxBatchBytes >= 2 * lengthBytes;
    }

    /** The longest GSO send, bytes (0 once disabled). */
    int maxBatchBytes() {
        return maxBatchBytes;
    }

    /** Stops joining packets from now on (the kernel refused a GSO send); the current batch still goes. */
    void disable() {
        maxBatchBytes = 0;
    }

    /**
     * Takes one packet: joins it to the open batch of its peer or starts another.
     *
     * @param destination the peer
     * @param packet the packet from its position to its limit; copied, the position is kept
     * @param packetPriority its Homa priority, 0..7
     */
    void add(InetSocketAddress destination, ByteBuffer packet, int packetPriority) {
        int lengthBytes = packet.remaining();
        Batch batch = batchFor(destination, lengthBytes, packetPriority);
        int position = packet.position();
        batch.buffer.writeBytes(packet);
        packet.position(position);
        batch.added(lengthBytes);
    }

    /**
     * Lends the memory for one packet at the end of the batch it joins (or starts), to be written
     * there and then {@link #commit committed}: the packet is then never copied in user space.
     *
     * @return {@code lengthBytes} of the batch's buffer, from its position; big-endian; valid
     *     until {@link #commit} or any other call
     */
    ByteBuffer claim(InetSocketAddress destination, int lengthBytes, int packetPriority) {
        Batch batch = batchFor(destination, lengthBytes, packetPriority);
        ByteBuf buffer = batch.buffer;
        buffer.ensureWritable(lengthBytes);
        claimed = batch;
        claimedBytes = lengthBytes;
        return buffer.internalNioBuffer(buffer.writerIndex(), lengthBytes).order(ByteOrder.BIG_ENDIAN);
    }

    /** The packet {@link #claim} lent memory for is written: it joins its batch. */
    void commit() {
        Batch batch = claimed;
        int lengthBytes = claimedBytes;
        if (batch == null || batch.buffer == null) {
            throw new IllegalStateException("commit() without a claim()");
        }
        claimed = null;
        claimedBytes = 0;
        batch.buffer.writerIndex(batch.buffer.writerIndex() + lengthBytes);
        batch.added(lengthBytes);
    }

    /**
     * The batch a packet joins: its peer's newest open batch if the packet fits it, else a new one
     * (the oldest open batch is written out first when {@value #MAX_OPEN_BATCHES} are open). Only
     * the newest batch of a peer takes packets, so that each peer's packets keep their order.
     */
    private Batch batchFor(InetSocketAddress destination, int lengthBytes, int packetPriority) {
        for (int i = openCount - 1; i >= 0; i--) {
            Batch batch = open[i];
            if (batch.peer.equals(destination)) {
                if (batch.fits(lengthBytes, packetPriority)) {
                    return batch;
                }
                break;
            }
        }
        if (openCount == MAX_OPEN_BATCHES) {
            write(open[0]);
            System.arraycopy(open, 1, open, 0, openCount - 1);
            open[--openCount] = null;
        }
        boolean joinable = enabled() && joins(maxBatchBytes, lengthBytes);
        int capacity = !joinable ? lengthBytes
                : lengthBytes == fullPacketBytes ? maxBatchBytes : Math.min(maxBatchBytes, lengthBytes * MAX_SEGMENTS);
        Batch batch = new Batch(allocator.directBuffer(capacity, joinable ? maxBatchBytes : lengthBytes),
                destination, packetPriority, lengthBytes, !joinable);
        open[openCount++] = batch;
        return batch;
    }

    /** Hands every open batch to the output, oldest first, each as one datagram or one GSO send; call before flushing. */
    void finish() {
        for (int i = 0; i < openCount; i++) {
            write(open[i]);
            open[i] = null;
        }
        openCount = 0;
    }

    private void write(Batch batch) {
        ByteBuf buffer = batch.buffer;
        batch.buffer = null;
        if (batch.segments == 1) {
            output.write(new DatagramPacket(buffer, batch.peer), batch.priority);
        } else {
            segmentedSends++;
            segmentedPackets += batch.segments;
            output.write(new SegmentedDatagramPacket(buffer, batch.segmentBytes, batch.peer), batch.priority);
        }
    }

    /** Drops the batches being built (on close). */
    void release() {
        for (int i = 0; i < openCount; i++) {
            ByteBuf buffer = open[i].buffer;
            open[i].buffer = null;
            open[i] = null;
            if (buffer != null) {
                buffer.release();
            }
        }
        openCount = 0;
        claimed = null;
        claimedBytes = 0;
    }

    /** One send being built: packets for one peer at one priority, all of the first one's length but the last. */
    private final class Batch {
        @Nullable ByteBuf buffer;
        final InetSocketAddress peer;
        final int priority;
        final int segmentBytes;
        int segments;
        boolean ended;

        Batch(ByteBuf buffer, InetSocketAddress peer, int priority, int segmentBytes, boolean ended) {
            this.buffer = buffer;
            this.peer = peer;
            this.priority = priority;
            this.segmentBytes = segmentBytes;
            this.ended = ended;
        }

        boolean fits(int lengthBytes, int packetPriority) {
            return enabled() && !ended && packetPriority == priority && segments < MAX_SEGMENTS
                    && lengthBytes <= segmentBytes && buffer.readableBytes() + lengthBytes <= maxBatchBytes;
        }

        void added(int lengthBytes) {
            segments++;
            if (lengthBytes < segmentBytes) {
                ended = true;
            }
        }
    }

    /** GSO sends so far (batches of two packets or more). */
    long segmentedSends() {
        return segmentedSends;
    }

    /** Packets that left in GSO sends so far. */
    long segmentedPackets() {
        return segmentedPackets;
    }
}
