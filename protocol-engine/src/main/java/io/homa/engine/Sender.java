package io.homa.engine;

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

/**
 * The sending side of messages (draft "Sender", "Pacing", "Retransmission"; Linux Homa's
 * {@code homa_outgoing.c}): requests and responses split into DATA packets that fit the MTU, the
 * first unscheduled bytes at once and the rest as GRANTs arrive; control packets first, then
 * bytes asked for again (RESEND), then new bytes of the message with the fewest bytes left (SRPT),
 * with a FIFO share ({@code fifoGrantFraction}) for the oldest so that nothing starves; DATA of
 * long messages only as the {@link Pacer} allows. Answers GRANT, RESEND (with BUSY when the bytes
 * are not ready) and CUTOFFS.
 */
final class Sender {
    private final EngineConfig config;
    private final EngineParams params;
    private final int localPort;
    private final RpcTable rpcs;
    private final ControlQueue control;
    private final TimerQueue timers;
    private final Pacer pacer;
    private final EngineCounters counters;
    private final AtMostOnce atMostOnce;
    private final AddressValidation validation;
    /** Answers a client's RESEND about a request still arriving with gaps ({@link #onResend}). */
    private final Receiver receiver;
    private long messageSequence;

    /** SRPT: the message with the fewest bytes never sent first, older first among equals. */
    private final SendQueue sendQueue = new SendQueue();
    /** Messages with bytes to send again, oldest request first: the receiver waits for them. */
    private final ArrayDeque<OutboundMessage> retransmitQueue = new ArrayDeque<>();
    /** Every this many DATA packets, one goes to the oldest message instead of the shortest. */
    private final int fifoEveryPackets;
    private int dataSinceFifo;
    private OutboundMessage fifoPending;
    /** When the pacer lets DATA out again after {@link #pollTransmit} stopped for lack of credit. */
    private long pacerWakeNs = Long.MAX_VALUE;

    private final ByteBuffer txBuffer;
    private final DataHeader dataTx = new DataHeader();
    private final GrantHeader grantRx = new GrantHeader();
    private final ResendHeader resendRx = new ResendHeader();
    private final CutoffsHeader cutoffsRx = new CutoffsHeader();
    private final ControlHeader commonTx = new ControlHeader();

    Sender(EngineConfig config, EngineParams params, int localPort, RpcTable rpcs, ControlQueue control,
            TimerQueue timers, Pacer pacer, AtMostOnce atMostOnce, AddressValidation validation, Receiver receiver,
            EngineCounters counters) {
        this.config = config;
        this.receiver = receiver;
        this.atMostOnce = atMostOnce;
        this.validation = validation;
        this.params = params;
        this.localPort = localPort;
        this.rpcs = rpcs;
        this.control = control;
        this.timers = timers;
        this.pacer = pacer;
        this.counters = counters;
        this.txBuffer = ByteBuffer.allocate(config.maxDatagramBytes());
        this.fifoEveryPackets = config.fifoGrantFraction() > 0
                ? (int) Math.max(2, Math.round(1 / config.fifoGrantFraction())) : Integer.MAX_VALUE;
    }

    /**
     * A response is retransmitted at most this many times its length in all, or this many times
     * {@link #RETRANSMIT_BUDGET_FLOOR_BYTES} if it is shorter (issue 14): a path that loses a
     * fraction p of packets needs about p/(1-p) times, so loss alone never gets there, while forged
     * RESENDs for a stored response (spoofing its client) would otherwise make it an amplifier
     * without limit (16,300x measured for a 1 MB response). Requests have no such budget: a client
     * sends its request only while it waits for the RPC, and a server short of buffer space
     * rightly asks for a request's start over and over.
     */
    static final int RETRANSMIT_BUDGET_FACTOR = 8;
    /**
     * The length a short response's budget is reckoned from: a client whose RESENDs cross the
     * retransmissions they asked for (a paused peer, a backlog) may ask for a short response a few
     * times more, and short responses amplify little.
     */
    static final int RETRANSMIT_BUDGET_FLOOR_BYTES = 64 * 1024;

    // ---- messages in

    /** Queues a new request (marked INCAST or not when its first packet leaves: {@link #markIncast}). */
    void request(ClientRpc rpc, byte[][] parts) {
        rpc.request = new OutboundMessage(parts, params.unscheduledBytes(), messageSequence++, rpc.server,
                rpc.rpcId, rpc, null);
        enqueue(rpc.request);
    }

