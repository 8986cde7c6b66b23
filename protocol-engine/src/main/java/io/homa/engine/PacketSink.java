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
}
