package io.homa.engine;

import io.homa.engine.internal.wire.ControlHeader;
import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * What leaves (draft "Sender", "Pacing"; Linux Homa's {@code homa_outgoing.c} and
 * {@code homa_pacer.c}): requests and responses split into DATA packets that fit the MTU, the
 * first unscheduled bytes at once and the rest as GRANTs arrive; control packets first, then
 * bytes asked for again (RESEND), then new bytes of the message with the fewest bytes left (SRPT),
 * with a FIFO share ({@code fifoGrantFraction}) for the oldest so that nothing starves; DATA of
 * long messages only as the {@link Pacer} allows. The GRANTs, RESENDs and CUTOFFS that change
 * what may go arrive through {@link SenderFeedback}, which puts messages back in these queues
 * ({@link #enqueue}).
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
    private final AddressValidation validation;
    private final EngineTrace trace;
    private final RttCongestion congestion;
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
    private final ControlHeader commonTx = new ControlHeader();

    Sender(EngineConfig config, EngineParams params, int localPort, RpcTable rpcs, ControlQueue control,
            TimerQueue timers, Pacer pacer, AddressValidation validation, EngineCounters counters, EngineTrace trace,
            RttCongestion congestion) {
        this.trace = trace;
        this.congestion = congestion;
        this.config = config;
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

    // ---- messages queued

    /** Queues a new request (marked INCAST or not when its first packet leaves: {@link #markIncast}). */
    void request(ClientRpc rpc, byte[][] parts, long nowNs) {
        int unscheduledBytes = congestion.newMessage(rpc.server, nowNs, false, sendableHead() == null);
        rpc.request = new OutboundMessage(parts, unscheduledBytes, messageSequence++, rpc.server,
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
     *
     * @return false, and nothing is queued, if {@code rpc} is null or not in service
     */
    boolean respond(ServerRpc rpc, byte[][] parts, long nowNs) {
        if (rpc == null || rpc.state() != ServerRpc.State.IN_SERVICE) {
            return false;
        }
        int window = congestion.newMessage(rpc.client, nowNs, true, sendableHead() == null);
        int unscheduledBytes = rpc.incastHeadBytes > 0 ? Math.min(rpc.incastHeadBytes, window) : window;
        unscheduledBytes = validation.allow(rpc.client, (int) Math.min(unscheduledBytes, MessageBytes.lengthBytes(parts)));
        rpc.response = new OutboundMessage(parts, unscheduledBytes, messageSequence++, rpc.client,
                rpc.rpcId | HomaHeader.FROM_SERVER_BIT, null, rpc);
        rpc.moveTo(ServerRpc.State.SENDING_RESPONSE);
        // From now on the client may be found gone: look when that could first be true.
        timers.armAtOrBefore(rpc, Math.max(rpc.lastHeardNs, rpc.client.lastHeardNs) + params.reclaimAfterNs() + 1);
        enqueue(rpc.response);
        return true;
    }

    // ---- packets in
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
            if (trace.enabled()) {
                trace.pacerHold(nowNs, retransmitHead() != null ? retransmitHead() : sendableHead());
            }
        }
        return sent;
    }

    /** Control packets, then DATA of the SRPT head while the pacer lets that message bypass it. */
    private int pollUrgent(long nowNs, PacketSink sink, int maxPackets) {
        int sent = 0;
        while (sent < maxPackets) {
            if (transmitNextControl(nowNs, sink)) {
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
            if (transmitNextControl(nowNs, sink)) {
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
    private boolean transmitNextControl(long nowNs, PacketSink sink) {
        PendingControl next = control.poll();
        if (next == null) {
            return false;
        }
        trace.sentControl(nowNs, next);
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
        emit(next.type, next.peer, length, next.sendPriority, sink);
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
        trace.sentData(nowNs, message, dataOffset, dataBytes);
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
