package io.homa.engine;

import io.homa.engine.internal.wire.ControlHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.trace.Timetrace;
import io.homa.engine.wire.PacketType;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.random.RandomGenerator;

/**
 * A sans-IO Homa endpoint (draft-ousterhout-tsvwg-homa): the protocol state machine of one Homa
 * port, acting as client and server at once. Packets and time go in ({@link #onPacket},
 * {@link #onTimeout}, {@link #sendRequest}, {@link #sendResponse}); packets and events come out
 * ({@link #pollTransmit}, {@link #pollEvent}). It has no sockets, threads or clock of its own:
 * every call takes the caller's monotonic time in nanoseconds ({@code nowNs}). One instance must
 * be confined to one thread; no method blocks or locks. It only dispatches: each section of the
 * draft has a component of its own (see the package documentation).
 */
public final class HomaEngine {
    /** Highest priority level; control packets use it. */
    public static final int MAX_PRIORITY = 7;
    /** Bits of a clock-derived rpcid below its microseconds ({@link #clockDerivedFirstRpcId}). */
    public static final int RPC_ID_CLOCK_SHIFT = 11;
    /** Largest gap between consecutive rpcids with random steps: an even number in 2..{@value}. */
    public static final int MAX_RPC_ID_STEP = 512;
    /** Peers whose RTT a {@link #countersSnapshot()} reports, at most. */
    public static final int MAX_PEERS_REPORTED = 256;

    private final EngineConfig config;
    private final EndpointIdentity identity;
    private final ArrayDeque<HomaEvent> events = new ArrayDeque<>();
    private final EngineTrace trace;
    private final EngineCounters counters = new EngineCounters();
    private final TimerQueue timerQueue = new TimerQueue();
    private final RpcTable rpcs;
    private final Sender sender;
    private final SenderFeedback feedback;
    private final Receiver receiver;
    private final AtMostOnce atMostOnce;
    private final AddressValidation validation;
    private final Timers timers;
    private final RttCongestion congestion;
    private final ControlHeader commonRx = new ControlHeader();

    /**
     * Creates an engine whose rpcids grow by 2.
     *
     * @param config protocol settings
     * @param localPort this endpoint's Homa (= UDP) port, written as the source port of every packet
     * @param firstRpcId the first client rpcid (see {@link #clockDerivedFirstRpcId(long)}); it also
     *     sets this endpoint's server epoch and the version of its first unscheduled cutoffs, so
     *     that a restarted endpoint is not taken for its predecessor
     * @throws IllegalArgumentException if {@code localPort} is outside 0..65535 or
     *     {@code firstRpcId} is odd or not positive
     */
    public HomaEngine(EngineConfig config, int localPort, long firstRpcId) {
        this(config, localPort, firstRpcId, null);
    }

    /**
     * Creates an engine whose rpcids grow by random even steps of 2..{@value #MAX_RPC_ID_STEP}, so
     * that an off-path forger cannot guess live rpcids from one it saw. A step takes 257 of the
     * 2,048 rpcid units per microsecond of {@link #clockDerivedFirstRpcId}: about 8 RPCs per
     * microsecond over a client's run before a restarted one could reuse a remembered rpcid.
     *
     * @param config protocol settings
     * @param localPort as {@link #HomaEngine(EngineConfig, int, long)}
     * @param firstRpcId as {@link #HomaEngine(EngineConfig, int, long)}
     * @param rpcIdSteps source of the steps, seeded from a {@link java.security.SecureRandom} (its
     *     outputs are never sent, only their sums); null for steps of 2. It also chooses the key of
     *     the address tokens: from a SecureRandom with steps, from {@code firstRpcId} without (so
     *     that tests and simulations repeat)
     * @throws IllegalArgumentException as {@link #HomaEngine(EngineConfig, int, long)}
     */
    public HomaEngine(EngineConfig config, int localPort, long firstRpcId, RandomGenerator rpcIdSteps) {
        this(config, localPort, firstRpcId, rpcIdSteps, Timetrace.off());
    }

