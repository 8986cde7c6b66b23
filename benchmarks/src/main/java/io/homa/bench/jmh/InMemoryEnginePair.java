package io.homa.bench.jmh;

import io.homa.engine.EngineConfig;
import io.homa.engine.HomaEngine;
import io.homa.engine.HomaEvent;
import io.homa.engine.PacketSink;
import io.homa.engine.SendOptions;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * A client and a server {@link HomaEngine} joined by an in-memory link without loss: each packet
 * one engine transmits is handed straight to the other's {@code onPacket} (zero-copy: the
 * receiver reads it during the sink call). The server echoes a fixed response. A virtual clock
 * advances {@link #NS_PER_RPC} per RPC, and both engines' timers run when due, so ACKs are
 * piggybacked and flushed as in a real run and the server's state stays bounded.
 */
final class InMemoryEnginePair {
    static final InetSocketAddress CLIENT = new InetSocketAddress("10.0.0.1", 5000);
    static final InetSocketAddress SERVER = new InetSocketAddress("10.0.0.2", 4000);
    /** Virtual time per RPC: 10 µs. */
    static final long NS_PER_RPC = 10_000;
    /** Give up an RPC after this many exchanges without progress (the link never loses). */
    private static final int MAX_ROUNDS = 100_000;

    private final HomaEngine client;
    private final HomaEngine server;
    private final byte[] request;
    private final byte[] response;
    private long nowNs = 1_000_000_000L;
    private long rpcsCompleted;

    private final PacketSink toServer = new PacketSink() {
        @Override
        public void send(InetSocketAddress peer, ByteBuffer packet, int priority) {
            server.onPacket(nowNs, CLIENT, packet);
        }
    };
    private final PacketSink toClient = new PacketSink() {
        @Override
        public void send(InetSocketAddress peer, ByteBuffer packet, int priority) {
            client.onPacket(nowNs, SERVER, packet);
        }
    };

    InMemoryEnginePair(EngineConfig config, int requestBytes, int responseBytes) {
        this.client = new HomaEngine(config, CLIENT.getPort(), 2);
        this.server = new HomaEngine(config, SERVER.getPort(), 2);
        this.request = new byte[requestBytes];
        this.response = new byte[responseBytes];
    }

    /**
     * Runs one RPC to completion.
     *
     * @return the response's length in bytes
     * @throws IllegalStateException if the RPC fails or makes no progress
     */
    int call() {
        long rpcId = client.sendRequest(nowNs, SERVER, SendOptions.of(request));
        for (int round = 0; round < MAX_ROUNDS; round++) {
            boolean moved = client.pollTransmit(nowNs, toServer, 64) > 0;
            HomaEvent event;
            while ((event = server.pollEvent()) != null) {
                if (!(event instanceof HomaEvent.RequestReceived received)
                        || !server.sendResponse(nowNs, received.client(), received.rpcId(), SendOptions.of(response))) {
                    throw new IllegalStateException("server: unexpected " + event);
                }
            }
            moved |= server.pollTransmit(nowNs, toClient, 64) > 0;
            while ((event = client.pollEvent()) != null) {
                if (event instanceof HomaEvent.ResponseReceived done && done.rpcId() == rpcId) {
                    rpcsCompleted++;
                    advance();
                    return done.message().length;
                }
                throw new IllegalStateException("client: unexpected " + event);
            }
            if (!moved) {
                throw new IllegalStateException("RPC " + rpcId + " stalled after " + round + " rounds");
            }
        }
        throw new IllegalStateException("RPC " + rpcId + " did not finish in " + MAX_ROUNDS + " rounds");
    }

    private void advance() {
        nowNs += NS_PER_RPC;
        if (nowNs - client.nextTimeoutNs() >= 0) {
            client.onTimeout(nowNs);
        }
        if (nowNs - server.nextTimeoutNs() >= 0) {
            server.onTimeout(nowNs);
        }
    }

    long rpcsCompleted() {
        return rpcsCompleted;
    }

    /** Fails unless the engines worked without loss recovery and hold bounded state. */
    void verify() {
        if (client.counters().resendsSent() != 0 || server.counters().resendsSent() != 0
                || client.counters().malformedPackets() != 0 || server.counters().malformedPackets() != 0) {
            throw new IllegalStateException("unexpected protocol events: client " + client.counters()
                    + ", server " + server.counters());
        }
        if (server.activeServerRpcs() > 2 || client.activeClientRpcs() != 0) {
            throw new IllegalStateException("state not released: " + server.activeServerRpcs()
                    + " server RPCs, " + client.activeClientRpcs() + " client RPCs");
        }
    }
}
