package io.homa.engine;

import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.function.Predicate;

/**
 * A client and a server engine joined by a link with a fixed one-way delay, in virtual time: every
 * packet arrives {@code oneWayDelayNs} after it left, unless {@link #drop} takes it. The server
 * answers each request with a response of {@link #responseBytes}.
 */
final class DelayedPair {
    static final InetSocketAddress CLIENT = new InetSocketAddress("10.0.0.1", 5000);
    static final InetSocketAddress SERVER = new InetSocketAddress("10.0.0.2", 4000);

    record Flight(long atNs, long sequence, InetSocketAddress from, InetSocketAddress to, byte[] bytes, int priority)
            implements Comparable<Flight> {
        @Override
        public int compareTo(Flight other) {
            int byTime = Long.compare(atNs, other.atNs);
            return byTime != 0 ? byTime : Long.compare(sequence, other.sequence);
        }

        int typeCode() {
            return Byte.toUnsignedInt(bytes[HomaHeader.TYPE_OFFSET]);
        }

        boolean is(PacketType type) {
            return typeCode() == type.code();
        }
    }

    final HomaEngine client;
    final HomaEngine server;
    long oneWayDelayNs;
    final PriorityQueue<Flight> inFlight = new PriorityQueue<>();
    /** Every packet either engine sent, in order. */
    final List<Flight> sent = new ArrayList<>();
    /** Packets {@link #drop} took. */
    final List<Flight> dropped = new ArrayList<>();
    Predicate<Flight> drop = flight -> false;
    int responseBytes = 100;
    long nowNs = 1_000_000_000L;
    long completed;
    long failed;
    private long sequence;

    DelayedPair(EngineConfig clientConfig, EngineConfig serverConfig, long oneWayDelayNs) {
        this.client = new HomaEngine(clientConfig, CLIENT.getPort(), 1000);
        this.server = new HomaEngine(serverConfig, SERVER.getPort(), 2000);
        this.oneWayDelayNs = oneWayDelayNs;
    }

    DelayedPair(EngineConfig config, long oneWayDelayNs) {
        this(config, config, oneWayDelayNs);
    }

    long call(int requestBytes) {
        return client.sendRequest(nowNs, SERVER, SendOptions.of(new byte[requestBytes]));
    }

    /** Runs for {@code maxNs} of virtual time, or until nothing is in flight and no timer waits. */
    void run(long maxNs) {
        long endNs = nowNs + maxNs;
        while (true) {
            pump(client, CLIENT);
            pump(server, SERVER);
            long next = Long.MAX_VALUE;
            if (!inFlight.isEmpty()) {
                next = inFlight.peek().atNs();
            }
            next = earlier(next, client.nextTimeoutNs());
            next = earlier(next, server.nextTimeoutNs());
            if (next == Long.MAX_VALUE || next - endNs > 0) {
                nowNs = endNs;
                return;
            }
            if (next - nowNs > 0) {
                nowNs = next;
            }
            Flight flight;
            while ((flight = inFlight.peek()) != null && flight.atNs() - nowNs <= 0) {
                inFlight.poll();
                (flight.to().equals(SERVER) ? server : client).onPacket(nowNs, flight.from(),
                        ByteBuffer.wrap(flight.bytes()));
            }
            client.onTimeout(nowNs);
            server.onTimeout(nowNs);
            events();
        }
    }

    /** Runs calls one after another, {@code gapNs} apart, each to its end. */
    void calls(int count, int requestBytes, long gapNs) {
        for (int i = 0; i < count; i++) {
            call(requestBytes);
            run(gapNs);
        }
    }

    private static long earlier(long a, long b) {
        if (a == Long.MAX_VALUE) {
            return b;
        }
        if (b == Long.MAX_VALUE) {
            return a;
        }
        return a - b <= 0 ? a : b;
    }

    private void events() {
        HomaEvent event;
        while ((event = server.pollEvent()) != null) {
            if (event instanceof HomaEvent.RequestReceived request) {
                server.sendResponse(nowNs, request.client(), request.rpcId(), SendOptions.of(new byte[responseBytes]));
            }
        }
        while ((event = client.pollEvent()) != null) {
            if (event instanceof HomaEvent.ResponseReceived) {
                completed++;
            } else if (event instanceof HomaEvent.RpcFailed) {
                failed++;
            }
        }
    }

    private void pump(HomaEngine engine, InetSocketAddress from) {
        while (engine.pollTransmit(nowNs, (to, packet, priority) -> {
            byte[] bytes = new byte[packet.remaining()];
            packet.get(packet.position(), bytes);
            Flight flight = new Flight(nowNs + oneWayDelayNs, sequence++, from, to, bytes, priority);
            sent.add(flight);
            if (drop.test(flight)) {
                dropped.add(flight);
            } else {
                inFlight.add(flight);
            }
        }, 64) > 0) {
            // drain
        }
    }

    /** Hands {@code bytes} to {@code to} as if {@code from} had sent them, now. */
    void inject(InetSocketAddress from, InetSocketAddress to, byte[] bytes) {
        (to.equals(SERVER) ? server : client).onPacket(nowNs, from, ByteBuffer.wrap(bytes));
    }

    long count(PacketType type) {
        return sent.stream().filter(f -> f.is(type)).count();
    }
}
