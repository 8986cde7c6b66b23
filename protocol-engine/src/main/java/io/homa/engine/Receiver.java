package io.homa.engine;

import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * The receiving side of messages (draft "Receiver", "Flow control", "Retransmission", "CUTOFFS";
 * Linux Homa's {@code homa_incoming.c}): DATA in, reassembly by offset in any order, the grant
 * scheduler run after every change, RESENDs for the missing ranges below the granted offset,
 * CUTOFFS to a sender using stale ones, and NEED_ACK answered. A request that completes is
 * delivered as {@link HomaEvent.RequestReceived}; a response as {@link HomaEvent.ResponseReceived},
 * after which we owe the server an ACK.
 *
 * <p>Memory is charged as bytes arrive, never for a declared length; a new message is refused
 * while {@code maxInboundBufferBytes} are held, and a first packet may carry only bytes the
 * sender could have sent without our GRANT.
 */
final class Receiver {
    private final EngineConfig config;
    private final EngineParams params;
    private final RpcTable rpcs;
    private final GrantScheduler grantScheduler;
    private final GrantScheduler.GrantSink grantSink = this::sendGrant;
    private final UnscheduledCutoffs cutoffs;
    private final ControlQueue control;
    private final AtMostOnce atMostOnce;
    private final TimerQueue timers;
    private final ArrayDeque<HomaEvent> events;
    private final EngineCounters counters;
    private final EngineTrace trace;
    private final RttCongestion congestion;
    private final DataHeader dataRx = new DataHeader();
    /** Whether complete requests wait in {@link #held} instead of going to the application. */
    private boolean holdingRequests;
    /** The time of the {@link #scheduleGrants} pass in progress, for the GRANTs it sends. */
    private long grantsNowNs;
    private final ArrayDeque<ServerRpc> held = new ArrayDeque<>();
    /** Where full-size chunks of inbound messages come from ({@link HomaEngine#chunkPool()}). */
    final ChunkPool chunkPool = new ChunkPool(CHUNK_POOL_CAPACITY);

    /** Chunks the pool keeps: 4 MiB, a few long messages' worth, per engine. */
    static final int CHUNK_POOL_CAPACITY = 256;

    Receiver(EngineConfig config, EngineParams params, RpcTable rpcs, GrantScheduler grantScheduler,
            UnscheduledCutoffs cutoffs, ControlQueue control, AtMostOnce atMostOnce, TimerQueue timers,
            ArrayDeque<HomaEvent> events, EngineCounters counters, EngineTrace trace, RttCongestion congestion) {
        this.trace = trace;
        this.congestion = congestion;
        this.config = config;
        this.params = params;
        this.rpcs = rpcs;
        this.grantScheduler = grantScheduler;
        this.cutoffs = cutoffs;
        this.control = control;
        this.atMostOnce = atMostOnce;
        this.timers = timers;
        this.events = events;
        this.counters = counters;
    }

    /**
     * Takes a DATA packet.
     *
     * @return false if the packet is inconsistent (the caller counts it as malformed)
     */
    boolean onData(long nowNs, InetSocketAddress from, ByteBuffer packet, int offset, int length,
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
                || (long) dataOffset + dataBytes > messageLength || rpcId == 0 || dataBytes == 0) {
            return false; // a DATA without bytes says nothing (and would open an RPC for free)
        }
        boolean accepted = fromServer
                ? onResponseData(nowNs, from, packet, offset, data, messageLength, dataOffset, dataBytes, rpcId)
                : onRequestData(nowNs, from, packet, offset, data, messageLength, dataOffset, dataBytes, rpcId);
        if (accepted) {
            checkCutoffVersion(nowNs, rpcs.knownPeer(from), data, fromServer ? rpcId : rpcId | HomaHeader.FROM_SERVER_BIT);
        }
        return accepted;
    }

    /**
     * The end of the bytes a sender may have sent without our GRANT: what its DATA says it sends
     * unscheduled, but never more than our own unscheduled bytes, so that a sender cannot make us
     * hold memory it was not given.
     */
    private int statedUnscheduledBytes(DataHeader data, int messageLength, int dataOffset, int dataBytes) {
        int stated = Math.min(messageLength, Math.min(Math.max(0, data.incoming()), params.maxUnscheduledBytes()));
        int end = dataOffset + dataBytes;
        if (dataBytes >= params.payloadBytes() || end == messageLength) {
            return stated;
        }
        // A short packet that does not end the message claims only what it carries: an
        // empty or one-byte first packet declaring 1 MiB would otherwise hold a whole unscheduled
        // window of max-incoming. Senders fill every packet but a message's last (a peer with a
        // smaller MTU raises the window packet by packet).
        return Math.min(stated, end);
    }

    private boolean onRequestData(long nowNs, InetSocketAddress from, ByteBuffer packet, int offset, DataHeader data,
            int messageLength, int dataOffset, int dataBytes, long rpcId) {
        long ackRpcId = data.ackRpcId();
        Peer peer = rpcs.knownPeer(from);
        // One socket is one Homa port: the ack is about an RPC of this peer here, whatever port the
        // client wrote (behind a NAT or a port mapping it is not ours).
        if (ackRpcId != 0 && peer != null) {
            atMostOnce.acknowledge(peer, ackRpcId & ~HomaHeader.FROM_SERVER_BIT);
        }
        ServerRpc rpc = peer == null ? null : peer.serverRpcs.get(rpcId);
        int stated = statedUnscheduledBytes(data, messageLength, dataOffset, dataBytes);
        if (rpc == null) {
            if (peer != null && peer.finished.contains(rpcId)) {
                counters.duplicatePackets++;
                return true;
            }
            // A request naming an earlier incarnation may have run there (a first transmission too:
            // the network may have duplicated it and delayed the copy past the restart); one naming
            // no epoch of ours yet is asked for again, naming this one, before it may run.
            // An overloaded server refuses before the first contact's extra round trip: that
            // request would only be refused a round trip later.
            if (atMostOnce.refuseStaleEpoch(from, rpcId, data.epoch())
                    || atMostOnce.refuseNewRequest(from, rpcId, dataOffset)
                    || atMostOnce.answerFirstContact(from, rpcId, data.epoch(), dataOffset)) {
                return true;
            }
            if (dataOffset + dataBytes > stated) {
                return false; // beyond anything we could have authorised
            }
            if (rpcs.inboundBufferedBytes() >= config.maxInboundBufferBytes()) {
                counters.droppedForBufferSpace++;
                return true;
            }
            if (dataBytes < messageLength && !validated(peer) && rpcs.addressOverBudget(from)) {
                // A request that would stay half-open; one that arrives whole needs no budget.
                counters.droppedForAddressBudget++;
                return true;
            }
            if (peer == null) {
                peer = rpcs.peerForInbound(from, nowNs);
                if (peer == null) {
                    return true; // the peer table is full of busy peers: dropped and counted
                }
            }
            peer.lastUsedNs = nowNs;
            rpc = new ServerRpc(rpcId, peer,
                    new InboundMessage(messageLength, stated, peer, rpcId | HomaHeader.FROM_SERVER_BIT));
            grantScheduler.added(rpc.request);
            cutoffs.record(messageLength);
            rpcs.addServerRpc(rpc);
            rpc.nextTimerNs = nowNs + rpc.resendIntervalNs();
            rpc.lastRequestDataNs = nowNs;
            timers.armAtOrBefore(rpc, rpc.nextTimerNs);
        } else if (rpc.request.lengthBytes != messageLength) {
            if (rpc.state() == ServerRpc.State.RECEIVING_REQUEST) {
                rpcs.removeServerRpc(rpc); // not executed: forget the contradicting request
            }
            return false;
        }
        if (rpc.state() != ServerRpc.State.RECEIVING_REQUEST) {
            rpc.heard(nowNs);
            counters.duplicatePackets++;
            return true;
        }
        InboundMessage request = rpc.request;
        if ((data.flags() & DataHeader.FLAG_INCAST) != 0) {
            // The head the client names, never more than our own unscheduled bytes; none named: ours.
            int named = data.incastHeadBytes();
            rpc.incastHeadBytes = named == 0 ? params.incastUnscheduledBytes() : Math.min(named, params.unscheduledBytes());
        }
        grantScheduler.raised(request, stated);
        if (dataOffset + dataBytes > request.grantedOffset) {
            return false;
        }
        if (request.wouldTakeMemory(dataOffset, dataBytes) && !validated(peer)
                && rpcs.addressOverBudget(from)) {
            counters.droppedForAddressBudget++; // a RESEND asks for it again once memory is free
            return true;
        }
        rpc.heard(nowNs);
        rpc.lastRequestDataNs = nowNs;
        if (!request.agreesWithReceived(packet, offset + DataHeader.HEADER_LENGTH, dataOffset, dataBytes)) {
            // Not executed yet: forget the request; the client's packets or RESEND start it over.
            counters.conflictingDataPackets++;
            rpcs.removeServerRpc(rpc);
            return true;
        }
        sampleRtt(request, data, dataOffset, dataBytes, nowNs);
        if (!receive(request, packet, offset, dataOffset, dataBytes)) {
            return true;
        }
        if (request.complete()) {
            rpc.moveTo(ServerRpc.State.IN_SERVICE);
            rpcs.endInbound(request);
            if (holdingRequests) {
                rpc.heldRequest = request.parts();
                held.add(rpc);
            } else {
                deliver(rpc, request.parts(), nowNs);
            }
        }
        scheduleGrants(nowNs);
        return true;
    }

    /**
     * Whether the client's address is validated ({@link AddressValidation}): it receives our
     * packets, so no forger writes it as a source, and the per-address share of the inbound buffer,
     * which stops floods from forged ports of one IP address, does not hold it back (else a
     * flooder on the same IP address as real clients would take that address's share from them too).
     */
    private static boolean validated(Peer peer) {
        return peer != null && peer.addressValidated;
    }

    private boolean onResponseData(long nowNs, InetSocketAddress from, ByteBuffer packet, int offset,
            DataHeader data, int messageLength, int dataOffset, int dataBytes, long rpcId) {
        ClientRpc rpc = rpcs.clientRpc(rpcId, from);
        if (rpc == null || rpc.state() == ClientRpc.State.QUEUED) {
            counters.duplicatePackets++; // unknown, or about a request that has not left yet
            return true;
        }
        int stated = statedUnscheduledBytes(data, messageLength, dataOffset, dataBytes);
        if (rpc.response == null) {
            if (dataOffset + dataBytes > stated) {
                return false;
            }
            if (rpcs.inboundBufferedBytes() >= config.maxInboundBufferBytes()) {
                counters.droppedForBufferSpace++;
                return true;
            }
            if (rpc.requestSent) {
                // A pause of the server is part of its response time: always sampled.
                rpc.server.responseTime.sample(nowNs - rpc.requestSentNs);
            }
            rpc.response = new InboundMessage(messageLength, stated, rpc.server, rpcId);
            rpc.moveTo(ClientRpc.State.RECEIVING_RESPONSE);
            grantScheduler.added(rpc.response);
            cutoffs.record(messageLength);
        } else if (rpc.response.lengthBytes != messageLength) {
            rpcs.removeClientRpc(rpc);
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
        rpc.heard(nowNs);
        if (!response.agreesWithReceived(packet, offset + DataHeader.HEADER_LENGTH, dataOffset, dataBytes)) {
            counters.conflictingDataPackets++;
            rpcs.removeClientRpc(rpc);
            events.add(new HomaEvent.RpcFailed(rpcId, rpc.server.address, HomaEvent.Reason.PROTOCOL_ERROR,
                    "response DATA from " + from + " at offset " + dataOffset + " differs from bytes of the response"
                            + " already received there"));
            return true;
        }
        sampleRtt(response, data, dataOffset, dataBytes, nowNs);
        // The server only answers once it has the whole request: stop (re)sending it.
        rpc.request.clearRetransmits();
        if (!receive(response, packet, offset, dataOffset, dataBytes)) {
            return true;
        }
        if (response.complete()) {
            rpcs.endInbound(response);
            rpcs.removeClientRpc(rpc);
            counters.rpcsCompleted++;
            atMostOnce.owe(rpc.server, rpcId, nowNs);
            trace.delivered(nowNs, false, rpc.server.address, rpcId, response.lengthBytes);
            events.add(new HomaEvent.ResponseReceived(rpcId, response.parts()));
        }
        scheduleGrants(nowNs);
        return true;
    }

    private void deliver(ServerRpc rpc, byte[][] request, long nowNs) {
        counters.requestsDelivered++;
        trace.delivered(nowNs, true, rpc.client.address, rpc.rpcId, MessageBytes.lengthBytes(request));
        events.add(new HomaEvent.RequestReceived(rpc.client.address, rpc.rpcId, request));
    }

    /**
     * Holds complete requests instead of delivering them, until {@link #deliverRequests()}: they
     * stay in service, so their clients' RESENDs are answered BUSY and nothing times out.
     */
    void holdRequests() {
        holdingRequests = true;
    }

    /** Delivers the held requests still alive, in arrival order, and stops holding. */
    void deliverRequests() {
        holdingRequests = false;
        ServerRpc rpc;
        while ((rpc = held.poll()) != null) {
            byte[][] request = rpc.heldRequest;
            rpc.heldRequest = null;
            if (rpc.state() == ServerRpc.State.IN_SERVICE) {
                deliver(rpc, request, grantsNowNs); // the latest time this receiver was told
            }
        }
    }

    /** Forgets the held requests (the endpoint closes). */
    void clear() {
        held.clear();
    }

    int heldRequests() {
        return held.size();
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
        rpcs.addInboundBuffered(message, message.write(packet, offset + DataHeader.HEADER_LENGTH, dataOffset, dataBytes, chunkPool));
        return true;
    }

    /** Runs the grant scheduler (draft "Flow control"); GRANTs go out with control packets. */
    void scheduleGrants(long nowNs) {
        grantsNowNs = nowNs;
        grantScheduler.schedule(cutoffs.scheduledLevels(), grantSink);
    }

    /**
     * Sends a GRANT. When every byte authorised before it has arrived, the sender is waiting for
     * this GRANT, so the DATA it releases times a round trip ({@link RttEstimate}).
     */
    private void sendGrant(InboundMessage message, int offset, int priority) {
        if (message.rttProbeOffset < 0 && message.receivedBytes() >= message.grantSentOffset) {
            message.probeRtt(message.grantSentOffset, grantsNowNs);
        }
        message.grantSentOffset = offset;
        control.grant(message.peer.address, message.wireRpcId, offset, priority, congestion.ratioWire());
    }

    /** Folds the round trip this DATA completes, if any, into its sender's {@link RttEstimate}. */
    private void sampleRtt(InboundMessage message, DataHeader data, int dataOffset, int dataBytes, long nowNs) {
        long rttNs = message.rttSample(dataOffset, dataBytes, data.retransmitted(), nowNs);
        if (rttNs >= 0 && message.peer.sampleRtt(nowNs - rttNs, nowNs)) {
            counters.rttSamples++;
        }
    }

    /**
     * Draft "CUTOFFS": a sender whose DATA names another version of our cutoffs than the current
     * one gets the current ones, at most once per resend interval while it keeps naming another
     * version (so a lost CUTOFFS is repaired, and a flood of DATA draws no flood of CUTOFFS).
     */
    private void checkCutoffVersion(long nowNs, Peer peer, DataHeader data, long wireRpcId) {
        int version = cutoffs.version();
        if (peer == null || data.cutoffVersion() == version) {
            return;
        }
        if (peer.cutoffsSentVersion == version && nowNs - peer.cutoffsSentNs < config.resendIntervalNs()) {
            return;
        }
        peer.cutoffsSentVersion = version;
        peer.cutoffsSentNs = nowNs;
        control.cutoffs(peer.address, wireRpcId, cutoffs.cutoffs(), version);
    }

    /** Bytes granted (or unscheduled) but not yet received, over all inbound messages. */
    long incomingBytes() {
        return grantScheduler.totalIncomingBytes();
    }

    /**
     * Client: a NEED_ACK from the server. A response still incomplete is never ACKed: its missing
     * parts are asked for instead; a complete or unknown one is ACKed, so that the server may
     * forget it.
     *
     * @return true: the packet is well formed whatever it names
     */
    boolean onNeedAck(long nowNs, InetSocketAddress from, boolean fromServer, long rpcId) {
        if (!fromServer) {
            return true; // only servers send NEED_ACK; ignored
        }
        ClientRpc rpc = rpcs.clientRpc(rpcId, from);
        if (rpc != null) {
            rpc.heard(nowNs);
            requestMissingResponse(rpc, nowNs);
            return true;
        }
        control.add(PacketType.ACK, from, rpcId);
        return true;
    }

    /**
     * A RESEND for the message is due (whether it goes out or is deferred while its peer is
     * silent): if no byte of it arrived since the previous one was due, its sender has let two
     * RTOs pass without a byte, and what we authorised stops holding incoming until bytes of it
     * arrive ({@link GrantScheduler#stalled}). A slow or congested path still delivers some bytes,
     * and granting elsewhere would add to it, so one RTO is not enough.
     */
    void noteSilence(InboundMessage message) {
        if (message.receivedAtLastResend == message.receivedBytes()) {
            grantScheduler.stalled(message);
        }
        message.receivedAtLastResend = message.receivedBytes();
    }

    /** Client: RESENDs for the missing parts of the response, or for its start if none arrived. */
    void requestMissingResponse(ClientRpc rpc, long nowNs) {
        if (rpc.response == null) {
            // An INCAST request's response starts with only the head it named: asking for more
            // would grant it, and every RESEND at once would make a new incast.
            control.resend(rpc.server.address, rpc.rpcId, 0, (rpc.request.flags & DataHeader.FLAG_INCAST) != 0
                    ? rpc.request.incastHeadBytes : params.unscheduledBytes());
            counters.resendsSent++;
        } else {
            requestMissing(rpc.response, rpc.server.address, rpc.rpcId, nowNs);
        }
    }

    /**
     * RESEND for each gap below the granted offset (never for bytes not yet granted), at most 8.
     * The first gap's start becomes the pending round-trip sample (replacing any earlier one, whose
     * bytes may now come twice).
     */
    void requestMissing(InboundMessage message, InetSocketAddress peer, long wireRpcId, long nowNs) {
        requestMissing(message, peer, wireRpcId, nowNs, 8);
    }

    /**
     * Server: a RESEND for the response of a request we are still receiving, with granted bytes
     * missing. The client is alive and believes it sent them, so the answer is a RESEND for the
     * first gap rather than BUSY: our own timed RESEND may keep losing its probe slot to our other
     * RPCs with that peer, and BUSY alone would keep both ends answering each other forever
     * (found by {@code BadInputProperties}). One RESEND answers one packet, as BUSY would. Only
     * once no request DATA has arrived for the client's RTO: while bytes arrive, the missing ones
     * are most likely on their way (a 1 MiB echo's request is still in the socket buffer when the
     * client's RESEND for the response comes), and asking for them again would make the client
     * send them twice; BUSY answers then.
     *
     * @return whether it answered (else the RESEND is the sender's to answer)
     */
    boolean answerResendWhileReceiving(ServerRpc rpc, InetSocketAddress from, long nowNs) {
        if (rpc.state() != ServerRpc.State.RECEIVING_REQUEST || rpc.request.receivedBytes() >= rpc.request.grantedOffset
                || nowNs - rpc.lastRequestDataNs < rpc.client.rtt.rtoNs()) {
            return false;
        }
        rpc.lastHeardNs = nowNs;
        requestMissing(rpc.request, from, rpc.rpcId | HomaHeader.FROM_SERVER_BIT, nowNs, 1);
        return true;
    }

    private void requestMissing(InboundMessage message, InetSocketAddress peer, long wireRpcId, long nowNs,
            int maxResends) {
        RangeSet received = message.received;
        int gapStart = 0;
        int sent = 0;
        for (int i = 0; i <= received.size() && sent < maxResends; i++) {
            int gapEnd = i < received.size() ? received.start(i) : message.grantedOffset;
            gapEnd = Math.min(gapEnd, message.grantedOffset);
            if (gapEnd > gapStart) {
                if (sent == 0) {
                    message.probeRtt(gapStart, nowNs);
                }
                control.resend(peer, wireRpcId, gapStart, gapEnd - gapStart);
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
}
