package io.homa.engine;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;

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

    /**
     * Collects and delivers (shuffled) until nothing is in flight, leaving events to the test: a
     * client's first request to the server goes through first contact (the server asks for it
     * again, naming its epoch) before the server has it.
     */
    void exchange(Random random) {
        for (int round = 0; round < 1_000 && collect() + inFlight.size() > 0; round++) {
            deliverShuffled(random);
        }
    }

    /**
     * First contact of a client that has just called {@code sendRequest} for a one-packet request:
     * its first DATA (naming no epoch) goes to the server, which answers with a RESEND naming its
     * epoch; the client's DATA that follows, naming it, is collected but not delivered.
     *
     * @return that DATA packet, the one the server will run
     */
    Packet firstContact() {
        collect();
        deliverShuffled(new Random(0)); // the asking DATA to the server
        collect();
        deliverShuffled(new Random(0)); // its RESEND to the client
        collect();
        return inFlight.stream().filter(p -> p.from().equals(CLIENT)
                && p.bytes()[io.homa.engine.internal.wire.HomaHeader.TYPE_OFFSET] == io.homa.engine.wire.PacketType.DATA.code())
                .findFirst().orElseThrow();
    }

    /**
     * Runs the client's RPC to its end, 1 µs per round of shuffled delivery (no timer fires): each
     * request the server receives goes to {@code server}, which answers it (or not).
     *
     * @return the client's response, or null if none came within {@code maxRounds}
     */
    HomaEvent.ResponseReceived runToResponse(Random random, int maxRounds, Consumer<HomaEvent.RequestReceived> server) {
        HomaEvent.ResponseReceived done = null;
        for (int round = 0; round < maxRounds && done == null; round++) {
            collect();
            deliverShuffled(random);
            nowNs += 1_000;
            HomaEvent event;
            while ((event = this.server.pollEvent()) != null) {
                server.accept((HomaEvent.RequestReceived) event);
            }
            while ((event = client.pollEvent()) != null) {
                done = (HomaEvent.ResponseReceived) event;
            }
        }
        return done;
    }

    /** Advances the clock and runs both engines' timers. */
    void advance(long ns) {
        nowNs += ns;
        client.onTimeout(nowNs);
        server.onTimeout(nowNs);
    }
}