    /**
     * As {@link #HomaEngine(EngineConfig, int, long, RandomGenerator)}, recording into
     * {@code trace}: each message handed in, packet out and in, pacer hold and delivery.
     *
     * @param trace where events go; {@link Timetrace#off()} for none
     */
    public HomaEngine(EngineConfig config, int localPort, long firstRpcId, RandomGenerator rpcIdSteps,
            Timetrace trace) {
        this(config, localPort, firstRpcId, rpcIdSteps, trace, SharedIdentity.of(firstRpcId, rpcIdSteps));
    }

    /**
     * As {@link #HomaEngine(EngineConfig, int, long, RandomGenerator, Timetrace)}, for one of several
     * engines behind one address (one per event loop): the server epoch, the address-token key and
     * the first cutoffs' version come from {@code shared}, the same for every engine of the endpoint,
     * so that a client the kernel moves from one engine to another meets the same incarnation.
     *
     * @param shared the endpoint's {@link SharedIdentity}
     */
    public HomaEngine(EngineConfig config, int localPort, long firstRpcId, RandomGenerator rpcIdSteps,
            Timetrace trace, SharedIdentity shared) {
        if (localPort < 0 || localPort > 65535) {
            throw new IllegalArgumentException("localPort must be between 0 and 65535, was " + localPort);
        }
        this.identity = new EndpointIdentity(firstRpcId, rpcIdSteps, shared);
        this.config = config;
        this.trace = new EngineTrace(trace);
        EngineParams params = EngineParams.of(config);
        ControlQueue control = new ControlQueue(localPort, params.controlPriority(), params.maxAcksPerPacket());
        UnscheduledCutoffs cutoffs = new UnscheduledCutoffs(config.priorityLevels(), params.unscheduledBytes(),
                identity.firstCutoffVersion());
        GrantScheduler grantScheduler = new GrantScheduler(config, params.rttBytes(), params.payloadBytes(),
                params.grantIncrementBytes());
        this.rpcs = new RpcTable(config, grantScheduler, timerQueue, counters);
        this.rpcs.localEpoch = identity.serverEpoch();
        this.congestion = new RttCongestion(config, params, rpcs, control, cutoffs, counters);
        this.atMostOnce = new AtMostOnce(params, rpcs, control, timerQueue, events, counters);
        this.validation = new AddressValidation(config.addressValidation(), params.payloadBytes(),
                identity.tokenKey(), counters);
        this.receiver = new Receiver(config, params, rpcs, grantScheduler, cutoffs, control, atMostOnce, timerQueue,
                events, counters, this.trace, congestion);
        Pacer pacer = new Pacer(config.linkMbps(), Pacer.bucketNs(config));
        this.sender = new Sender(config, params, localPort, rpcs, control, timerQueue, pacer, validation, counters,
                this.trace, congestion);
        this.feedback = new SenderFeedback(params, rpcs, control, atMostOnce, validation, receiver, sender, counters,
                congestion);
        this.timers = new Timers(config, params, timerQueue, rpcs, receiver, atMostOnce, control, events, counters);
    }

    /**
     * A first rpcid derived from wall-clock time, so that a restarted client never reuses ids a
     * server may still remember: microseconds since the epoch shifted left by
     * {@value #RPC_ID_CLOCK_SHIFT} (52 bits of microseconds, enough until 2112, stay below 2^63),
     * even, with 2,048 rpcid units per microsecond before a restarted client could catch up with
     * its previous run (1,024 RPCs with steps of 2). A caller that wants it unpredictable within
     * its microsecond adds a random even offset below 2,048.
     *
     * @param epochMicros microseconds since 1970-01-01T00:00Z
     * @return a positive even rpcid
     */
    public static long clockDerivedFirstRpcId(long epochMicros) {
        return EndpointIdentity.clockDerivedFirstRpcId(epochMicros);
    }

