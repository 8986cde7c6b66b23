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
    private long nextRpcId;
    /** Draws the gap to the next rpcid; null: consecutive rpcids (+2), as tests and simulations want. */
    private final java.util.random.RandomGenerator rpcIdSteps;

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
     * Creates an engine whose rpcids grow by random even steps of 2..{@value #MAX_RPC_ID_STEP}
     * (issue 14: an off-path forger guessed rpcids that grew by 2 and answered live RPCs). The
     * bit budget: a clock-derived first rpcid leaves 2^{@value #RPC_ID_CLOCK_SHIFT} = 2,048 rpcid
     * units per microsecond of the client's life, and a step takes 257 on average, so a client may
     * start about 8 RPCs per microsecond, sustained over its whole run, before a restarted client
     * could reuse an rpcid of its predecessor that a server still remembers.
     *
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
        if (firstRpcId <= 0 || (firstRpcId & 1) != 0) {
            throw new IllegalArgumentException("firstRpcId must be positive and even, was " + firstRpcId);
        }
        this.config = config;
        this.nextRpcId = firstRpcId;
        this.rpcIdSteps = rpcIdSteps;
        EngineParams params = EngineParams.of(config);
        ControlQueue control = new ControlQueue(localPort, params.controlPriority(), params.maxAcksPerPacket());
        this.control = control;
        UnscheduledCutoffs cutoffs = new UnscheduledCutoffs(config.priorityLevels(), config.unscheduledBytes(),
                UnscheduledCutoffs.initialVersion(firstRpcId));
        this.grantScheduler = new GrantScheduler(config, params.rttBytes(), params.payloadBytes(),
                params.grantIncrementBytes());
        this.rpcs = new RpcTable(config, grantScheduler, timerQueue, counters);
        this.rpcs.localEpoch = serverEpoch(firstRpcId);
        this.atMostOnce = new AtMostOnce(params, rpcs, control, timerQueue, events, counters);
        byte[] tokenKey = new byte[32];
        if (rpcIdSteps != null) {
            new java.security.SecureRandom().nextBytes(tokenKey);
        } else {
            new java.util.SplittableRandom(firstRpcId).nextBytes(tokenKey);
        }
        this.validation = new AddressValidation(config.addressValidation(), params.payloadBytes(), tokenKey, counters);
        this.receiver = new Receiver(config, params, rpcs, grantScheduler, cutoffs, control, atMostOnce, timerQueue,
                events, counters);
        Pacer pacer = new Pacer(config.linkMbps(), config.maxNicQueueNs());
        this.sender = new Sender(config, params, localPort, rpcs, control, timerQueue, pacer, validation, counters);
        this.feedback = new SenderFeedback(params, rpcs, control, atMostOnce, validation, receiver, sender, counters);
        this.timers = new Timers(config, params, timerQueue, rpcs, receiver, atMostOnce, control, events, counters);
    }

    /**
     * The server epoch of an engine whose first rpcid is {@code firstRpcId}: 1..2^24-1, a hash of a
     * value unique to this endpoint's run (the clock-derived first rpcid), so that a restarted
     * server is a new incarnation to its clients with probability 1 - 1/16,777,215. Every packet
     * the engine sends as a server carries it ({@link io.homa.engine.wire.HomaHeader#EPOCH_OFFSET});
     * clients bind each RPC to the epoch its request reached, and a retransmission or RESEND
     * naming another epoch is answered RPC_UNKNOWN instead of running the request again (issue 14:
     * at-most-once across a restart).
     */
    static int serverEpoch(long firstRpcId) {
        long mixed = firstRpcId * 0xD6E8FEB86659FD93L;
        mixed ^= mixed >>> 32;
        mixed *= 0xD6E8FEB86659FD93L;
        mixed ^= mixed >>> 29;
        return (int) Long.remainderUnsigned(mixed, HomaHeader.MAX_EPOCH) + 1;
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
        return sendRequest(nowNs, server, new byte[][] {request});
    }

    /**
     * Client: starts an RPC whose request is {@code head} followed by {@code body}, sent as one
     * message without joining them (a framing header and a payload the caller already holds, for
     * example); otherwise as {@link #sendRequest(long, InetSocketAddress, byte[])}.
     *
     * @param nowNs current time
     * @param server the server endpoint
     * @param head the request's first bytes, {@code body} the rest; together 1..{@code maxMessageBytes}
     *     bytes; the engine keeps both arrays (do not modify them afterwards)
     * @return the RPC's rpcid (even)
     * @throws IllegalArgumentException if the request is empty or longer than maxMessageBytes
     */
    public long sendRequest(long nowNs, InetSocketAddress server, byte[] head, byte[] body) {
        return sendRequest(nowNs, server, new byte[][] {head, body});
    }

    /**
     * Client: starts an RPC whose request is its {@code parts} in order, sent as one message
     * without joining them ({@link MessageBytes}: a received message's chunks, or a header and a
     * payload's own parts); otherwise as {@link #sendRequest(long, InetSocketAddress, byte[])}.
     *
     * @param nowNs current time
     * @param server the server endpoint
     * @param parts the request's bytes, in order; together 1..{@code maxMessageBytes} bytes (a part
     *     may be empty); the engine keeps {@code parts} and its arrays (do not modify them afterwards)
     * @return the RPC's rpcid (even)
     * @throws IllegalArgumentException if the request is empty or longer than maxMessageBytes
     * @throws NullPointerException if {@code parts} or one of them is null
     */
    public long sendRequest(long nowNs, InetSocketAddress server, byte[][] parts) {
        checkMessageLength("request", parts);
        long rpcId = nextRpcId;
        nextRpcId += rpcIdSteps == null ? 2 : 2 + 2L * rpcIdSteps.nextInt(MAX_RPC_ID_STEP / 2);
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
        return sendResponse(nowNs, client, rpcId, new byte[][] {response});
    }

    /**
     * Server: answers a request with {@code head} followed by {@code body}, sent as one message
     * without joining them; otherwise as {@link #sendResponse(long, InetSocketAddress, long, byte[])}.
     *
     * @param nowNs current time
     * @param client the client endpoint from the event
     * @param rpcId the rpcid from the event
     * @param head the response's first bytes, {@code body} the rest; together 1..{@code maxMessageBytes}
     *     bytes; the engine keeps both arrays
     * @return {@code false} if the engine no longer knows the RPC, in which case the response is dropped
     * @throws IllegalArgumentException if the response is empty or longer than maxMessageBytes
     */
    public boolean sendResponse(long nowNs, InetSocketAddress client, long rpcId, byte[] head, byte[] body) {
        return sendResponse(nowNs, client, rpcId, new byte[][] {head, body});
    }

    /**
     * Server: answers a request with its {@code parts} in order, sent as one message without
     * joining them ({@link MessageBytes}); otherwise as
     * {@link #sendResponse(long, InetSocketAddress, long, byte[])}.
     *
     * @param nowNs current time
     * @param client the client endpoint from the event
     * @param rpcId the rpcid from the event
     * @param parts the response's bytes, in order; together 1..{@code maxMessageBytes} bytes (a
     *     part may be empty); the engine keeps {@code parts} and its arrays
     * @return {@code false} if the engine no longer knows the RPC, in which case the response is dropped
     * @throws IllegalArgumentException if the response is empty or longer than maxMessageBytes
     * @throws NullPointerException if {@code parts} or one of them is null
     */
    public boolean sendResponse(long nowNs, InetSocketAddress client, long rpcId, byte[][] parts) {
        checkMessageLength("response", parts);
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
        Peer peer = rpcs.knownPeer(server);
        if (peer == null || peer.clientRpcCount == 0) {
            return 0;
        }
        java.util.List<ClientRpc> unsent = new java.util.ArrayList<>();
        for (ClientRpc rpc : rpcs.clientRpcs()) {
            if (rpc.state() == ClientRpc.State.QUEUED && rpc.server == peer) {
                unsent.add(rpc);
            }
        }
        for (ClientRpc rpc : unsent) {
            rpcs.removeClientRpc(rpc);
            events.add(new HomaEvent.RpcFailed(rpc.rpcId, server, HomaEvent.Reason.SERVER_SHUTTING_DOWN,
                    "request to " + server + " not sent: the server is shutting down (it refused another request)"));
        }
        if (!unsent.isEmpty()) {
            receiver.scheduleGrants(nowNs);
        }
        return unsent.size();
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

    private void checkMessageLength(String what, byte[][] parts) {
        long lengthBytes = MessageBytes.lengthBytes(parts);
        if (lengthBytes < 1 || lengthBytes > config.maxMessageBytes()) {
            throw new IllegalArgumentException(what + " length must be between 1 and "
                    + config.maxMessageBytes() + " bytes (max-message-size), was " + lengthBytes);
        }
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
        // A client that echoes our address token proves it receives our packets: validate it (or
        // credit the packet) before it is handled, so that the GRANT or RESEND it carries is not
        // held back more than it must be.
        Peer client = fromServer ? null : rpcs.knownPeer(peer);
        if (client == null && !fromServer && validation.echoesToken(peer, token)) {
            client = rpcs.peerForInbound(peer, nowNs); // a proven address may open state (null: table full)
        }
        if (client != null) {
            validation.onPacketFromClient(client, token, length);
        }
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
        if (fromServer) {
            if (ours != null) {
                learnFromServer(ours, epoch, token, type == PacketType.RESEND);
            }
        } else {
            if (client == null && (client = rpcs.knownPeer(peer)) != null) {
                validation.onPacketFromClient(client, token, length); // the packet created the peer
            }
        }
        if (type != PacketType.DATA) {
            receiver.scheduleGrants(nowNs); // an ACK, RPC_UNKNOWN or failure may have ended an inbound message
        }
        counters.received(type);
        // Draft "Timeouts": a peer is alive when it speaks about an RPC we hold with it (before or
        // after this packet: a request's first DATA, an RPC the packet ended). Packets about
        // anything else (a forged BUSY, a stray RPC_UNKNOWN) refresh nobody's liveness.
        TimerEntry held = rpcs.held(peer, fromServer, rpcId);
        if (heldBefore || held != null) {
            rpcs.heardFrom(peer, nowNs);
        }
        if (held != null) {
            timers.onHeard(held);
        }
    }

    /**
     * A server spoke about one of our RPCs with its epoch and address token (0 from a peer that
     * knows only the draft): later requests to it name that epoch ({@link ClientRpc#epoch}), and
     * every packet to it echoes the token ({@link AddressValidation}). Only packets about an RPC we
     * hold count, so an off-path forger must know a live rpcid.
     * <ul>
     * <li>A RESEND answering first contact binds the RPC it names, and only that one, to its
     *     epoch: a forged one fails at most the RPC it names.</li>
     * <li>The server's epoch becomes known (later requests name it at once) when another packet
     *     about an RPC bound to that epoch (a GRANT, the response's DATA, CUTOFFS, BUSY) names the
     *     same epoch: the server confirms what the RESEND said. A stray or forged DATA, GRANT or
     *     BUSY naming another epoch plants nothing.</li>
     * <li>An epoch that contradicts the one known is not taken on its word (it may be forged): the
     *     server's epoch becomes unknown again, so the next requests ask for it (first contact)
     *     and learn the real one from the answer.</li>
     * </ul>
     */
    private void learnFromServer(ClientRpc rpc, int epoch, long token, boolean resend) {
        Peer peer = rpc.server;
        if (epoch != 0 && epoch != HomaHeader.EPOCH_ASK) {
            if (peer.serverEpoch == 0) {
                if (resend && !rpc.epochBound) {
                    rpc.epochBound = true; // its request is sent again naming the epoch
                    rpc.epoch = epoch;
                } else if (!resend && rpc.epochBound && rpc.epoch == epoch) {
                    peer.serverEpoch = epoch;
                }
            } else if (peer.serverEpoch != epoch) {
                peer.serverEpoch = 0;
            }
        }
        if (token != 0) {
            peer.echoToken = token;
        }
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
