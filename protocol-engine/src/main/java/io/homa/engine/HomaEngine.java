package io.homa.engine;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * A sans-IO Homa endpoint (draft-ousterhout-tsvwg-homa): the protocol state machine of one Homa
 * port, acting as client and server at once. Packets and time go in ({@link #onPacket},
 * {@link #onTimeout}, {@link #sendRequest}, {@link #sendResponse}); packets and events come out
 * ({@link #pollTransmit}, {@link #pollEvent}). It has no sockets, threads or clock of its own:
 * every call takes the caller's monotonic time in nanoseconds. One instance must be confined to
 * one thread; no method blocks or locks.
 */
public final class HomaEngine {
    // STUB: the implementation lands in the next commit; signatures are final.

    /**
     * Creates an engine.
     *
     * @param config protocol settings
     * @param localPort this endpoint's Homa (= UDP) port, written as the source port of every packet
     * @param firstRpcId the first client rpcid; see {@link #clockDerivedFirstRpcId(long)}
     * @throws IllegalArgumentException if {@code localPort} is outside 0..65535 or
     *     {@code firstRpcId} is odd or not positive
     */
    public HomaEngine(EngineConfig config, int localPort, long firstRpcId) {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * A first rpcid derived from wall-clock time, so that a restarted client never reuses ids a
     * server may still remember (DESIGN.md "Wire format"): microseconds since the epoch shifted
     * left by 8, which is even and leaves room for 128 RPCs per microsecond before a restarted
     * client could catch up with its previous run.
     *
     * @param epochMicros microseconds since 1970-01-01T00:00Z
     */
    public static long clockDerivedFirstRpcId(long epochMicros) {
        throw new UnsupportedOperationException("stub");
    }

    /** The settings this engine runs with. */
    public EngineConfig config() {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * Client: starts an RPC. Packets go out through later {@link #pollTransmit} calls; the RPC
     * ends with exactly one {@link HomaEvent.ResponseReceived} or {@link HomaEvent.RpcFailed}
     * (or with {@link #cancel}).
     *
     * @param nowNs current time
     * @param server the server endpoint
     * @param request the request bytes, 1..{@code maxMessageBytes}; the engine keeps the array
     *     (do not modify it afterwards)
     * @return the RPC's rpcid (even)
     * @throws IllegalArgumentException if the request is empty or longer than maxMessageBytes
     */
    public long sendRequest(long nowNs, InetSocketAddress server, byte[] request) {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * Server: answers a request delivered by {@link HomaEvent.RequestReceived}.
     *
     * @param nowNs current time
     * @param client the client endpoint from the event
     * @param rpcId the rpcid from the event
     * @param response the response bytes, 1..{@code maxMessageBytes}; the engine keeps the array
     * @return {@code false} if the engine no longer knows the RPC (the client went away and its
     *     state was reclaimed), in which case the response is dropped
     * @throws IllegalArgumentException if the response is empty or longer than maxMessageBytes
     */
    public boolean sendResponse(long nowNs, InetSocketAddress client, long rpcId, byte[] response) {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * Client: abandons an RPC. No event follows for it. Unknown rpcids are ignored.
     *
     * @param nowNs current time
     * @param rpcId the RPC
     */
    public void cancel(long nowNs, long rpcId) {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * Takes one received datagram payload. Malformed packets (short, unknown type, inconsistent
     * lengths or offsets) are dropped and counted in {@link EngineCounters#malformedPackets()};
     * this method never throws for bad input.
     *
     * @param nowNs current time
     * @param peer the datagram's source
     * @param packet the Homa packet, from its position to its limit; read during the call only
     */
    public void onPacket(long nowNs, InetSocketAddress peer, ByteBuffer packet) {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * Runs timers due at {@code nowNs}: RESENDs, NEED_ACKs, timeouts, explicit ACKs.
     *
     * @param nowNs current time
     */
    public void onTimeout(long nowNs) {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * When {@link #onTimeout} should next be called.
     *
     * @return a time in the same clock as {@code nowNs}, or {@link Long#MAX_VALUE} if no timer is set
     */
    public long nextTimeoutNs() {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * Hands packets to the wire: control packets first, then DATA of the message with the fewest
     * remaining bytes (SRPT).
     *
     * @param nowNs current time
     * @param sink where packets go; each buffer is valid only during its call
     * @param maxPackets at most this many packets in this call (a pacing budget), at least 1
     * @return the number of packets handed to the sink
     */
    public int pollTransmit(long nowNs, PacketSink sink, int maxPackets) {
        throw new UnsupportedOperationException("stub");
    }

    /** Whether {@link #pollTransmit} has packets to hand out now. */
    public boolean hasTransmit() {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * The next event, or {@code null} if there is none.
     */
    public HomaEvent pollEvent() {
        throw new UnsupportedOperationException("stub");
    }

    /** Live counters; read them on the engine's thread, or read a {@link EngineCounters#snapshot()}. */
    public EngineCounters counters() {
        throw new UnsupportedOperationException("stub");
    }

    /** Client RPCs in progress. */
    public int activeClientRpcs() {
        throw new UnsupportedOperationException("stub");
    }

    /** Server RPCs whose state is held (from the first request DATA until ACK). */
    public int activeServerRpcs() {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * Ends every client RPC with {@link HomaEvent.Reason#SHUTDOWN} and drops all state.
     *
     * @param nowNs current time
     */
    public void close(long nowNs) {
        throw new UnsupportedOperationException("stub");
    }
}