    /**
     * Where this engine takes the full-size chunks of the messages it reassembles: a consumer done
     * with a delivered message's parts ({@link HomaEvent.RequestReceived#parts()},
     * {@link HomaEvent.ResponseReceived#parts()}) may give them back here, and must not touch them
     * afterwards. Thread-safe.
     */
    public ChunkPool chunkPool() {
        return receiver.chunkPool;
    }

    /** This engine's settings. */
    public EngineConfig config() {
        return config;
    }

    /**
     * Client: starts an RPC (draft "Sender": the first {@code unscheduledBytes} leave at once, the
     * rest as the server grants them) through later {@link #pollTransmit} calls. The RPC ends with
     * one {@link HomaEvent.ResponseReceived} or {@link HomaEvent.RpcFailed}, or with {@link #cancel}.
     *
     * @param nowNs current time, in nanoseconds of the caller's monotonic clock
     * @param server the server endpoint
     * @param request the request, 1..{@code maxMessageBytes} bytes; the engine keeps its parts
     * @return the RPC's rpcid (even)
     * @throws IllegalArgumentException if the request is empty or longer than maxMessageBytes
     */
    public long sendRequest(long nowNs, InetSocketAddress server, SendOptions request) {
        byte[][] parts = request.partsWithin(config.maxMessageBytes(), "request");
        ClientRpc rpc = rpcs.startClientRpc(identity.nextRpcId(), server, nowNs);
        trace.queued(nowNs, false, server, rpc.rpcId, parts);
        sender.request(rpc, parts, nowNs);
        return rpc.rpcId;
    }

    /**
     * Server: answers a request delivered by {@link HomaEvent.RequestReceived} (draft "Sender"); the
     * RPC then waits for the client's ACK (draft "At-most-once semantics").
     *
     * @param nowNs current time, in nanoseconds
     * @param client the client endpoint from the event
     * @param rpcId the rpcid from the event
     * @param response the response, 1..{@code maxMessageBytes} bytes; the engine keeps its parts
     * @return {@code false}, and the response is dropped, if the engine no longer holds the RPC in
     *     service (its client went away and its state was reclaimed, or it was aborted)
     * @throws IllegalArgumentException if the response is empty or longer than maxMessageBytes
     */
    public boolean sendResponse(long nowNs, InetSocketAddress client, long rpcId, SendOptions response) {
        byte[][] parts = response.partsWithin(config.maxMessageBytes(), "response");
        trace.queued(nowNs, true, client, rpcId, parts);
        return sender.respond(rpcs.serverRpc(client, rpcId), parts, nowNs);
    }

    /**
     * Server: gives up a request delivered by {@link HomaEvent.RequestReceived} without answering
     * it (the application failed to produce a response). The RPC is remembered as finished, so it
     * never executes again; the client's next RESEND is answered RPC_UNKNOWN (draft "At-most-once
     * semantics") and the client fails it with {@link HomaEvent.Reason#SERVER_LOST_RPC}.
     *
     * @param nowNs current time, in nanoseconds
     * @param client the client endpoint from the event
     * @param rpcId the rpcid from the event
     * @return {@code false} if the engine did not hold the RPC
     */
    public boolean abortRequest(long nowNs, InetSocketAddress client, long rpcId) {
        return atMostOnce.abort(client, rpcId);
    }

    /**
     * Server: refuses a request delivered by {@link HomaEvent.RequestReceived} unexecuted, as the
     * server is shutting down: as {@link #abortRequest}, and the client is told at once by an
     * RPC_UNKNOWN with reason {@link HomaHeader#REASON_SHUTTING_DOWN}, so that it fails the RPC with
     * {@link HomaEvent.Reason#SERVER_SHUTTING_DOWN} (a draft-only client: "server lost the RPC").
     *
     * @param nowNs current time, in nanoseconds
     * @param client the client endpoint from the event
     * @param rpcId the rpcid from the event
     * @return {@code false} if the engine did not hold the RPC in service
     */
    public boolean refuseRequest(long nowNs, InetSocketAddress client, long rpcId) {
        return atMostOnce.refuse(client, rpcId);
    }

