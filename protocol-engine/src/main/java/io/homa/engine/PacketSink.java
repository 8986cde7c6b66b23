package io.homa.engine;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/** Where {@link HomaEngine#pollTransmit} puts packets: the I/O layer, or a test's recorder. */
@FunctionalInterface
public interface PacketSink {
    /**
     * Takes one packet for the wire.
     *
     * @param peer the destination endpoint (its UDP port is the Homa destination port)
     * @param packet the whole Homa packet, from its position to its limit. The engine reuses the
     *     buffer: it is valid only during this call, so copy what you keep.
     * @param priority the packet's priority, 0..7 (7 highest), for the IP TOS bits as
     *     {@code priority << 5}
     */
    void send(InetSocketAddress peer, ByteBuffer packet, int priority);

    /**
     * Optionally lends the memory a DATA packet is to be written in, so that the I/O layer need
     * not copy it (a 1 MiB message is then copied once in user space, from the message into the
     * datagram buffer). The engine writes the whole packet, exactly {@code lengthBytes} from the
     * returned buffer's position (big-endian, absolute writes; position and limit are left as they
     * are), then calls {@link #commit()} before anything else of this sink. Control packets always
     * come through {@link #send}.
     *
     * @param peer the destination endpoint, as for {@link #send}
     * @param lengthBytes the packet's length, header included
     * @param priority its priority, 0..7, as for {@link #send}
     * @return a buffer with at least {@code lengthBytes} from its position to its limit, or null
     *     (the default) to take the packet through {@link #send} instead
     */
    default ByteBuffer claim(InetSocketAddress peer, int lengthBytes, int priority) {
        return null;
    }

    /** The packet the last {@link #claim} lent memory for is written: it is this sink's now. */
    default void commit() {
        throw new IllegalStateException("commit() without a claim() that lent a buffer");
    }
}
