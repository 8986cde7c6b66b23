package io.homa.engine;

import io.homa.engine.wire.AckHeader;
import io.homa.engine.wire.ControlHeader;
import io.homa.engine.wire.CutoffsHeader;
import io.homa.engine.wire.DataHeader;
import io.homa.engine.wire.GrantHeader;
import io.homa.engine.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import io.homa.engine.wire.ResendHeader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * A sans-IO Homa endpoint (draft-ousterhout-tsvwg-homa): the protocol state machine of one Homa
 * port, acting as client and server at once. Packets and time go in ({@link #onPacket},
 * {@link #onTimeout}, {@link #sendRequest}, {@link #sendResponse}); packets and events come out
 * ({@link #pollTransmit}, {@link #pollEvent}). It has no sockets, threads or clock of its own:
 * every call takes the caller's monotonic time in nanoseconds. One instance must be confined to
 * one thread; no method blocks or locks.
 *
 * <p>What this version implements: messages of 1 byte to {@code maxMessageBytes} split into DATA
 * packets that fit the MTU; the first {@code unscheduledBytes} sent at once and the rest under
 * GRANTs, with the receiver keeping {@code unscheduledBytes} granted-but-not-received per message;
 * reassembly by offset in any order; sender SRPT (fewest remaining bytes first, control packets
 * before DATA); RESEND after {@code resendIntervalNs} of silence, BUSY, RPC_UNKNOWN, timeouts
 * after {@code timeoutResends} unanswered RESENDs; at-most-once state on the server until ACK
 * (piggybacked on DATA or explicit), NEED_ACK, and a bounded per-client record of finished
 * rpcids that stops late duplicates from executing again.
 */
public final class HomaEngine {
    /** Highest priority level; control packets use it. */
    public static final int MAX_PRIORITY = 7;

    private final EngineConfig config;
    private final int localPort;
    private final int payloadBytes;
    /** {@code unscheduledBytes} rounded up to whole DATA packets, so that packets stay full. */
    private final int unscheduledBytes;
    /** Unscheduled bytes of a response to an INCAST request: at least 1, so that it can start. */
    private final int incastUnscheduledBytes;
    private final int maxAcksPerPacket;
    private final long tickNs;
    private final long reclaimAfterNs;
    /** Silence from a peer, after {@code timeoutResends} RESENDs, that times out its RPCs. */
    private final long silenceTimeoutNs;
    /** Smallest increase of a message's granted offset worth a GRANT packet. */
    private final int grantIncrementBytes;

    private long nextRpcId;
    private long messageSequence;

    private final LongMap<ClientRpc> clientRpcs = new LongMap<>();
    private final Map<InetSocketAddress, Peer> peers = new HashMap<>();
    private int serverRpcCount;
    private int pendingAckTotal;
    /** Memory held by inbound messages still arriving (see {@link InboundMessage}). */
    private long inboundBufferedBytes;

    /** SRPT: the message with the fewest bytes never sent first, older first among equals. */
    private final PriorityQueue<OutboundMessage> sendQueue = new PriorityQueue<>(
            Comparator.comparingInt(OutboundMessage::remainingBytes).thenComparingLong(m -> m.sequence));
    /**
     * Messages with bytes to send again, oldest request first. They go before new DATA: the
     * receiver is waiting for them, and they are few (draft "Retransmission").
     */
    private final ArrayDeque<OutboundMessage> retransmitQueue = new ArrayDeque<>();
    private final ArrayDeque<PendingControl> controlQueue = new ArrayDeque<>();
    private final ArrayDeque<PendingControl> controlPool = new ArrayDeque<>();
    private final ArrayDeque<HomaEvent> events = new ArrayDeque<>();
    private final EngineCounters counters = new EngineCounters();

    private long nextTickNs = Long.MAX_VALUE;

    private final GrantScheduler grantScheduler;
    private final GrantScheduler.GrantSink grantSink = this::sendGrant;
    private final UnscheduledCutoffs cutoffs;
    /** Highest priority level in use ({@code priorityLevels - 1}): control packets. */
    private final int controlPriority;
    /** Every this many DATA packets, one goes to the oldest message instead of the shortest. */
    private final int fifoEveryPackets;
    private int dataSinceFifo;
    private OutboundMessage fifoPending;

    private final ByteBuffer txBuffer;
    private final DataHeader dataTx = new DataHeader();
    private final GrantHeader grantTx = new GrantHeader();
    private final ResendHeader resendTx = new ResendHeader();
    private final AckHeader ackTx = new AckHeader();
    private final CutoffsHeader cutoffsTx = new CutoffsHeader();
    private final ControlHeader controlTx = new ControlHeader();
    private final DataHeader dataRx = new DataHeader();
    private final GrantHeader grantRx = new GrantHeader();
    private final ResendHeader resendRx = new ResendHeader();
    private final CutoffsHeader cutoffsRx = new CutoffsHeader();
    private final AckHeader ackRx = new AckHeader();
    private final ControlHeader commonRx = new ControlHeader();

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
        if (localPort < 0 || localPort > 65535) {
            throw new IllegalArgumentException("localPort must be between 0 and 65535, was " + localPort);
        }
        if (firstRpcId <= 0 || (firstRpcId & 1) != 0) {
            throw new IllegalArgumentException("firstRpcId must be positive and even, was " + firstRpcId);
        }
        this.config = config;
        this.localPort = localPort;
        this.nextRpcId = firstRpcId;
        this.payloadBytes = config.maxDataPayloadBytes();
        this.unscheduledBytes = (int) roundUpToPackets(config.unscheduledBytes());
        this.incastUnscheduledBytes = Math.max(1, Math.min(unscheduledBytes, config.incastUnscheduledBytes()));
        this.maxAcksPerPacket = Math.min(64, (config.maxDatagramBytes() - AckHeader.HEADER_LENGTH) / AckHeader.ACK_LENGTH);
        this.tickNs = Math.max(250_000L, config.resendIntervalNs() / 4);
        // A server reclaims an RPC after twice the silence that makes a client give up, so that
        // the client has aborted by then (draft "At-most-once semantics").
        this.reclaimAfterNs = 2L * (config.timeoutResends() + 1) * config.resendIntervalNs();
        this.silenceTimeoutNs = (long) config.timeoutResends() * config.resendIntervalNs();
        this.grantIncrementBytes = Math.max(payloadBytes, unscheduledBytes / 8 / payloadBytes * payloadBytes);
        this.txBuffer = ByteBuffer.allocate(config.maxDatagramBytes());
        this.grantScheduler = new GrantScheduler(config, unscheduledBytes, payloadBytes, grantIncrementBytes);
        this.cutoffs = new UnscheduledCutoffs(config.priorityLevels(), config.unscheduledBytes());
        this.controlPriority = config.priorityLevels() - 1;
        this.fifoEveryPackets = config.fifoGrantFraction() > 0
                ? (int) Math.max(2, Math.round(1 / config.fifoGrantFraction())) : Integer.MAX_VALUE;
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
        long id = (epochMicros << 8) & Long.MAX_VALUE & ~1L;
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
        checkMessageLength("request", request);
        long rpcId = nextRpcId;
        nextRpcId += 2;
        Peer peer = peer(server, nowNs);
        peer.lastUsedNs = nowNs;
        ClientRpc rpc = new ClientRpc(rpcId, peer);
        rpc.request = new OutboundMessage(request, unscheduledBytes, messageSequence++, peer, rpcId, rpc, null);
        if (clientRpcs.size() >= config.incastThreshold()) {
            // Paper §3.6: past the threshold the response comes mostly scheduled, under our grants.
            rpc.request.flags |= DataHeader.FLAG_INCAST;
            counters.incastMarked++;
        }
        rpc.lastHeardNs = nowNs;
        clientRpcs.put(rpcId, rpc);
        peer.clientRpcCount++;
        counters.rpcsStarted++;
        enqueue(rpc.request);
        armTimer(nowNs);
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
        checkMessageLength("response", response);
        ServerRpc rpc = serverRpc(client, rpcId);
        if (rpc == null || rpc.state != ServerRpc.State.IN_SERVICE) {
            return false;
        }
        int responseUnscheduled = rpc.incast ? incastUnscheduledBytes : unscheduledBytes;
        rpc.response = new OutboundMessage(response, responseUnscheduled, messageSequence++, rpc.client,
                rpcId | HomaHeader.FROM_SERVER_BIT, null, rpc);
        rpc.state = ServerRpc.State.SENDING_RESPONSE;
        enqueue(rpc.response);
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
        ServerRpc rpc = serverRpc(client, rpcId);
        if (rpc == null) {
            return false;
        }
        releaseServerRpc(rpc);
        rpc.client.rememberFinished(rpcId);
        return true;
    }

    /**
     * Client: abandons an RPC. No event follows for it. Unknown rpcids are ignored.
     *
     * @param nowNs current time
     * @param rpcId the RPC
     */
    public void cancel(long nowNs, long rpcId) {
        ClientRpc rpc = clientRpcs.get(rpcId);
        if (rpc != null) {
            removeClientRpc(rpc);
            scheduleGrants();
        }
    }

    /** Ends a client RPC's state: its request stops, its partial response is freed. */
    private void removeClientRpc(ClientRpc rpc) {
        clientRpcs.remove(rpc.rpcId);
        rpc.server.clientRpcCount--;
        abandon(rpc.request);
        if (rpc.response != null && !rpc.response.complete()) {
            inboundBufferedBytes -= rpc.response.bufferedBytes();
            grantScheduler.ended(rpc.response);
        }
    }

    /** Ends a server RPC's state; a request still arriving is freed. */
    private void removeServerRpc(ServerRpc rpc) {
        if (rpc.client.serverRpcs.remove(rpc.rpcId) != null) {
            serverRpcCount--;
        }
        if (rpc.state == ServerRpc.State.RECEIVING_REQUEST) {
            inboundBufferedBytes -= rpc.request.bufferedBytes();
            grantScheduler.ended(rpc.request);
        }
        if (rpc.response != null) {
            abandon(rpc.response);
        }
    }

    /** Rounds a byte count up to a whole number of full DATA packets (capped at the message cap). */
    private long roundUpToPackets(long bytes) {
        return Math.min(EngineConfig.MAX_MESSAGE_BYTES_CAP, (bytes + payloadBytes - 1) / payloadBytes * payloadBytes);
    }

    private void checkMessageLength(String what, byte[] message) {
        if (message.length < 1 || message.length > config.maxMessageBytes()) {
            throw new IllegalArgumentException(what + " length must be between 1 and "
                    + config.maxMessageBytes() + " bytes (max-message-size), was " + message.length);
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
        boolean accepted;
        switch (type) {
            case DATA -> accepted = onData(nowNs, peer, packet, offset, length, fromServer, rpcId);
            case GRANT -> accepted = onGrant(nowNs, peer, packet, offset, length, fromServer, rpcId);
            case RESEND -> accepted = onResend(nowNs, peer, packet, offset, length, fromServer, rpcId);
            case RPC_UNKNOWN -> accepted = onRpcUnknown(nowNs, peer, fromServer, rpcId);
            case BUSY -> accepted = onBusy(nowNs, peer, fromServer, rpcId);
            case CUTOFFS -> accepted = onCutoffs(peer, packet, offset, length);
            case NEED_ACK -> accepted = onNeedAck(nowNs, peer, fromServer, rpcId);
            case ACK -> accepted = onAck(peer, packet, offset, length, fromServer, rpcId);
            default -> accepted = false;
        }
        if (accepted) {
            if (type != PacketType.DATA) {
                scheduleGrants(); // an ACK, RPC_UNKNOWN or failure may have ended an inbound message
            }
            counters.received(type);
            Peer known = peers.get(peer);
            if (known != null) {
                known.lastHeardNs = nowNs;
                known.heardFrom = true;
            }
        } else {
            counters.malformedPackets++;
        }
    }

    private boolean onData(long nowNs, InetSocketAddress from, ByteBuffer packet, int offset, int length,
            boolean fromServer, long rpcId) {
        if (length < DataHeader.HEADER_LENGTH) {
            return false;
        }
        DataHeader data = dataRx;
        data.wrap(packet, offset);
        int messageLength = data.messageLength();
        int dataOffset = data.dataOffset();
        int dataBytes = length - DataHeader.HEADER_LENGTH;
        if (messageLength < 1 || messageLength > config.maxMessageBytes() || dataOffset < 0
                || (long) dataOffset + dataBytes > messageLength || rpcId == 0) {
            return false;
        }
        boolean accepted = fromServer
                ? onResponseData(nowNs, from, packet, offset, data, messageLength, dataOffset, dataBytes, rpcId)
                : onRequestData(nowNs, from, packet, offset, data, messageLength, dataOffset, dataBytes, rpcId);
        if (accepted) {
            checkCutoffVersion(from, data, fromServer ? rpcId : rpcId | HomaHeader.FROM_SERVER_BIT);
        }
        return accepted;
    }

    /**
     * The end of the bytes a sender may have sent without our GRANT: what its DATA says it sends
     * unscheduled, but never more than our own {@code unscheduledBytes}, so that a sender cannot
     * make us hold memory it was not given.
     */
    private int statedUnscheduledBytes(DataHeader data, int messageLength) {
        return Math.min(messageLength, Math.min(Math.max(0, data.incoming()), unscheduledBytes));
    }

    /** @return false if the packet is inconsistent (counted as malformed by the caller) */
    private boolean onRequestData(long nowNs, InetSocketAddress from, ByteBuffer packet, int offset, DataHeader data,
            int messageLength, int dataOffset, int dataBytes, long rpcId) {
        long ackRpcId = data.ackRpcId();
        Peer peer = peers.get(from);
        // One socket is one Homa port: the ack is about an RPC of this peer here, whatever port the
        // client wrote (behind a NAT or a port mapping it is not ours).
        if (ackRpcId != 0 && peer != null) {
            acknowledge(peer, ackRpcId & ~HomaHeader.FROM_SERVER_BIT);
        }
        ServerRpc rpc = peer == null ? null : peer.serverRpcs.get(rpcId);
        int stated = statedUnscheduledBytes(data, messageLength);
        if (rpc == null) {
            if (peer != null && peer.isFinished(rpcId)) {
                counters.duplicatePackets++;
                return true;
            }
            if (dataOffset + dataBytes > stated) {
                return false; // beyond anything we could have authorised
            }
            if (inboundBufferedBytes >= config.maxInboundBufferBytes()) {
                counters.droppedForBufferSpace++;
                return true;
            }
            if (peer == null) {
                peer = peer(from, nowNs);
            }
            peer.lastUsedNs = nowNs;
            rpc = new ServerRpc(rpcId, peer,
                    new InboundMessage(messageLength, stated, peer, rpcId | HomaHeader.FROM_SERVER_BIT));
            grantScheduler.added(rpc.request);
            cutoffs.record(messageLength);
            peer.serverRpcs.put(rpcId, rpc);
            serverRpcCount++;
            rpc.nextTimerNs = nowNs + config.resendIntervalNs();
            armTimer(nowNs);
        } else if (rpc.request.lengthBytes != messageLength) {
            if (rpc.state == ServerRpc.State.RECEIVING_REQUEST) {
                removeServerRpc(rpc); // not executed: forget the contradicting request
            }
            return false;
        }
        if (rpc.state != ServerRpc.State.RECEIVING_REQUEST) {
            heard(rpc, nowNs);
            counters.duplicatePackets++;
            return true;
        }
        InboundMessage request = rpc.request;
        if ((data.flags() & DataHeader.FLAG_INCAST) != 0) {
            rpc.incast = true;
        }
        grantScheduler.raised(request, stated);
        if (dataOffset + dataBytes > request.grantedOffset) {
            return false;
        }
        heard(rpc, nowNs);
        if (!receive(request, packet, offset, dataOffset, dataBytes)) {
            return true;
        }
        if (request.complete()) {
            rpc.state = ServerRpc.State.IN_SERVICE;
            counters.requestsDelivered++;
            inboundBufferedBytes -= request.bufferedBytes();
            grantScheduler.ended(request);
            events.add(new HomaEvent.RequestReceived(peer.address, rpcId, request.assemble()));
        }
        scheduleGrants();
        return true;
    }

    /** @return false if the packet is inconsistent (counted as malformed by the caller) */
    private boolean onResponseData(long nowNs, InetSocketAddress from, ByteBuffer packet, int offset,
            DataHeader data, int messageLength, int dataOffset, int dataBytes, long rpcId) {
        ClientRpc rpc = clientRpc(rpcId, from);
        if (rpc == null) {
            counters.duplicatePackets++;
            return true;
        }
        int stated = statedUnscheduledBytes(data, messageLength);
        if (rpc.response == null) {
            if (dataOffset + dataBytes > stated) {
                return false;
            }
            if (inboundBufferedBytes >= config.maxInboundBufferBytes()) {
                counters.droppedForBufferSpace++;
                return true;
            }
            rpc.response = new InboundMessage(messageLength, stated, rpc.server, rpcId);
            grantScheduler.added(rpc.response);
            cutoffs.record(messageLength);
        } else if (rpc.response.lengthBytes != messageLength) {
            removeClientRpc(rpc);
            events.add(new HomaEvent.RpcFailed(rpcId, rpc.server.address, HomaEvent.Reason.PROTOCOL_ERROR,
                    "response DATA from " + from + " says " + messageLength + " bytes, earlier DATA said "
                            + rpc.response.lengthBytes));
            return false;
        }
        InboundMessage response = rpc.response;
        grantScheduler.raised(response, stated);
        if (dataOffset + dataBytes > response.grantedOffset) {
            return false;
        }
        heard(rpc, nowNs);
        // The server only answers once it has the whole request: stop (re)sending it.
        rpc.request.clearRetransmits();
        if (!receive(response, packet, offset, dataOffset, dataBytes)) {
            return true;
        }
        if (response.complete()) {
            inboundBufferedBytes -= response.bufferedBytes();
            grantScheduler.ended(response);
            removeClientRpc(rpc);
            counters.rpcsCompleted++;
            rpc.server.addPendingAck(rpcId);
            pendingAckTotal++;
            armTimer(nowNs);
            events.add(new HomaEvent.ResponseReceived(rpcId, response.assemble()));
        }
        scheduleGrants();
        return true;
    }

    /**
     * The client RPC a packet from a server is about, or null: rpcids are ours, but only the
     * server we sent the request to may speak for it (it answers from the address we sent to).
     */
    /** The server RPC of {@code client}'s {@code rpcId}, or null: an RPC is (client, rpcid). */
    private ServerRpc serverRpc(InetSocketAddress client, long rpcId) {
        Peer peer = peers.get(client);
        return peer == null ? null : peer.serverRpcs.get(rpcId);
    }

    private ClientRpc clientRpc(long rpcId, InetSocketAddress from) {
        ClientRpc rpc = clientRpcs.get(rpcId);
        return rpc != null && rpc.server.address.equals(from) ? rpc : null;
    }

    /** Copies a DATA packet's bytes into the message; returns false (and counts) for a duplicate. */
    private boolean receive(InboundMessage message, ByteBuffer packet, int offset, int dataOffset, int dataBytes) {
        grantScheduler.beforeReceive(message);
        int added = message.received.add(dataOffset, dataOffset + dataBytes);
        grantScheduler.received(message, added);
        if (added == 0) {
            counters.duplicatePackets++;
            return false;
        }
        inboundBufferedBytes += message.write(packet, offset + DataHeader.HEADER_LENGTH, dataOffset, dataBytes);
        return true;
    }

    /** Runs the grant scheduler (draft "Flow control"); GRANTs go out with control packets. */
    private void scheduleGrants() {
        grantScheduler.schedule(cutoffs.scheduledLevels(), grantSink);
    }

    private void sendGrant(InboundMessage message, int offset, int priority) {
        PendingControl grant = control(PacketType.GRANT, message.peer.address, message.wireRpcId);
        grant.offset = offset;
        grant.priority = priority;
    }

    /** Draft "CUTOFFS": a sender using stale cutoffs for us gets the current ones, once per version. */
    private void checkCutoffVersion(InetSocketAddress from, DataHeader data, long wireRpcId) {
        int version = cutoffs.version();
        if (version == 0 || data.cutoffVersion() == version) {
            return;
        }
        Peer peer = peers.get(from);
        if (peer != null && peer.cutoffsSentVersion != version) {
            peer.cutoffsSentVersion = version;
            PendingControl control = control(PacketType.CUTOFFS, from, wireRpcId);
            control.cutoffs = cutoffs.cutoffs();
            control.offset = version;
        }
    }

    private boolean onGrant(long nowNs, InetSocketAddress from, ByteBuffer packet, int offset, int length,
            boolean fromServer, long rpcId) {
        if (length < GrantHeader.HEADER_LENGTH) {
            return false;
        }
        grantRx.wrap(packet, offset);
        int grantOffset = grantRx.grantOffset();
        int priority = grantRx.priority();
        if (grantOffset < 0 || priority > MAX_PRIORITY) {
            return false;
        }
        OutboundMessage message = outboundFor(from, fromServer, rpcId, nowNs);
        if (message != null) {
            message.grant(grantOffset, priority);
            if (grantRx.resendAll()) {
                message.retransmit(0, grantOffset);
            }
            enqueue(message);
        }
        return true;
    }

    /**
     * The outbound message a GRANT or RESEND from {@code from} refers to: our request when the
     * packet came from the server, our response when it came from the client. Marks the peer heard.
     */
    private OutboundMessage outboundFor(InetSocketAddress from, boolean fromServer, long rpcId, long nowNs) {
        if (fromServer) {
            ClientRpc rpc = clientRpc(rpcId, from);
            if (rpc == null) {
                return null;
            }
            heard(rpc, nowNs);
            return rpc.request;
        }
        ServerRpc rpc = serverRpc(from, rpcId);
        if (rpc == null) {
            return null;
        }
        heard(rpc, nowNs);
        return rpc.response;
    }

    private boolean onResend(long nowNs, InetSocketAddress from, ByteBuffer packet, int offset, int length,
            boolean fromServer, long rpcId) {
        if (length < ResendHeader.HEADER_LENGTH) {
            return false;
        }
        resendRx.wrap(packet, offset);
        int resendOffset = resendRx.resendOffset();
        int resendLength = resendRx.length();
        if (resendOffset < 0 || resendLength < 0) {
            return false;
        }
        if (fromServer) {
            // The server wants (part of) our request.
            ClientRpc rpc = clientRpc(rpcId, from);
            if (rpc == null) {
                control(PacketType.RPC_UNKNOWN, from, rpcId);
                return true;
            }
            heard(rpc, nowNs);
            if (!rpc.request.retransmit(resendOffset, resendLength)) {
                // Not sent yet (shorter messages go first): tell the server we are alive. The
                // draft's BUSY section says clients do not send BUSY, but its RESEND section allows
                // it for exactly this case (data held back for higher-priority transmissions).
                control(PacketType.BUSY, from, rpcId);
                counters.busySent++;
            }
            enqueue(rpc.request);
            return true;
        }
        // The client wants (part of) our response.
        Peer peer = peers.get(from);
        ServerRpc rpc = peer == null ? null : peer.serverRpcs.get(rpcId);
        if (rpc == null) {
            if (peer != null && peer.isFinished(rpcId)) {
                control(PacketType.RPC_UNKNOWN, from, rpcId | HomaHeader.FROM_SERVER_BIT);
            } else {
                // We never saw the request (all of it may have been lost): ask for its start.
                PendingControl resend = control(PacketType.RESEND, from, rpcId | HomaHeader.FROM_SERVER_BIT);
                resend.offset = 0;
                resend.length = unscheduledBytes;
                resend.priority = controlPriority;
                counters.resendsSent++;
            }
            return true;
        }
        heard(rpc, nowNs);
        if (rpc.response == null || !rpc.response.retransmit(resendOffset, resendLength)) {
            // Request incomplete, handler still running, or the bytes not sent yet: alive, not ready.
            control(PacketType.BUSY, from, rpcId | HomaHeader.FROM_SERVER_BIT);
            counters.busySent++;
        }
        if (rpc.response != null) {
            enqueue(rpc.response);
        }
        return true;
    }

    private boolean onRpcUnknown(long nowNs, InetSocketAddress from, boolean fromServer, long rpcId) {
        if (fromServer) {
            // The server has finished with (or given up) an RPC we still wait for: the response is
            // lost. Sending the request again could execute it twice, so the RPC fails instead.
            // (A server that never saw the request asks for it with RESEND, not RPC_UNKNOWN.)
            ClientRpc rpc = clientRpc(rpcId, from);
            if (rpc != null) {
                removeClientRpc(rpc);
                events.add(new HomaEvent.RpcFailed(rpcId, rpc.server.address, HomaEvent.Reason.SERVER_LOST_RPC,
                        "server " + rpc.server.address + " no longer knows the RPC (RPC_UNKNOWN)"));
            }
            return true;
        }
        // The client no longer knows an RPC we hold: it cannot want the response.
        ServerRpc rpc = serverRpc(from, rpcId);
        if (rpc != null) {
            releaseServerRpc(rpc);
        }
        return true;
    }

    private boolean onBusy(long nowNs, InetSocketAddress from, boolean fromServer, long rpcId) {
        if (fromServer) {
            ClientRpc rpc = clientRpc(rpcId, from);
            if (rpc != null) {
                heard(rpc, nowNs);
            }
        } else {
            ServerRpc rpc = serverRpc(from, rpcId);
            if (rpc != null) {
                heard(rpc, nowNs);
            }
        }
        return true;
    }

    private boolean onCutoffs(InetSocketAddress from, ByteBuffer packet, int offset, int length) {
        if (length < CutoffsHeader.HEADER_LENGTH) {
            return false;
        }
        cutoffsRx.wrap(packet, offset);
        int[] cutoffs = new int[CutoffsHeader.NUM_PRIORITIES];
        for (int i = 0; i < cutoffs.length; i++) {
            cutoffs[i] = cutoffsRx.cutoff(i);
        }
        Peer peer = peers.get(from);
        if (peer != null) {
            peer.cutoffs = cutoffs;
            peer.cutoffVersion = cutoffsRx.cutoffVersion();
        }
        return true;
    }

    private boolean onNeedAck(long nowNs, InetSocketAddress from, boolean fromServer, long rpcId) {
        if (!fromServer) {
            return true; // only servers send NEED_ACK; ignore
        }
        ClientRpc rpc = clientRpc(rpcId, from);
        if (rpc != null) {
            // Response incomplete: never ACK it, ask for what is missing instead.
            heard(rpc, nowNs);
            requestMissingResponse(rpc);
            return true;
        }
        // Complete or unknown: the server may forget it.
        PendingControl ack = control(PacketType.ACK, from, rpcId);
        ack.ackCount = 0;
        return true;
    }

    private boolean onAck(InetSocketAddress from, ByteBuffer packet, int offset, int length,
            boolean fromServer, long rpcId) {
        if (length < AckHeader.HEADER_LENGTH || fromServer) {
            return false;
        }
        ackRx.wrap(packet, offset);
        int numAcks = ackRx.numAcks();
        if (length < AckHeader.packetLength(numAcks)) {
            return false;
        }
        Peer peer = peers.get(from);
        if (peer == null) {
            return true;
        }
        // Ports in the packet are not checked: see onRequestData.
        acknowledge(peer, rpcId);
        for (int i = 0; i < numAcks; i++) {
            acknowledge(peer, ackRx.ackRpcId(i) & ~HomaHeader.FROM_SERVER_BIT);
        }
        return true;
    }

    /** The client says it has the response of {@code rpcId}: release the RPC's state. */
    private void acknowledge(Peer peer, long rpcId) {
        ServerRpc rpc = peer.serverRpcs.get(rpcId);
        if (rpc != null) {
            releaseServerRpc(rpc);
        } else {
            peer.rememberFinished(rpcId);
        }
    }

    private void releaseServerRpc(ServerRpc rpc) {
        removeServerRpc(rpc);
        if (rpc.state != ServerRpc.State.RECEIVING_REQUEST) {
            rpc.client.rememberFinished(rpc.rpcId);
        }
    }

    /**
     * Whether a silent client RPC waits for this endpoint rather than for its server: every byte
     * of the response we granted has arrived (the rest waits for our grant scheduler, however long
     * it serves other messages: draft "Retransmission", no RESEND for bytes not yet granted, and
     * so no timeout; the FIFO grant share grants it eventually, and then a dead server is found
     * out), or the server, which has answered about this RPC and spoke to us within the interval,
     * is waiting for more of a request we are still sending (its own RESENDs cover lost request
     * bytes).
     */
    private boolean waitingOnOurselves(ClientRpc rpc, long nowNs) {
        InboundMessage response = rpc.response;
        if (response != null) {
            return response.receivedBytes() >= response.grantedOffset && response.grantedOffset < response.lengthBytes;
        }
        return rpc.heardAbout && rpc.request.nextOffset < rpc.request.lengthBytes
                && nowNs - rpc.server.lastHeardNs < config.resendIntervalNs();
    }

    private void heard(ClientRpc rpc, long nowNs) {
        rpc.heardAbout = true;
        rpc.lastHeardNs = nowNs;
        rpc.resendsWithoutAnswer = 0;
        if (rpc.nextResendNs != Long.MAX_VALUE) {
            rpc.nextResendNs = nowNs + config.resendIntervalNs();
        }
    }

    private void heard(ServerRpc rpc, long nowNs) {
        rpc.lastHeardNs = nowNs;
        rpc.resendsWithoutAnswer = 0;
        if (rpc.state == ServerRpc.State.RECEIVING_REQUEST) {
            rpc.nextTimerNs = nowNs + config.resendIntervalNs();
        }
    }

    // ------------------------------------------------------------------------------------------
    // Timers

    /**
     * Runs timers due at {@code nowNs}: RESENDs, NEED_ACKs, timeouts, explicit ACKs.
     *
     * @param nowNs current time
     */
    public void onTimeout(long nowNs) {
        if (nextTickNs == Long.MAX_VALUE || nowNs - nextTickNs < 0) {
            return;
        }
        nextTickNs = nowNs + tickNs;
        List<ClientRpc> timedOut = null;
        for (ClientRpc rpc : clientRpcs.values()) {
            if (nowNs - rpc.nextResendNs < 0) {
                continue;
            }
            if (waitingOnOurselves(rpc, nowNs)) {
                rpc.resendsWithoutAnswer = 0;
                rpc.nextResendNs = nowNs + config.resendIntervalNs();
                continue;
            }
            if (rpc.resendsWithoutAnswer >= config.timeoutResends()
                    && nowNs - rpc.server.lastHeardNs >= silenceTimeoutNs) {
                // Draft "Timeouts": the peer answered none of our RESENDs. A peer that is busy
                // sending other messages to us is alive, and will get to this one.
                if (timedOut == null) {
                    timedOut = new ArrayList<>();
                }
                timedOut.add(rpc);
                continue;
            }
            requestMissingResponse(rpc);
            rpc.resendsWithoutAnswer++;
            rpc.nextResendNs = nowNs + config.resendIntervalNs();
        }
        if (timedOut != null) {
            for (ClientRpc rpc : timedOut) {
                removeClientRpc(rpc);
                counters.timeouts++;
                events.add(new HomaEvent.RpcFailed(rpc.rpcId, rpc.server.address, HomaEvent.Reason.TIMEOUT,
                        (!rpc.server.heardFrom ? "never a packet from " + rpc.server.address
                                : "no packet from " + rpc.server.address + " for "
                                        + (nowNs - rpc.server.lastHeardNs) / 1_000_000 + " ms")
                                + ", after " + rpc.resendsWithoutAnswer + " RESENDs"));
            }
        }
        Iterator<Peer> it = peers.values().iterator();
        while (it.hasNext()) {
            Peer peer = it.next();
            if (!peer.serverRpcs.isEmpty()) {
                serverTimers(peer, nowNs);
            }
            if (peer.pendingAckCount > 0) {
                flushAcks(peer);
            }
            if (peer.idle() && nowNs - Math.max(peer.lastHeardNs, peer.lastUsedNs) > config.peerIdleTimeoutNs()) {
                it.remove();
                counters.peersForgotten++;
            }
        }
        // Messages that ended here (timeouts, reclaims) freed incoming bytes for the others.
        scheduleGrants();
        if (clientRpcs.isEmpty() && serverRpcCount == 0 && pendingAckTotal == 0) {
            // Only idle peers left: look again when the first of them may be forgotten.
            nextTickNs = peers.isEmpty() ? Long.MAX_VALUE : nowNs + config.peerIdleTimeoutNs() / 4;
        }
    }

    private void serverTimers(Peer peer, long nowNs) {
        List<ServerRpc> reclaimed = null;
        for (ServerRpc rpc : peer.serverRpcs.values()) {
            // Draft "At-most-once": reclaim only after "no communication of any sort from the peer".
            boolean silentTooLong = nowNs - rpc.lastHeardNs > reclaimAfterNs && nowNs - peer.lastHeardNs > reclaimAfterNs;
            switch (rpc.state) {
                case RECEIVING_REQUEST -> {
                    if (nowNs - rpc.nextTimerNs < 0) {
                        break;
                    }
                    if (rpc.request.receivedBytes() >= rpc.request.grantedOffset
                            && nowNs - peer.lastHeardNs < silenceTimeoutNs) {
                        // Everything we granted has arrived: the rest waits for our own scheduler.
                        rpc.resendsWithoutAnswer = 0;
                        rpc.nextTimerNs = nowNs + config.resendIntervalNs();
                        break;
                    }
                    if (rpc.resendsWithoutAnswer >= config.timeoutResends()
                            && nowNs - peer.lastHeardNs >= silenceTimeoutNs) {
                        // The client went silent; never delivered to the application: safe to forget.
                        reclaimed = reclaim(reclaimed, rpc);
                        break;
                    }
                    requestMissing(rpc.request, peer.address, rpc.rpcId | HomaHeader.FROM_SERVER_BIT);
                    rpc.resendsWithoutAnswer++;
                    rpc.nextTimerNs = nowNs + config.resendIntervalNs();
                }
                case IN_SERVICE -> {
                    // The application holds the request; the client's RESENDs get BUSY.
                }
                case SENDING_RESPONSE, AWAITING_ACK -> {
                    if (silentTooLong && !(waitingForGrants(rpc) && nowNs - peer.lastHeardNs < config.peerIdleTimeoutNs())) {
                        // The client is gone (draft: the server MAY then reclaim the state). A
                        // response that has sent all it was granted waits for the client's grant
                        // scheduler, which may serve other messages (SRPT, max-incoming) for a
                        // long while: the receiver drives, so only a client silent for
                        // peer-idle-timeout is taken for gone. Reclaiming sooner made the client
                        // fail live RPCs with RPC_UNKNOWN under incast.
                        reclaimed = reclaim(reclaimed, rpc);
                        break;
                    }
                    if (rpc.state == ServerRpc.State.AWAITING_ACK && nowNs - rpc.nextTimerNs >= 0) {
                        if (rpc.resendsWithoutAnswer >= config.timeoutResends()) {
                            // timeoutResends NEED_ACKs and not a word about this RPC: give up. The
                            // rpcid is remembered as finished, so it never executes again.
                            reclaimed = reclaim(reclaimed, rpc);
                            break;
                        }
                        control(PacketType.NEED_ACK, peer.address, rpc.rpcId | HomaHeader.FROM_SERVER_BIT);
                        rpc.resendsWithoutAnswer++;
                        rpc.nextTimerNs = nowNs + config.resendIntervalNs();
                    }
                }
                default -> throw new IllegalStateException(rpc.state.toString());
            }
        }
        if (reclaimed != null) {
            for (ServerRpc rpc : reclaimed) {
                releaseServerRpc(rpc);
                counters.timeouts++;
            }
        }
    }

    /** Whether a response has sent every byte the client granted and waits for more grants. */
    private static boolean waitingForGrants(ServerRpc rpc) {
        OutboundMessage response = rpc.response;
        return rpc.state == ServerRpc.State.SENDING_RESPONSE && response != null
                && response.nextOffset >= response.grantedOffset && response.nextOffset < response.lengthBytes
                && !response.hasRetransmit();
    }

    private static List<ServerRpc> reclaim(List<ServerRpc> reclaimed, ServerRpc rpc) {
        List<ServerRpc> list = reclaimed == null ? new ArrayList<>() : reclaimed;
        list.add(rpc);
        return list;
    }

    /** Client: RESENDs for the missing parts of the response, or for its start if none arrived. */
    private void requestMissingResponse(ClientRpc rpc) {
        if (rpc.response == null) {
            PendingControl resend = control(PacketType.RESEND, rpc.server.address, rpc.rpcId);
            resend.offset = 0;
            // An INCAST request's response starts with only incastUnscheduledBytes: asking for more
            // would grant it, and every RESEND at once would make a new incast.
            resend.length = (rpc.request.flags & DataHeader.FLAG_INCAST) != 0 ? incastUnscheduledBytes : unscheduledBytes;
            resend.priority = controlPriority;
            counters.resendsSent++;
        } else {
            requestMissing(rpc.response, rpc.server.address, rpc.rpcId);
        }
    }

    /** RESEND for each gap below the granted offset (never for bytes not yet granted). */
    private void requestMissing(InboundMessage message, InetSocketAddress peer, long wireRpcId) {
        RangeSet received = message.received;
        int gapStart = 0;
        int sent = 0;
        for (int i = 0; i <= received.size() && sent < 8; i++) {
            int gapEnd = i < received.size() ? received.start(i) : message.grantedOffset;
            gapEnd = Math.min(gapEnd, message.grantedOffset);
            if (gapEnd > gapStart) {
                PendingControl resend = control(PacketType.RESEND, peer, wireRpcId);
                resend.offset = gapStart;
                resend.length = gapEnd - gapStart;
                resend.priority = controlPriority;
                counters.resendsSent++;
                sent++;
            }
            if (i < received.size()) {
                gapStart = received.end(i);
                if (gapStart >= message.grantedOffset) {
                    break;
                }
            }
        }
    }

    private void flushAcks(Peer peer) {
        while (peer.pendingAckCount > 0) {
            long first = peer.takePendingAck();
            pendingAckTotal--;
            PendingControl ack = control(PacketType.ACK, peer.address, first);
            int count = Math.min(peer.pendingAckCount, maxAcksPerPacket);
            if (ack.acks.length < count) {
                ack.acks = new long[maxAcksPerPacket];
            }
            for (int i = 0; i < count; i++) {
                ack.acks[i] = peer.takePendingAck();
            }
            pendingAckTotal -= count;
            ack.ackCount = count;
        }
    }

    /**
     * When {@link #onTimeout} should next be called.
     *
     * @return a time in the same clock as {@code nowNs}, or {@link Long#MAX_VALUE} if no timer is set
     */
    public long nextTimeoutNs() {
        return nextTickNs;
    }

    /** Makes sure the timer ticks within {@code tickNs}: there is RPC state to watch. */
    private void armTimer(long nowNs) {
        if (nextTickNs == Long.MAX_VALUE || nextTickNs - (nowNs + tickNs) > 0) {
            nextTickNs = nowNs + tickNs;
        }
    }

    // ------------------------------------------------------------------------------------------
    // Packets out

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
        int sent = 0;
        while (sent < maxPackets) {
            if (transmitNextControl(sink)) {
                sent++;
                continue;
            }
            OutboundMessage head = retransmitHead();
            if (head == null) {
                head = sendableHead();
                if (head != null && ++dataSinceFifo >= fifoEveryPackets) {
                    // Draft "Pacing": a small share for the oldest message, so that nothing starves.
                    dataSinceFifo = 0;
                    head = oldestSendable(head);
                }
            }
            if (head == null) {
                break;
            }
            transmitData(head, nowNs, sink);
            if (fifoPending != null) {
                enqueue(fifoPending);
                fifoPending = null;
            }
            sent++;
        }
        return sent;
    }

    /**
     * Hands out only the packets that may bypass the pacer: control packets, then DATA of the
     * SRPT head while that message is at most {@code maxUrgentMessageBytes} long. Short messages
     * and GRANTs then never wait for pacer credit behind a long message (Linux Homa's
     * {@code throttle_min_bytes}; draft "Pacing": a sender should not queue short messages behind
     * long ones in its NIC).
     *
     * @param nowNs current time
     * @param sink where packets go; each buffer is valid only during its call
     * @param maxUrgentMessageBytes messages up to this length (bytes) bypass the pacer; 0 lets only
     *     control packets through
     * @param maxPackets at most this many packets in this call
     * @return the number of packets handed to the sink
     */
    public int pollUrgentTransmit(long nowNs, PacketSink sink, int maxUrgentMessageBytes, int maxPackets) {
        int sent = 0;
        while (sent < maxPackets) {
            if (transmitNextControl(sink)) {
                sent++;
                continue;
            }
            OutboundMessage head = sendableHead();
            if (head == null || head.lengthBytes > maxUrgentMessageBytes) {
                break;
            }
            transmitData(head, nowNs, sink);
            sent++;
        }
        return sent;
    }

    /** Hands the oldest queued control packet to the sink; false when none is queued. */
    private boolean transmitNextControl(PacketSink sink) {
        PendingControl control = controlQueue.poll();
        if (control == null) {
            return false;
        }
        transmitControl(control, sink);
        controlPool.add(control);
        return true;
    }

    /** Whether {@link #pollTransmit} has packets to hand out now. */
    public boolean hasTransmit() {
        return !controlQueue.isEmpty() || retransmitHead() != null || sendableHead() != null;
    }

    private OutboundMessage retransmitHead() {
        OutboundMessage head;
        while ((head = retransmitQueue.peek()) != null && (head.abandoned || !head.hasRetransmit())) {
            retransmitQueue.poll();
            head.retransmitQueued = false;
        }
        return head;
    }

    private OutboundMessage sendableHead() {
        OutboundMessage head;
        while ((head = sendQueue.peek()) != null && !head.hasNewSendable()) {
            sendQueue.poll();
            head.queued = false;
        }
        return head;
    }

    /** The oldest message with new bytes to send; if not the SRPT head, it leaves the heap to be re-added. */
    private OutboundMessage oldestSendable(OutboundMessage head) {
        OutboundMessage oldest = head;
        for (OutboundMessage message : sendQueue) {
            if (message.sequence < oldest.sequence && message.hasNewSendable()) {
                oldest = message;
            }
        }
        if (oldest != head) {
            // Its key shrinks as it sends: take it out and put it back so the heap stays ordered.
            sendQueue.remove(oldest);
            oldest.queued = false;
            fifoPending = oldest;
        }
        return oldest;
    }

    private void enqueue(OutboundMessage message) {
        if (!message.queued && message.hasNewSendable()) {
            message.queued = true;
            sendQueue.add(message);
        }
        if (!message.retransmitQueued && !message.abandoned && message.hasRetransmit()) {
            message.retransmitQueued = true;
            retransmitQueue.add(message);
        }
    }

    private static void abandon(OutboundMessage message) {
        message.abandoned = true;
    }

    private void transmitData(OutboundMessage message, long nowNs, PacketSink sink) {
        int dataOffset;
        int dataBytes;
        boolean retransmit = message.hasRetransmit();
        if (retransmit) {
            dataOffset = message.retransmitStart();
            dataBytes = Math.min(payloadBytes, message.retransmitEnd() - dataOffset);
            message.consumeRetransmit(dataBytes);
            counters.retransmittedDataPackets++;
        } else {
            dataOffset = message.nextOffset;
            dataBytes = Math.min(payloadBytes, message.grantedOffset - dataOffset);
            message.nextOffset += dataBytes;
        }
        Peer peer = message.peer;
        ByteBuffer buffer = txBuffer;
        DataHeader data = dataTx;
        data.wrap(buffer, 0);
        data.writeCommon(PacketType.DATA, localPort, peer.address.getPort(), message.wireRpcId)
                .messageLength(message.lengthBytes)
                .incoming(message.grantedOffset)
                .cutoffVersion(peer.cutoffVersion)
                .retransmitted(retransmit)
                .flags(message.flags)
                .dataOffset(dataOffset)
                .segmentOffset(dataOffset);
        data.doff(DataHeader.DOFF);
        if (message.clientRpc != null && peer.pendingAckCount > 0) {
            data.ackRpcId(peer.takePendingAck()).ackServerPort(peer.address.getPort());
            pendingAckTotal--;
        }
        buffer.put(DataHeader.HEADER_LENGTH, message.data, dataOffset, dataBytes);
        int priority = dataOffset < message.unscheduledBytes
                ? peer.unscheduledPriority(message.lengthBytes, config.priorityLevels())
                : message.grantPriority;
        emit(PacketType.DATA, peer.address, DataHeader.HEADER_LENGTH + dataBytes, priority, sink);

        ClientRpc clientRpc = message.clientRpc;
        if (clientRpc != null && clientRpc.nextResendNs == Long.MAX_VALUE) {
            // The silence that triggers RESENDs counts from the request's first packet.
            clientRpc.lastHeardNs = nowNs;
            clientRpc.nextResendNs = nowNs + config.resendIntervalNs();
        }
        ServerRpc serverRpc = message.serverRpc;
        if (serverRpc != null && serverRpc.state == ServerRpc.State.SENDING_RESPONSE && message.fullySent()) {
            serverRpc.state = ServerRpc.State.AWAITING_ACK;
            serverRpc.nextTimerNs = nowNs + config.resendIntervalNs();
        }
    }

    private void transmitControl(PendingControl control, PacketSink sink) {
        ByteBuffer buffer = txBuffer;
        int length;
        int port = control.peer.getPort();
        switch (control.type) {
            case GRANT -> {
                grantTx.wrap(buffer, 0).writeCommon(PacketType.GRANT, localPort, port, control.wireRpcId);
                grantTx.grantOffset(control.offset).priority(control.priority).resendAll(false);
                length = GrantHeader.HEADER_LENGTH;
            }
            case RESEND -> {
                resendTx.wrap(buffer, 0).writeCommon(PacketType.RESEND, localPort, port, control.wireRpcId);
                resendTx.resendOffset(control.offset).length(control.length).priority(control.priority);
                length = ResendHeader.HEADER_LENGTH;
            }
            case CUTOFFS -> {
                cutoffsTx.wrap(buffer, 0).writeCommon(PacketType.CUTOFFS, localPort, port, control.wireRpcId);
                for (int i = 0; i < CutoffsHeader.NUM_PRIORITIES; i++) {
                    cutoffsTx.cutoff(i, control.cutoffs[i]);
                }
                cutoffsTx.cutoffVersion(control.offset);
                length = CutoffsHeader.HEADER_LENGTH;
            }
            case ACK -> {
                ackTx.wrap(buffer, 0).writeCommon(PacketType.ACK, localPort, port, control.wireRpcId);
                ackTx.numAcks(control.ackCount);
                for (int i = 0; i < control.ackCount; i++) {
                    ackTx.ack(i, control.acks[i], port);
                }
                length = AckHeader.packetLength(control.ackCount);
            }
            default -> {
                controlTx.wrap(buffer, 0).writeCommon(control.type, localPort, port, control.wireRpcId);
                length = ControlHeader.HEADER_LENGTH;
            }
        }
        emit(control.type, control.peer, length, controlPriority, sink);
    }

    private void emit(PacketType type, InetSocketAddress peer, int length, int priority, PacketSink sink) {
        ByteBuffer buffer = txBuffer;
        buffer.limit(length).position(0);
        sink.send(peer, buffer, priority);
        buffer.clear();
        counters.sent(type);
    }

    private PendingControl control(PacketType type, InetSocketAddress peer, long wireRpcId) {
        PendingControl control = controlPool.poll();
        if (control == null) {
            control = new PendingControl();
        }
        control.type = type;
        control.peer = peer;
        control.wireRpcId = wireRpcId;
        control.offset = 0;
        control.length = 0;
        control.priority = controlPriority;
        control.ackCount = 0;
        controlQueue.add(control);
        return control;
    }

    private Peer peer(InetSocketAddress address, long nowNs) {
        Peer peer = peers.get(address);
        if (peer == null) {
            peer = new Peer(address, nowNs);
            peers.put(address, peer);
        }
        return peer;
    }


    // ------------------------------------------------------------------------------------------
    // Events, counters, lifecycle

    /**
     * The next event, or {@code null} if there is none.
     */
    public HomaEvent pollEvent() {
        return events.poll();
    }

    /** Bytes of memory held for inbound messages that are still arriving (not the declared lengths). */
    public long inboundBufferedBytes() {
        return inboundBufferedBytes;
    }

    /** Bytes granted (or unscheduled) but not yet received, over all inbound messages (draft "Incoming"). */
    public long incomingBytes() {
        return grantScheduler.totalIncomingBytes();
    }

    /** Peers the engine remembers (RPCs in progress, or finished recently enough to matter). */
    public int knownPeers() {
        return peers.size();
    }

    /** Live counters; read them on the engine's thread, or read a {@link EngineCounters#snapshot()}. */
    public EngineCounters counters() {
        return counters;
    }

    /** Client RPCs in progress. */
    public int activeClientRpcs() {
        return clientRpcs.size();
    }

    /** Server RPCs whose state is held (from the first request DATA until ACK). */
    public int activeServerRpcs() {
        return serverRpcCount;
    }

    /**
     * Ends every client RPC with {@link HomaEvent.Reason#SHUTDOWN} and drops all state.
     *
     * @param nowNs current time
     */
    public void close(long nowNs) {
        for (ClientRpc rpc : clientRpcs.values()) {
            events.add(new HomaEvent.RpcFailed(rpc.rpcId, rpc.server.address, HomaEvent.Reason.SHUTDOWN,
                    "the Homa endpoint was closed"));
        }
        clientRpcs.clear();
        peers.clear();
        sendQueue.clear();
        retransmitQueue.clear();
        controlQueue.clear();
        serverRpcCount = 0;
        pendingAckTotal = 0;
        inboundBufferedBytes = 0;
        nextTickNs = Long.MAX_VALUE;
    }
}