    /**
     * Server: refuses a request delivered by {@link HomaEvent.RequestReceived} unexecuted, as the
     * server is overloaded (its application found itself full before handing the request to any
     * handler): as {@link #abortRequest}, and the client is told at once by an RPC_UNKNOWN with
     * reason {@link HomaHeader#REASON_OVERLOADED}, so that it fails this one RPC with
     * {@link HomaEvent.Reason#SERVER_OVERLOADED} and goes on sending its other RPCs here (a
     * draft-only client: "server lost the RPC"). Counted in
     * {@link EngineCounters#requestsRefusedOverloaded()}.
     *
     * @param nowNs current time, in nanoseconds
     * @param client the client endpoint from the event
     * @param rpcId the rpcid from the event
     * @return {@code false} if the engine did not hold the RPC in service
     */
    public boolean refuseOverloaded(long nowNs, InetSocketAddress client, long rpcId) {
        return atMostOnce.refuseOverloaded(client, rpcId);
    }

    /**
     * Server: while {@code refusing}, a request this engine holds no state for is refused on its
     * first DATA packet, before any state, buffer or grant is spent on it and long before it could
     * be delivered: the client is told at once as by {@link #refuseOverloaded}. RPCs already held
     * (receiving, in service, answering) are not affected, and neither are client RPCs. The
     * application sets it while it is full (requests in service or queued work over its bounds)
     * and clears it when it has room again; off initially.
     *
     * @param refusing whether new requests are refused as overloaded
     */
    public void refuseNewRequests(boolean refusing) {
        atMostOnce.refuseNewRequests(refusing);
    }

    /** Whether {@link #refuseNewRequests} is on. */
    public boolean isRefusingNewRequests() {
        return atMostOnce.refusingNewRequests();
    }

    /**
     * Server: from now on, answers at once a request from a client that knows no epoch of this
     * server yet (first contact, {@link HomaHeader#EPOCH_ASK}) with the refusal of
     * {@link #refuseRequest}: a draining server would only refuse it later, and may be gone by then.
     */
    public void refuseFirstContacts() {
        atMostOnce.refuseFirstContacts();
    }

    /**
     * Client: fails every RPC to {@code server} whose request has not left yet with
     * {@link HomaEvent.Reason#SERVER_SHUTTING_DOWN}, one event each: the server refused another
     * request because it is shutting down. None of them reached the server, so none ran.
     *
     * @param nowNs current time, in nanoseconds
     * @param server the server that refused
     * @return how many RPCs failed
     */
    public int failUnsentRequests(long nowNs, InetSocketAddress server) {
        int failed = atMostOnce.failUnsentRequests(server);
        if (failed != 0) {
            receiver.scheduleGrants(nowNs);
        }
        return failed;
    }

    /** Client: abandons an RPC (no event follows for it); unknown rpcids are ignored. */
    public void cancel(long nowNs, long rpcId) {
        if (rpcs.cancelClientRpc(rpcId)) {
            receiver.scheduleGrants(nowNs);
        }
    }

    /**
     * Server: holds complete requests instead of delivering them, while the application is not
     * ready to serve. A held request stays in service: its client's RESENDs are answered BUSY
     * (draft "BUSY"), so it neither times out nor is sent again. Client RPCs are not affected.
     */
    public void holdRequests() {
        receiver.holdRequests();
    }

    /**
     * Server: delivers every held request still alive as {@link HomaEvent.RequestReceived}, in
     * arrival order, and later ones as they complete; without {@link #holdRequests()}, nothing.
     */
    public void deliverRequests() {
        receiver.deliverRequests();
    }

    /** Complete requests held by {@link #holdRequests()}, waiting for {@link #deliverRequests()}. */
    public int heldRequests() {
        return receiver.heldRequests();
    }

