package io.homa.engine;

import io.homa.engine.wire.ControlHeader;
import io.homa.engine.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * A sans-IO Homa endpoint (draft-ousterhout-tsvwg-homa): the protocol state machine of one Homa
 * port, acting as client and server at once. Packets and time go in ({@link #onPacket},
 * {@link #onTimeout}, {@link #sendRequest}, {@link #sendResponse}); packets and events come out
 * ({@link #pollTransmit}, {@link #pollEvent}). It has no sockets, threads or clock of its own:
 * every call takes the caller's monotonic time in nanoseconds. One instance must be confined to
 * one thread; no method blocks or locks.
 *
 * <p>This class only dispatches; each section of the draft has a component of its own:
 * <ul>
 *   <li>{@link Sender}: DATA out, SRPT and FIFO queues ("Sender"); {@link SenderFeedback}:
 *       GRANT, RESEND and CUTOFFS in ("Sender", "Retransmission").
 *   <li>{@link Pacer}: the token bucket at {@code linkMbps} ("Pacing").
 *   <li>{@link Receiver}: DATA in, reassembly, RESENDs for missing ranges, CUTOFFS out, NEED_ACK
 *       answered ("Receiver", "Retransmission", "CUTOFFS").
 *   <li>{@link GrantScheduler}: SRPT grants with overcommitment ("Flow control");
 *       {@link UnscheduledCutoffs}: unscheduled priority cutoffs ("Priorities").
 *   <li>{@link Timers} over a {@link TimerQueue}: RESENDs, timeouts, NEED_ACK, reclaim, ACK flush
 *       and idle peers, visiting only what is due ("Timeouts").
 *   <li>{@link AtMostOnce} with {@link FinishedRpcIds}: ACK, NEED_ACK, RPC_UNKNOWN ("At-most-once
 *       semantics"), server epochs and first contact across restarts.
 *   <li>{@link AddressValidation}: address tokens, and at most 3x what came from a client address
 *       until it echoes its token (the draft's "Security" section leaves this open; RFC 9000 §8.1).
 *   <li>{@link ControlQueue}: control packets, pooled and encoded; {@link RpcTable}: RPCs and
 *       peers; {@link ClientRpc} and {@link ServerRpc}: each RPC's explicit states.
 * </ul>
 */
public final class HomaEngine {
    /** Highest priority level; control packets use it. */
    public static final int MAX_PRIORITY = 7;

    private final EngineConfig config;
    private final EndpointIdentity identity;

    /**
     * Bits of a clock-derived rpcid below the microseconds ({@link #clockDerivedFirstRpcId}): 52
     * bits of microseconds since 1970 (enough until 2112) shifted left by 11 stay below 2^63.
     */
    public static final int RPC_ID_CLOCK_SHIFT = 11;
    /**
     * Largest gap between consecutive rpcids of an engine built with random steps: the gap is an
     * even number in 2..{@value}, uniformly, so each rpcid is 8 bits unpredictable from the one
     * before it.
     */
    public static final int MAX_RPC_ID_STEP = 512;
    private final ArrayDeque<HomaEvent> events = new ArrayDeque<>();
    private final EngineCounters counters = new EngineCounters();
    private final GrantScheduler grantScheduler;
    private final TimerQueue timerQueue = new TimerQueue();
    private final RpcTable rpcs;
    private final Sender sender;
    private final SenderFeedback feedback;
    private final Receiver receiver;
    private final AtMostOnce atMostOnce;
    private final AddressValidation validation;
    private final Timers timers;
    private final ControlQueue control;
    private final ControlHeader commonRx = new ControlHeader();

    /**
     * Creates an engine.
     *
     * @param config protocol settings
     * @param localPort this endpoint's Homa (= UDP) port, written as the source port of every packet
     * @param firstRpcId the first client rpcid (see {@link #clockDerivedFirstRpcId(long)}); it also
     *     seeds the version of this endpoint's first unscheduled cutoffs, so that a restarted
     *     endpoint does not reuse its predecessor's version
     * @throws IllegalArgumentException if {@code localPort} is outside 0..65535 or
     *     {@code firstRpcId} is odd or not positive
     */
    public HomaEngine(EngineConfig config, int localPort, long firstRpcId) {
        this(config, localPort, firstRpcId, null);
    }

    /**
     * Creates an engine whose rpcids grow by random even steps of 2..{@value #MAX_RPC_ID_STEP}, so
     * that an off-path forger cannot guess the rpcids of live RPCs from one it saw. The bit budget:
     * a clock-derived first rpcid leaves 2^{@value #RPC_ID_CLOCK_SHIFT} = 2,048 rpcid units per
     * microsecond of the client's life, and a step takes 257 on average, so a client may start
     * about 8 RPCs per microsecond, sustained over its whole run, before a restarted client could
     * reuse an rpcid of its predecessor that a server still remembers.
     *
     * @param config protocol settings
     * @param localPort this endpoint's Homa (= UDP) port, written as the source port of every packet
     * @param firstRpcId the first client rpcid, as {@link #HomaEngine(EngineConfig, int, long)}; it
     *     also sets this endpoint's server epoch (draft "at-most-once semantics" across a restart)
     * @param rpcIdSteps source of the steps; use one seeded from a {@link java.security.SecureRandom}
     *     (its outputs are never sent, only their sums); null for consecutive rpcids. It also
     *     chooses how the key of the address tokens ({@link AddressValidation}) is made: drawn from a
     *     {@link java.security.SecureRandom} with steps, derived from {@code firstRpcId} without (so
     *     that tests and simulations repeat)
     * @throws IllegalArgumentException as {@link #HomaEngine(EngineConfig, int, long)}
     */
    public HomaEngine(EngineConfig config, int localPort, long firstRpcId,
            java.util.random.RandomGenerator rpcIdSteps) {
        if (localPort < 0 || localPort > 65535) {
            throw new IllegalArgumentException("localPort must be between 0 and 65535, was " + localPort);
        }
        this.identity = new EndpointIdentity(firstRpcId, rpcIdSteps);
        this.config = config;
        EngineParams params = EngineParams.of(config);
        ControlQueue control = new ControlQueue(localPort, params.controlPriority(), params.maxAcksPerPacket());
        this.control = control;
        UnscheduledCutoffs cutoffs = new UnscheduledCutoffs(config.priorityLevels(), config.unscheduledBytes(),
                identity.firstCutoffVersion());
        this.grantScheduler = new GrantScheduler(config, params.rttBytes(), params.payloadBytes(),
                params.grantIncrementBytes());
        this.rpcs = new RpcTable(config, grantScheduler, timerQueue, counters);
        this.rpcs.localEpoch = identity.serverEpoch();
        this.atMostOnce = new AtMostOnce(params, rpcs, control, timerQueue, events, counters);
        this.validation = new AddressValidation(config.addressValidation(), params.payloadBytes(),
                identity.tokenKey(), counters);
        this.receiver = new Receiver(config, params, rpcs, grantScheduler, cutoffs, control, atMostOnce, timerQueue,
                events, counters);
        Pacer pacer = new Pacer(config.linkMbps(), config.maxNicQueueNs());
        this.sender = new Sender(config, params, localPort, rpcs, control, timerQueue, pacer, validation, counters);
        this.feedback = new SenderFeedback(params, rpcs, control, atMostOnce, validation, receiver, sender, counters);
        this.timers = new Timers(config, params, timerQueue, rpcs, receiver, atMostOnce, control, events, counters);
    }

    /**
     * A first rpcid derived from wall-clock time, so that a restarted client never reuses ids a
     * server may still remember (DESIGN.md "Wire format"): microseconds since the epoch shifted
     * left by {@value #RPC_ID_CLOCK_SHIFT}, which is even and leaves 2,048 rpcid units per
     * microsecond before a restarted client could catch up with its previous run (1,024 RPCs with
     * steps of 2, about 8 with random steps, see {@link #HomaEngine(EngineConfig, int, long,
     * java.util.random.RandomGenerator)}); a caller that wants the first rpcid unpredictable
     * within its microsecond adds a random even offset below 2,048.
     *
     * @param epochMicros microseconds since 1970-01-01T00:00Z
     */
    public static long clockDerivedFirstRpcId(long epochMicros) {
        long id = (epochMicros << RPC_ID_CLOCK_SHIFT) & Long.MAX_VALUE & ~1L;
        return id == 0 ? 2 : id;
    }

    /** The settings this engine runs with. */
    public EngineConfig config() {
        return config;
    }

    // ------------------------------------------------------------------------------------------
    // Application calls

    /**
     * Client: starts an RPC (draft "Sender": the request's first {@code unscheduledBytes} leave at
     * once, the rest as the server grants them). Packets go out through later {@link #pollTransmit}
     * calls; the RPC ends with exactly one {@link HomaEvent.ResponseReceived} or
     * {@link HomaEvent.RpcFailed} (or with {@link #cancel}).
     *
     * @param nowNs current time, in nanoseconds of the caller's monotonic clock
     * @param server the server endpoint
     * @param request the request, 1..{@code maxMessageBytes} bytes in its parts; the engine keeps
     *     the parts (do not modify them afterwards)
     * @return the RPC's rpcid (even)
     * @throws IllegalArgumentException if the request is empty or longer than maxMessageBytes
     */
    public long sendRequest(long nowNs, InetSocketAddress server, SendOptions request) {
        byte[][] parts = checkMessageLength("request", request);
        long rpcId = identity.nextRpcId();
        Peer peer = rpcs.peer(server, nowNs);
        peer.lastUsedNs = nowNs;
        ClientRpc rpc = new ClientRpc(rpcId, peer);
        rpc.lastHeardNs = nowNs;
        sender.request(rpc, parts);
        rpcs.addClientRpc(rpc);
        counters.rpcsStarted++;
        return rpcId;
    }

    /**
     * Server: answers a request delivered by {@link HomaEvent.RequestReceived} (draft "Sender"; the
     * RPC then waits for the client's ACK, draft "at-most-once semantics").
     *
     * @param nowNs current time, in nanoseconds of the caller's monotonic clock
     * @param client the client endpoint from the event
     * @param rpcId the rpcid from the event
     * @param response the response, 1..{@code maxMessageBytes} bytes in its parts; the engine keeps
     *     the parts (do not modify them afterwards)
     * @return {@code false} if the engine no longer knows the RPC in service (the client went away
     *     and its state was reclaimed, or the request was aborted), in which case the response is
     *     dropped
     * @throws IllegalArgumentException if the response is empty or longer than maxMessageBytes
     */
    public boolean sendResponse(long nowNs, InetSocketAddress client, long rpcId, SendOptions response) {
        byte[][] parts = checkMessageLength("response", response);
        ServerRpc rpc = rpcs.serverRpc(client, rpcId);
        if (rpc == null || rpc.state() != ServerRpc.State.IN_SERVICE) {
            return false;
        }
        sender.respond(rpc, parts);
        return true;
    }

    /**
     * Server: gives up a request delivered by {@link HomaEvent.RequestReceived} without answering
     * it (for example, the application failed to produce a response). The engine forgets the RPC
     * and remembers it as finished, so it never executes again; the client learns with its next
     * RESEND, which is answered RPC_UNKNOWN, and fails the RPC with
     * {@link HomaEvent.Reason#SERVER_LOST_RPC}.
     *
     * @param nowNs current time
     * @param client the client endpoint from the event
     * @param rpcId the rpcid from the event
     * @return {@code false} if the engine did not hold the RPC
     */
    public boolean abortRequest(long nowNs, InetSocketAddress client, long rpcId) {
        ServerRpc rpc = rpcs.serverRpc(client, rpcId);
        if (rpc == null) {
            return false;
        }
        atMostOnce.abort(rpc);
        return true;
    }

    /**
     * Server: refuses a request delivered by {@link HomaEvent.RequestReceived} without executing
     * it, because the server is shutting down. As {@link #abortRequest} the engine forgets the RPC
     * and remembers it as finished (a retransmission of the request never executes), and it tells
     * the client at once with an RPC_UNKNOWN whose reason byte says "shutting down"
     * ({@link io.homa.engine.wire.HomaHeader#REASON_SHUTTING_DOWN}, a reserved byte of the common
     * header): a client of this engine fails the RPC with
     * {@link HomaEvent.Reason#SERVER_SHUTTING_DOWN}, one that knows only the draft with "server
     * lost the RPC". If that packet is lost, the client's next RESEND gets a plain RPC_UNKNOWN.
     *
     * @param nowNs current time
     * @param client the client endpoint from the event
     * @param rpcId the rpcid from the event
     * @return {@code false} if the engine did not hold the RPC in service
     */
    public boolean refuseRequest(long nowNs, InetSocketAddress client, long rpcId) {
        ServerRpc rpc = rpcs.serverRpc(client, rpcId);
        if (rpc == null || rpc.state() != ServerRpc.State.IN_SERVICE) {
            return false;
        }
        atMostOnce.abort(rpc);
        atMostOnce.tellShuttingDown(client, rpcId);
        return true;
    }

    /**
     * Server: from now on, answers a request from a client that knows no epoch of this server yet
     * (first contact, {@link io.homa.engine.wire.HomaHeader#EPOCH_ASK}) with the refusal that
     * {@link #refuseRequest} sends, at once, instead of asking for it again: a draining server
     * would only refuse it later, and might be gone by then.
     */
    public void refuseFirstContacts() {
        atMostOnce.refuseFirstContacts();
    }

    /**
     * Client: fails every RPC to {@code server} whose request has not left yet with
     * {@link HomaEvent.Reason#SERVER_SHUTTING_DOWN}, one event each: the server refused another
     * request because it is shutting down, and it may be gone before these leave. None of them
     * reached the server, so none ran.
     *
     * @param nowNs current time
     * @param server the server that refused
     * @return how many RPCs failed
     */
    public int failUnsentRequests(long nowNs, InetSocketAddress server) {
        int failed = atMostOnce.failUnsentRequests(server);
        if (failed > 0) {
            receiver.scheduleGrants(nowNs);
        }
        return failed;
    }

    /** Client: abandons an RPC (no event follows for it); unknown rpcids are ignored. */
    public void cancel(long nowNs, long rpcId) {
        ClientRpc rpc = rpcs.clientRpc(rpcId);
        if (rpc != null) {
            rpcs.removeClientRpc(rpc);
            receiver.scheduleGrants(nowNs);
        }
    }

    /**
     * Server: holds complete requests instead of delivering them, for an application that is not
     * ready to serve yet (still starting). A held request stays in service: its client's RESENDs
     * are answered BUSY, so it neither times out nor is sent again. Client RPCs are not affected.
     */
    public void holdRequests() {
        receiver.holdRequests();
    }

    /**
     * Server: delivers every held request whose RPC is still alive as
     * {@link HomaEvent.RequestReceived}, in arrival order, and delivers later ones as they
     * complete. Without a prior {@link #holdRequests()} it does nothing.
     */
    public void deliverRequests() {
        receiver.deliverRequests();
    }

    /** Complete requests held by {@link #holdRequests()}, waiting for {@link #deliverRequests()}. */
    public int heldRequests() {
        return receiver.heldRequests();
    }

    private byte[][] checkMessageLength(String what, SendOptions message) {
        long lengthBytes = message.lengthBytes();
        if (lengthBytes < 1 || lengthBytes > config.maxMessageBytes()) {
            throw new IllegalArgumentException(what + " length must be between 1 and "
                    + config.maxMessageBytes() + " bytes (max-message-size), was " + lengthBytes);
        }
        return message.parts();
    }

    // ------------------------------------------------------------------------------------------
    // Packets in

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
        int offset = packet.position();
        int length = packet.remaining();
        if (length < HomaHeader.COMMON_HEADER_LENGTH) {
            counters.malformedPackets++;
            return;
        }
        commonRx.wrap(packet, offset);
        PacketType type = commonRx.type();
        if (type == null) {
            counters.malformedPackets++;
            return;
        }
        boolean fromServer = commonRx.fromServer();
        long rpcId = commonRx.clientRpcId();
        TimerEntry heldEntry = rpcs.held(peer, fromServer, rpcId);
        boolean heldBefore = heldEntry != null;
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
            case RPC_UNKNOWN -> {
                atMostOnce.onRpcUnknown(peer, fromServer, rpcId, commonRx.reason());
                yield true;
            }
            case BUSY -> {
                timers.onBusy(nowNs, peer, fromServer, rpcId);
                yield true;
            }
            case NEED_ACK -> {
                receiver.onNeedAck(nowNs, peer, fromServer, rpcId);
                yield true;
            }
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
        timers.onPacketAbout(nowNs, peer, fromServer, rpcId, heldBefore);
    }

    // ------------------------------------------------------------------------------------------
    // Time and packets out

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
     * Runs what is due at {@code nowNs}: RESENDs, NEED_ACKs, timeouts, reclaims, explicit ACKs,
     * forgetting idle peers. Only due deadlines are visited; calling it early does nothing. After
     * it, call {@link #pollTransmit}: packets may be waiting (or the pacer may have credit again).
     *
     * @param nowNs current time
     */
    public void onTimeout(long nowNs) {
        sender.onTimeout(nowNs);
        timers.onTimeout(nowNs);
    }

    /**
     * Hands packets to the wire: control packets first, then DATA (bytes asked for again, then
     * the message with the fewest remaining bytes: SRPT, with a FIFO share for the oldest). With
     * {@link EngineConfig#linkMbps()} set, DATA of messages longer than one Ethernet packet goes
     * only as the pacer's credit allows (draft "Pacing"); when it stops for that,
     * {@link #nextTimeoutNs()} says when to come back.
     *
     * @param nowNs current time
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

    // ------------------------------------------------------------------------------------------
    // Events, counters, lifecycle

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
        return grantScheduler.totalIncomingBytes();
    }

    /** Peers the engine remembers (RPCs in progress, or finished recently enough to matter). */
    public int knownPeers() {
        return rpcs.peerCount();
    }

    /** Peers whose RTT a {@link #countersSnapshot()} reports, at most. */
    public static final int MAX_PEERS_REPORTED = 256;

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

    /** Server RPCs whose state is held (from the first request DATA until ACK). */
    public int activeServerRpcs() {
        return rpcs.serverRpcCount();
    }

    /** Deadlines visited by {@link #onTimeout} so far, each due when visited (for tests). */
    long timerVisits() {
        return timers.visits();
    }

    /** Deadlines armed (for tests). */
    int timersArmed() {
        return timerQueue.size();
    }

    /**
     * Ends every client RPC with {@link HomaEvent.Reason#SHUTDOWN} and drops all state.
     *
     * @param nowNs current time
     */
    public void close(long nowNs) {
        for (ClientRpc rpc : rpcs.clientRpcs()) {
            events.add(new HomaEvent.RpcFailed(rpc.rpcId, rpc.server.address, HomaEvent.Reason.SHUTDOWN,
                    "the Homa endpoint was closed"));
        }
        rpcs.clear();
        receiver.clear();
        sender.clear();
        timerQueue.clear();
    }
}