    /**
     * As a request's first packet leaves: with more than {@code incastThreshold} RPCs outstanding it
     * is marked INCAST and names the head its response may start with, when that is below
     * {@code unscheduledBytes} (paper §3.6; {@link EngineParams#incastHeadBytes}). Counted when the
     * packet leaves rather than when the request is queued, so that every request of a fan-out
     * queued at once is sized for all of it: their heads then sum to at most
     * {@code incastBufferBytes}.
     */
    private void markIncast(OutboundMessage request) {
        request.incastDecided = true;
        int outstanding = rpcs.clientRpcCount(); // this request's RPC included
        if (outstanding > config.incastThreshold()) {
            int headBytes = params.incastHeadBytes(outstanding);
            if (headBytes < params.unscheduledBytes()) {
                request.flags |= DataHeader.FLAG_INCAST;
                request.incastHeadBytes = headBytes;
                counters.incastMarked++;
            }
        }
    }

    /**
     * Queues the response of an RPC in service; an INCAST request gets few unscheduled bytes, and a
     * client whose address is not validated no more than its credit pays ({@link AddressValidation}).
     */
    void respond(ServerRpc rpc, byte[][] parts) {
        int unscheduledBytes = rpc.incastHeadBytes > 0 ? rpc.incastHeadBytes : params.unscheduledBytes();
        unscheduledBytes = validation.allow(rpc.client, (int) Math.min(unscheduledBytes, MessageBytes.lengthBytes(parts)));
        rpc.response = new OutboundMessage(parts, unscheduledBytes, messageSequence++, rpc.client,
                rpc.rpcId | HomaHeader.FROM_SERVER_BIT, null, rpc);
        rpc.moveTo(ServerRpc.State.SENDING_RESPONSE);
        // From now on the client may be found gone: look when that could first be true.
        timers.armAtOrBefore(rpc, Math.max(rpc.lastHeardNs, rpc.client.lastHeardNs) + params.reclaimAfterNs() + 1);
        enqueue(rpc.response);
    }

    // ---- packets in

    /** GRANT: more of our message may go, scheduled bytes at the granted priority. */
    boolean onGrant(long nowNs, InetSocketAddress from, ByteBuffer packet, int offset, int length,
            boolean fromServer, long rpcId) {
        if (length < GrantHeader.HEADER_LENGTH) {
            return false;
        }
        grantRx.wrap(packet, offset);
        int grantOffset = grantRx.grantOffset();
        int priority = grantRx.priority();
        if (grantOffset < 0 || priority > HomaEngine.MAX_PRIORITY) {
            return false;
        }
        OutboundMessage message = outboundFor(from, fromServer, rpcId, nowNs);
        if (message != null) {
            if (message.serverRpc != null && grantOffset > message.grantedOffset) {
                // A response to an address not validated: only what its credit pays.
                grantOffset = message.grantedOffset + validation.allow(message.peer,
                        Math.min(grantOffset, message.lengthBytes) - message.grantedOffset);
            }
            message.grant(grantOffset, priority);
            if (grantRx.resendAll()) {
                message.retransmit(0, message.serverRpc != null
                        ? validation.allow(message.peer, Math.min(grantOffset, message.nextOffset)) : grantOffset);
                if (message.serverRpc != null && message.retransmitBudgetExhausted()) {
                    giveUpResponse(message.serverRpc, from);
                    return true;
                }
            }
            enqueue(message);
        }
        return true;
    }

    /**
     * The client asked for the response again beyond {@link #RETRANSMIT_BUDGET_FACTOR} times its
     * length: the server drops the RPC (remembered as finished, so it never executes again) and
     * answers RPC_UNKNOWN, so a real client fails the RPC at once (UNAVAILABLE) instead of asking on.
     */
    private void giveUpResponse(ServerRpc rpc, InetSocketAddress from) {
        counters.retransmitBudgetExceeded++;
        atMostOnce.release(rpc);
        control.add(PacketType.RPC_UNKNOWN, from, rpc.rpcId | HomaHeader.FROM_SERVER_BIT);
    }