    /**
     * Takes one received datagram payload. Malformed packets (short, unknown type, inconsistent
     * lengths or offsets) are dropped and counted in {@link EngineCounters#malformedPackets()};
     * this method never throws for bad input.
     *
     * @param nowNs current time, in nanoseconds
     * @param peer the datagram's source
     * @param packet the Homa packet, from its position to its limit; read during the call only
     */
    public void onPacket(long nowNs, InetSocketAddress peer, ByteBuffer packet) {
        int offset = packet.position();
        int length = packet.remaining();
        PacketType type = length < HomaHeader.COMMON_HEADER_LENGTH ? null : commonRx.wrap(packet, offset).type();
        if (type == null) {
            counters.malformedPackets++;
            return;
        }
        boolean fromServer = commonRx.fromServer();
        long rpcId = commonRx.clientRpcId();
        trace.received(nowNs, peer, packet, offset, length, type, fromServer, rpcId);
        TimerEntry heldEntry = rpcs.held(peer, fromServer, rpcId);
        ClientRpc ours = fromServer ? (ClientRpc) heldEntry : null; // still read if the packet ends it
        int epoch = commonRx.epoch();
        long token = commonRx.addressToken();
        Peer client = fromServer ? null : validation.beforeClientPacket(rpcs, peer, token, length, nowNs);
        boolean accepted = switch (type) {
            case DATA -> receiver.onData(nowNs, peer, packet, offset, length, fromServer, rpcId);
            case GRANT -> feedback.onGrant(nowNs, peer, packet, offset, length, fromServer, rpcId);
            case RESEND -> feedback.onResend(nowNs, peer, packet, offset, length, fromServer, rpcId);
            case CUTOFFS -> feedback.onCutoffs(peer, packet, offset, length, fromServer, rpcId);
            case ACK -> atMostOnce.onAck(peer, packet, offset, length, fromServer, rpcId);
            case RPC_UNKNOWN -> atMostOnce.onRpcUnknown(peer, fromServer, rpcId, commonRx.reason());
            case BUSY -> timers.onBusy(nowNs, peer, fromServer, rpcId);
            case NEED_ACK -> receiver.onNeedAck(nowNs, peer, fromServer, rpcId);
            case RTT_PROBE -> congestion.onProbe(peer, packet, offset, length, fromServer);
            case RTT_RESPS -> congestion.onResponse(nowNs, peer, packet, offset, length);
        };
        if (!accepted) {
            counters.malformedPackets++;
            return;
        }
        if (ours != null) {
            EpochLearning.onPacketFromServer(ours, epoch, token, type == PacketType.RESEND);
        } else if (!fromServer) {
            validation.afterClientPacket(rpcs, client, peer, token, length);
        }
        if (type != PacketType.DATA) {
            receiver.scheduleGrants(nowNs); // an ACK, RPC_UNKNOWN or failure may have ended an inbound message
        }
        counters.received(type);
        timers.onPacketAbout(nowNs, peer, fromServer, rpcId, heldEntry != null);
    }

    /**
     * When {@link #onTimeout} should next be called: the earliest deadline of any RPC or peer, or
     * the time the pacer lets DATA out again after {@link #pollTransmit} stopped for it.
     *
     * @return a time in the same clock as {@code nowNs}, or {@link Long#MAX_VALUE} if nothing waits
     */
    public long nextTimeoutNs() {
        return sender.earlierOf(timers.nextTimeoutNs());
    }

    /**
     * Runs what is due (draft "Timeouts"): RESENDs, NEED_ACKs, timeouts, reclaims, explicit ACKs,
     * forgetting idle peers; calling it early does nothing. Then call {@link #pollTransmit}.
     *
     * @param nowNs current time, in nanoseconds
     */
    public void onTimeout(long nowNs) {
        sender.onTimeout(nowNs);
        timers.onTimeout(nowNs);
    }

