package io.homa.reactive.internal.transport;

import io.homa.engine.PacketSink;
import io.homa.reactive.internal.security.PacketSealer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's packets on their way to the socket: sealed when packet authentication is on
 * ({@link PacketSealer}), joined into GSO sends ({@link GsoBatcher}) and written with their
 * priority in the IP TOS byte ({@link PriorityTosWriter}). The engine driver decides when to
 * transmit; this is where packets go. Confined to the event loop.
 */
final class PacketOutput implements PacketSink {
    private static final Logger log = LoggerFactory.getLogger(PacketOutput.class);

    private final InetSocketAddress localAddress;
    private final PriorityTosWriter writer;
    private final GsoBatcher batcher;
    private final @Nullable PacketSealer sealer;

    /** @param sealer seals each packet, or null without packet authentication */
    PacketOutput(InetSocketAddress localAddress, PriorityTosWriter writer, GsoBatcher batcher,
            @Nullable PacketSealer sealer) {
        this.localAddress = localAddress;
        this.writer = writer;
        this.batcher = batcher;
        this.sealer = sealer;
    }

    /**
     * A control packet or sealed DATA (unsealed DATA is written in place, {@link #claim}): copied
     * into a pooled direct buffer, joined with the packets before it into one GSO send where it
     * can be ({@link GsoBatcher}), written at its priority when the batch ends.
     */
    @Override
    public void send(InetSocketAddress peer, ByteBuffer packet, int priority) {
        PacketSealer sealing = sealer;
        batcher.add(peer, sealing == null ? packet : sealing.seal(peer, packet), priority);
    }

    /** DATA is written straight into the datagram buffer, unless it is to be sealed. */
    @Override
    public ByteBuffer claim(InetSocketAddress peer, int lengthBytes, int priority) {
        return sealer == null ? batcher.claim(peer, lengthBytes, priority) : null;
    }

    @Override
    public void commit() {
        batcher.commit();
    }

    /** Ends a transmit pass that sent packets: the open batches are written and flushed. */
    void finishPass() {
        batcher.finish();
        writer.flush();
    }

    /** Whether packets wait for Netty's outbound queue to drain before the socket's TOS may change. */
    boolean hasHeld() {
        return writer.hasHeld();
    }

    /** Writes the held packets if Netty's outbound queue has drained; whether none is left held. */
    boolean drainHeld() {
        return writer.drainHeld();
    }

    /** Releases batches and held packets: the transport closes. */
    void release() {
        batcher.release();
        writer.releaseHeld();
    }

    /** GSO sends and the packets they carried so far. */
    long[] gsoCounters() {
        return new long[] {batcher.segmentedSends(), batcher.segmentedPackets()};
    }

    /** The writer that marks packets with their priority. */
    PriorityTosWriter writer() {
        return writer;
    }

    /**
     * A write or read failed (the packet is lost; RESEND recovers it). Once GSO sends have gone
     * out, any I/O error is taken as the kernel refusing them (it answers EINVAL or EIO when a
     * segment is longer than the path's MTU or the device cannot checksum it; the error does not
     * say which datagram failed), and sends go one datagram per packet from now on, said once at WARN.
     */
    void onIoError(Throwable cause) {
        if (batcher.enabled() && batcher.segmentedSends() > 0 && cause instanceof IOException) {
            batcher.disable();
            log.warn("Homa transport on {}: a UDP GSO send failed ({}); sending one datagram per packet from now on",
                    localAddress, cause.toString());
        } else {
            log.debug("Homa transport on {}: I/O error (ignored)", localAddress, cause);
        }
    }
}
