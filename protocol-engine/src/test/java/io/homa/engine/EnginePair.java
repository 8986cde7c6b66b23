package io.homa.engine;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Two engines on an in-memory link (client and server), with a virtual clock. Packets are
 * collected per step and delivered in an order the test chooses (shuffled, dropped, ...).
 */
final class EnginePair {
    static final InetSocketAddress CLIENT = new InetSocketAddress("10.0.0.1", 5000);
    static final InetSocketAddress SERVER = new InetSocketAddress("10.0.0.2", 4000);

    /** One packet in flight. */
    record Packet(InetSocketAddress from, InetSocketAddress to, byte[] bytes, int priority) {}

    final HomaEngine client;
    final HomaEngine server;
    final List<Packet> inFlight = new ArrayList<>();
    long nowNs = 1_000_000_000L;

    EnginePair(EngineConfig config) {
        client = new HomaEngine(config, CLIENT.getPort(), 1000);
        server = new HomaEngine(config, SERVER.getPort(), 2000);
    }

    /** Moves every packet both engines want to send into {@link #inFlight}. */
    int collect() {
        int before = inFlight.size();
        while (client.pollTransmit(nowNs, (peer, packet, priority) -> capture(CLIENT, peer, packet, priority), 64) > 0) {
            // drain
        }
        while (server.pollTransmit(nowNs, (peer, packet, priority) -> capture(SERVER, peer, packet, priority), 64) > 0) {
            // drain
        }
        return inFlight.size() - before;
    }

    private void capture(InetSocketAddress from, InetSocketAddress to, ByteBuffer packet, int priority) {
        byte[] bytes = new byte[packet.remaining()];
        packet.get(packet.position(), bytes);
        inFlight.add(new Packet(from, to, bytes, priority));
    }

    /** Delivers one packet to its destination engine. */
    void deliver(Packet packet) {
        HomaEngine to = packet.to().equals(SERVER) ? server : client;
        to.onPacket(nowNs, packet.from(), ByteBuffer.wrap(packet.bytes()));
    }

    /** Delivers everything in flight in a random order. */
    void deliverShuffled(Random random) {
        List<Packet> batch = new ArrayList<>(inFlight);
        inFlight.clear();
        java.util.Collections.shuffle(batch, random);
        batch.forEach(this::deliver);
    }

    /** Advances the clock and runs both engines' timers. */
    void advance(long ns) {
        nowNs += ns;
        client.onTimeout(nowNs);
        server.onTimeout(nowNs);
    }
}