    /**
     * Hands packets to the wire: control packets, then DATA asked for again, then SRPT with a FIFO
     * share for the oldest (draft "Sender"). With {@link EngineConfig#linkMbps()} set, DATA of
     * messages longer than one packet goes as the pacer allows (draft "Pacing"); when it stops for
     * that, {@link #nextTimeoutNs()} says when to come back.
     *
     * @param nowNs current time, in nanoseconds
     * @param sink where packets go; each buffer is valid only during its call
     * @param maxPackets at most this many packets in this call, at least 1
     * @return the number of packets handed to the sink
     */
    public int pollTransmit(long nowNs, PacketSink sink, int maxPackets) {
        return sender.pollTransmit(nowNs, sink, maxPackets);
    }

    /** Whether packets wait to be sent, whether or not the pacer lets them go now. */
    public boolean hasTransmit() {
        return sender.hasTransmit();
    }

    /**
     * Whether {@link #pollTransmit} would hand out a packet at {@code nowNs}: something waits and
     * the pacer lets it go. When packets wait but this is false, {@link #nextTimeoutNs()} says when.
     */
    public boolean canTransmit(long nowNs) {
        return sender.canTransmit(nowNs);
    }

    /** The next event, or {@code null} if there is none. */
    public HomaEvent pollEvent() {
        return events.poll();
    }

    /** Bytes of memory held for inbound messages that are still arriving (not the declared lengths). */
    public long inboundBufferedBytes() {
        return rpcs.inboundBufferedBytes();
    }

    /** Bytes granted (or unscheduled) but not yet received, over all inbound messages (draft "Incoming"). */
    public long incomingBytes() {
        return receiver.incomingBytes();
    }

    /** Peers the engine remembers (RPCs in progress, or finished recently enough to matter). */
    public int knownPeers() {
        return rpcs.peerCount();
    }

    /**
     * A copy of the counters that no longer changes, with each peer's smoothed RTT
     * ({@link EngineCounters#peerSmoothedRttNs()}); take it on the engine's thread.
     */
    public EngineCounters countersSnapshot() {
        EngineCounters snapshot = counters.snapshot();
        snapshot.peerSmoothedRttNs = rpcs.smoothedRttNs(MAX_PEERS_REPORTED);
        return snapshot;
    }

    /** Live counters; read them on the engine's thread, or read a {@link #countersSnapshot()}. */
    public EngineCounters counters() {
        return counters;
    }

    /** Client RPCs in progress. */
    public int activeClientRpcs() {
        return rpcs.clientRpcCount();
    }

    /** This endpoint's server epoch ({@link SharedIdentity#serverEpoch()}). */
    public int serverEpoch() {
        return identity.serverEpoch();
    }

    /** Server RPCs whose state is held (from the first request DATA until ACK). */
    public int activeServerRpcs() {
        return rpcs.serverRpcCount();
    }

    /** What RTT-based congestion control knows of the peer at {@code address}, or null (for tests). */
    PeerCongestion peerCongestion(InetSocketAddress address) {
        Peer peer = rpcs.knownPeer(address);
        return peer == null ? null : peer.congestion;
    }

    /** The unscheduled bytes a message queued now for {@code address} would get, or -1 for an unknown peer (for tests). */
    int unscheduledBytesFor(InetSocketAddress address, boolean throttleEmpty) {
        Peer peer = rpcs.knownPeer(address);
        return peer == null ? -1 : congestion.unscheduledBytes(peer, throttleEmpty);
    }

    /** The timers, whose deadlines tests count. */
    Timers timers() {
        return timers;
    }

    /**
     * Ends every client RPC with {@link HomaEvent.Reason#SHUTDOWN} and drops all state.
     *
     * @param nowNs current time, in nanoseconds
     */
    public void close(long nowNs) {
        atMostOnce.failAll(HomaEvent.Reason.SHUTDOWN, "the Homa endpoint was closed");
        rpcs.clear();
        receiver.clear();
        sender.clear();
        timerQueue.clear();
    }
}