    /**
     * The outbound message a GRANT or RESEND from {@code from} refers to: our request when the
     * packet came from the server, our response when it came from the client. Marks the RPC heard.
     */
    private OutboundMessage outboundFor(InetSocketAddress from, boolean fromServer, long rpcId, long nowNs) {
        if (fromServer) {
            ClientRpc rpc = rpcs.clientRpc(rpcId, from);
            if (rpc == null) {
                return null;
            }
            rpc.heard(nowNs);
            return rpc.request;
        }
        ServerRpc rpc = rpcs.serverRpc(from, rpcId);
        if (rpc == null) {
            return null;
        }
        rpc.lastHeardNs = nowNs; // alive; only request DATA moves a RESEND for the request's bytes
        return rpc.response;
    }

    /**
     * RESEND: the range goes again if it was sent; otherwise the peer learns we are alive (BUSY).
     * For an RPC we do not know, a server asks for the request's start, or answers RPC_UNKNOWN if
     * the rpcid is finished; a client answers RPC_UNKNOWN.
     */
    boolean onResend(long nowNs, InetSocketAddress from, ByteBuffer packet, int offset, int length,
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
            ClientRpc rpc = rpcs.clientRpc(rpcId, from);
            if (rpc == null) {
                control.add(PacketType.RPC_UNKNOWN, from, rpcId);
                return true;
            }
            rpc.heard(nowNs);
            if (resendOffset >= rpc.request.lengthBytes) {
                // The server holds another message under our rpcid (a forged first packet won the
                // race): our request again from its start contradicts it, so the server drops that
                // message unexecuted and its next RESEND gets ours; BUSY would keep both ends
                // answering each other forever.
                rpc.request.retransmit(0, rpc.request.lengthBytes);
                enqueue(rpc.request);
                return true;
            }
            if (!rpc.request.retransmit(resendOffset, resendLength)) {
                // Not sent yet (shorter messages go first): tell the server we are alive. The
                // draft's BUSY section says clients do not send BUSY, but its RESEND section allows
                // it for exactly this case (data held back for higher-priority transmissions).
                control.add(PacketType.BUSY, from, rpcId);
                counters.busySent++;
            }
            enqueue(rpc.request);
            return true;
        }
        Peer peer = rpcs.knownPeer(from);
        ServerRpc rpc = peer == null ? null : peer.serverRpcs.get(rpcId);
        if (rpc == null) {
            if (peer != null && peer.finished.contains(rpcId)) {
                control.add(PacketType.RPC_UNKNOWN, from, rpcId | HomaHeader.FROM_SERVER_BIT);
            } else if (!atMostOnce.refuseStaleEpoch(from, rpcId, resendRx.epoch())) {
                // We never saw the request (all of it may have been lost): ask for its start.
                control.resend(from, rpcId | HomaHeader.FROM_SERVER_BIT, 0, params.unscheduledBytes());
                counters.resendsSent++;
            }
            return true;
        }
        if (receiver.answerResendWhileReceiving(rpc, from, nowNs)) {
            return true;
        }
        // Alive, but a RESEND for the response carries no request byte: a due RESEND of ours for
        // missing request bytes must not be pushed back by it (both ends would wait forever).
        rpc.lastHeardNs = nowNs;
        boolean resent = rpc.response != null && !crossedResponseStart(rpc.response, resendOffset, nowNs)
                && rpc.response.retransmit(resendOffset, validation.allow(rpc.client, resendLength(rpc.response,
                        resendOffset, resendLength)));
        if (rpc.response != null && rpc.response.retransmitBudgetExhausted()) {
            giveUpResponse(rpc, from);
            return true;
        }
        if (!resent) {
            // Request incomplete, handler still running, the bytes not sent yet, or their start
            // crossed this RESEND: alive, not ready.
            control.add(PacketType.BUSY, from, rpcId | HomaHeader.FROM_SERVER_BIT);
            counters.busySent++;
        }
        if (rpc.response != null) {
            enqueue(rpc.response);
        }
        return true;
    }

    /**
     * Whether a client's RESEND for the start of its response crossed that start on the way: the
     * packet holding the response's first byte left less than an RTO of the client ago, so the
     * client asked before it could have seen it (it asks only after an RTO without a byte of the
     * response). Sending the response again would send it twice: in the S6 benchmark (1,000 RPCs
     * with 10 KB responses to 3 busy servers) 5-13% of the responses arrived twice. The answer is
     * BUSY (alive, not lost: draft "BUSY"); had the packet been lost, the client's next RESEND, an
     * RTO on, finds it older and has it sent again.
     */
    private static boolean crossedResponseStart(OutboundMessage response, int resendOffset, long nowNs) {
        return resendOffset == 0 && response.nextOffset > 0
                && nowNs - response.startSentNs < response.peer.rtt.rtoNs();
    }

    /** The bytes of {@code [offset, offset + length)} that lie inside the message. */
    private static int resendLength(OutboundMessage message, int offset, int length) {
        return (int) Math.max(0, Math.min((long) offset + length, message.lengthBytes) - offset);
    }

    /**
     * CUTOFFS: the peer's unscheduled priority cutoffs for our messages to it (draft "CUTOFFS").
     * A receiver sends them about a DATA packet of ours, so they are applied only when the packet
     * names an RPC we hold with the sender, and only if they are a sane list: non-increasing (as
     * unsigned numbers: higher levels for shorter messages) with a non-zero first entry. Anything
     * else is ignored and counted ({@link EngineCounters#cutoffsIgnored()}): an off-path forger
     * would otherwise move every message of ours to that peer to another level with one packet.
     */
    boolean onCutoffs(InetSocketAddress from, ByteBuffer packet, int offset, int length, boolean fromServer,
            long rpcId) {
        if (length < CutoffsHeader.HEADER_LENGTH) {
            return false;
        }
        cutoffsRx.wrap(packet, offset);
        Peer peer = rpcs.knownPeer(from);
        if (peer == null || rpcs.held(from, fromServer, rpcId) == null || !saneCutoffs(cutoffsRx)) {
            counters.cutoffsIgnored++;
            return true;
        }
        int[] cutoffs = new int[CutoffsHeader.NUM_PRIORITIES];
        for (int i = 0; i < cutoffs.length; i++) {
            cutoffs[i] = cutoffsRx.cutoff(i);
        }
        peer.cutoffs = cutoffs;
        peer.cutoffVersion = cutoffsRx.cutoffVersion();
        return true;
    }

    /** Non-increasing as unsigned numbers, the first (lowest level, longest messages) non-zero. */
    private static boolean saneCutoffs(CutoffsHeader cutoffs) {
        if (cutoffs.cutoff(0) == 0) {
            return false;
        }
        for (int i = 1; i < CutoffsHeader.NUM_PRIORITIES; i++) {
            if (Integer.compareUnsigned(cutoffs.cutoff(i), cutoffs.cutoff(i - 1)) > 0) {
                return false;
            }
        }
        return true;
    }

    // ---- packets out

    /**
     * Hands packets to the sink: control packets, then DATA (retransmissions, then SRPT with the
     * FIFO share). With pacing on, control packets and messages the {@link Pacer} lets bypass it
     * go regardless of credit, the rest while the credit lasts.
     */
    int pollTransmit(long nowNs, PacketSink sink, int maxPackets) {
        pacerWakeNs = Long.MAX_VALUE;
        if (!pacer.enabled()) {
            return transmit(nowNs, sink, maxPackets);
        }
        int sent = pollUrgent(nowNs, sink, maxPackets);
        while (sent < maxPackets && pacer.hasCredit(nowNs)) {
            if (transmit(nowNs, sink, 1) == 0) {
                return sent;
            }
            sent++;
        }
        if (sent < maxPackets && hasTransmit()) {
            pacerWakeNs = pacer.nextSendNs(nowNs);
        }
        return sent;
    }

    /** Control packets, then DATA of the SRPT head while the pacer lets that message bypass it. */
    private int pollUrgent(long nowNs, PacketSink sink, int maxPackets) {
        int sent = 0;
        while (sent < maxPackets) {
            if (transmitNextControl(sink)) {
                sent++;
                continue;
            }
            OutboundMessage head = sendableHead();
            if (head == null || !Pacer.bypasses(head.lengthBytes)) {
                break;
            }
            transmitData(head, nowNs, sink);
            sent++;
        }
        return sent;
    }

    private int transmit(long nowNs, PacketSink sink, int maxPackets) {
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

    /** Whether packets wait to be sent (whatever the pacer says). */
    boolean hasTransmit() {
        return !control.isEmpty() || retransmitHead() != null || sendableHead() != null;
    }

    /** Whether {@link #pollTransmit} would hand out a packet at {@code nowNs}. */
    boolean canTransmit(long nowNs) {
        if (!control.isEmpty()) {
            return true;
        }
        if (!pacer.enabled() || pacer.hasCredit(nowNs)) {
            return retransmitHead() != null || sendableHead() != null;
        }
        // Without credit, pollTransmit sends only what pollUrgent does: new bytes of the SRPT head
        // if it bypasses the pacer (not a retransmission, which waits for credit like other DATA).
        OutboundMessage head = sendableHead();
        return head != null && Pacer.bypasses(head.lengthBytes);
    }

    /** When the pacer lets DATA out again, if the last {@link #pollTransmit} stopped for it; else MAX_VALUE. */
    long pacerWakeNs() {
        return pacerWakeNs;
    }

    /**
     * The earlier of {@code deadlineNs} and the pacer's wake-up; MAX_VALUE means "none" for both
     * (compared as a time it would wrap for a clock of negative origin, so it never is).
     */
    long earlierOf(long deadlineNs) {
        if (pacerWakeNs == Long.MAX_VALUE || deadlineNs == Long.MAX_VALUE) {
            return pacerWakeNs == Long.MAX_VALUE ? deadlineNs : pacerWakeNs;
        }
        return pacerWakeNs - deadlineNs < 0 ? pacerWakeNs : deadlineNs;
    }

    /** Time passed: a pacer wake-up that is due has done its job (the caller polls next). */
    void onTimeout(long nowNs) {
        if (pacerWakeNs != Long.MAX_VALUE && nowNs - pacerWakeNs >= 0) {
            pacerWakeNs = Long.MAX_VALUE;
        }
    }

    /**
     * Sends the next control packet, with the epoch and the address token it carries: as the
     * peer's server (S bit set), our token for its address, the packet charged to the address's
     * credit if it is not validated; as its client, the echo of the latest token it sent us
     * ({@link AddressValidation}).
     */
    private boolean transmitNextControl(PacketSink sink) {
        PendingControl next = control.poll();
        if (next == null) {
            return false;
        }
        int length = control.encode(next, txBuffer);
        long token;
        if ((next.wireRpcId & HomaHeader.FROM_SERVER_BIT) != 0) {
            Peer client = rpcs.knownPeer(next.peer);
            if (client != null) {
                validation.chargeControl(client, length);
                token = validation.tokenFor(client);
            } else {
                token = validation.tokenFor(next.peer);
            }
        } else {
            Peer server = rpcs.knownPeer(next.peer);
            token = server != null ? server.echoToken : 0;
        }
        commonTx.wrap(txBuffer, 0).epoch(rpcs.epochFor(next.peer, next.wireRpcId)).addressToken(token);
        emit(next.type, next.peer, length, control.controlPriority(), sink);
        control.recycle(next);
        return true;
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
        int oldestIndex = 0;
        for (int i = 1; i < sendQueue.size(); i++) {
            OutboundMessage message = sendQueue.get(i);
            if (message.sequence < oldest.sequence && message.hasNewSendable()) {
                oldest = message;
                oldestIndex = i;
            }
        }
        if (oldest != head) {
            // Its key shrinks as it sends: take it out and put it back so the heap stays ordered.
            sendQueue.removeAt(oldestIndex);
            oldest.queued = false;
            fifoPending = oldest;
        }
        return oldest;
    }

    /** Puts a message in the queues it now belongs to (new bytes granted, or bytes to send again). */
    void enqueue(OutboundMessage message) {
        if (!message.queued && message.hasNewSendable()) {
            message.queued = true;
            sendQueue.add(message);
        }
        if (!message.retransmitQueued && !message.abandoned && message.hasRetransmit()) {
            message.retransmitQueued = true;
            retransmitQueue.add(message);
        }
    }

    private void transmitData(OutboundMessage message, long nowNs, PacketSink sink) {
        if (!message.incastDecided && message.clientRpc != null) {
            markIncast(message);
        }
        int dataOffset;
        int dataBytes;
        boolean retransmit = message.hasRetransmit();
        int payloadBytes = params.payloadBytes();
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
        if (dataOffset == 0) {
            message.startSentNs = nowNs;
        }
        Peer peer = message.peer;
        ClientRpc bound = message.clientRpc;
        int epoch = bound != null ? RpcTable.epochOf(bound) : rpcs.localEpoch;
        if (bound != null && !bound.epochBound && epoch != HomaHeader.EPOCH_ASK) {
            // The request's first DATA naming an incarnation leaves: only that one may run it.
            bound.epochBound = true;
            bound.epoch = epoch;
        }
        int priority = dataOffset < message.unscheduledBytes
                ? peer.unscheduledPriority(message.lengthBytes, config.priorityLevels())
                : message.grantPriority;
        int packetBytes = DataHeader.HEADER_LENGTH + dataBytes;
        // Written where the sink will send it from, if it lends that memory; else into txBuffer.
        ByteBuffer lent = sink.claim(peer.address, packetBytes, priority);
        ByteBuffer packet = lent != null ? lent : txBuffer;
        int base = lent != null ? lent.position() : 0;
        DataHeader data = dataTx;
        data.wrap(packet, base);
        data.writeCommon(PacketType.DATA, localPort, peer.address.getPort(), message.wireRpcId)
                .messageLength(message.lengthBytes)
                .incoming(message.grantedOffset)
                .cutoffVersion(peer.cutoffVersion)
                .retransmitted(retransmit)
                .flags(message.flags)
                .incastHeadBytes(message.incastHeadBytes)
                .dataOffset(dataOffset)
                .segmentOffset(dataOffset);
        data.doff(DataHeader.DOFF);
        data.epoch(epoch);
        data.addressToken(message.serverRpc != null ? validation.tokenFor(peer) : peer.echoToken);
        if (message.clientRpc != null && peer.pendingAckCount > 0) {
            // Draft "ACK": an ack we owe this server rides on our request.
            data.ackRpcId(peer.takePendingAck()).ackServerPort(peer.address.getPort());
        }
        message.copyTo(dataOffset, dataBytes, packet, base + DataHeader.HEADER_LENGTH);
        if (lent != null) {
            sink.commit();
            sent(PacketType.DATA, packetBytes);
        } else {
            emit(PacketType.DATA, peer.address, packetBytes, priority, sink);
        }

        ClientRpc clientRpc = message.clientRpc;
        if (clientRpc != null) {
            boolean started = clientRpc.state() == ClientRpc.State.QUEUED;
            if (started) {
                // The silence that triggers RESENDs counts from the request's first packet.
                clientRpc.moveTo(ClientRpc.State.SENDING_REQUEST);
                clientRpc.lastHeardNs = nowNs;
            }
            boolean sent = !clientRpc.requestSent && message.fullySent();
            if (sent) {
                // From now on the RPC waits for the server's handler: its first RESEND waits as long.
                clientRpc.requestSent = true;
                clientRpc.requestSentNs = nowNs;
            }
            if (started || (sent && clientRpc.resendBackoffNs == 0 && clientRpc.state() == ClientRpc.State.SENDING_REQUEST)) {
                clientRpc.nextResendNs = nowNs + clientRpc.resendIntervalNs();
                timers.armAtOrBefore(clientRpc, clientRpc.nextResendNs);
            }
        }
        ServerRpc serverRpc = message.serverRpc;
        if (serverRpc != null && serverRpc.state() == ServerRpc.State.SENDING_RESPONSE && message.fullySent()) {
            serverRpc.moveTo(ServerRpc.State.AWAITING_ACK);
            serverRpc.nextTimerNs = nowNs + serverRpc.resendIntervalNs();
            timers.armAtOrBefore(serverRpc, serverRpc.nextTimerNs);
        }
    }

    private void emit(PacketType type, InetSocketAddress peer, int length, int priority, PacketSink sink) {
        ByteBuffer buffer = txBuffer;
        buffer.limit(length).position(0);
        sink.send(peer, buffer, priority);
        buffer.clear();
        sent(type, length);
    }

    /** Counts a packet of {@code length} bytes handed to the sink and charges the pacer for it. */
    private void sent(PacketType type, int length) {
        counters.sent(type);
        pacer.charge(length);
    }

    void clear() {
        control.clear();
        sendQueue.clear();
        retransmitQueue.clear();
        fifoPending = null;
        pacerWakeNs = Long.MAX_VALUE;
    }
}
