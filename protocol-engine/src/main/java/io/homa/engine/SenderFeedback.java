package io.homa.engine;

import io.homa.engine.internal.wire.CutoffsHeader;
import io.homa.engine.internal.wire.GrantHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import io.homa.engine.internal.wire.ResendHeader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * What a message's receiver tells its sender (draft "Sender", "Retransmission", "CUTOFFS"; Linux
 * Homa handles these in {@code homa_incoming.c}): GRANT lets more of our message go, RESEND asks
 * for a range again (answered BUSY when the bytes are not ready, RPC_UNKNOWN or a RESEND of our
 * own for an RPC we do not hold), CUTOFFS sets the priorities of our unscheduled bytes. It only
 * updates the {@link OutboundMessage}s and hands them back to the {@link Sender}'s queues; it
 * sends nothing itself except control packets queued on the {@link ControlQueue}.
 */
final class SenderFeedback {
    private final EngineParams params;
    private final RpcTable rpcs;
    private final ControlQueue control;
    private final EngineCounters counters;
    private final AtMostOnce atMostOnce;
    private final AddressValidation validation;
    /** Answers a client's RESEND about a request still arriving with gaps ({@link #onResend}). */
    private final Receiver receiver;
    /** Where a message goes once it has bytes to send (again). */
    private final Sender sender;
    private final RttCongestion congestion;

    private final GrantHeader grantRx = new GrantHeader();
    private final ResendHeader resendRx = new ResendHeader();
    private final CutoffsHeader cutoffsRx = new CutoffsHeader();

    SenderFeedback(EngineParams params, RpcTable rpcs, ControlQueue control, AtMostOnce atMostOnce,
            AddressValidation validation, Receiver receiver, Sender sender, EngineCounters counters,
            RttCongestion congestion) {
        this.congestion = congestion;
        this.params = params;
        this.rpcs = rpcs;
        this.control = control;
        this.atMostOnce = atMostOnce;
        this.validation = validation;
        this.receiver = receiver;
        this.sender = sender;
        this.counters = counters;
    }
    /**
     * A response is retransmitted at most this many times its length in all, or this many times
     * {@link #RETRANSMIT_BUDGET_FLOOR_BYTES} if it is shorter: a path that loses a fraction p of
     * packets needs about p/(1-p) times, so loss alone never gets there, while forged RESENDs for a
     * stored response (spoofing its client) would otherwise make it an amplifier without limit.
     * Requests have no such budget: a client
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
            // The receiver's unscheduled ratio, in a byte the draft reserves (0 from one that does not report it).
            congestion.onGrantRatio(message.peer, grantRx.reason());
            message.grant(grantOffset, priority);
            if (grantRx.resendAll()) {
                message.retransmit(0, message.serverRpc != null
                        ? validation.allow(message.peer, Math.min(grantOffset, message.nextOffset)) : grantOffset);
                if (message.serverRpc != null && message.retransmitBudgetExhausted()) {
                    giveUpResponse(message.serverRpc, from);
                    return true;
                }
            }
            sender.enqueue(message);
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
        control.rpcUnknown(from, rpc.rpcId | HomaHeader.FROM_SERVER_BIT, HomaHeader.REASON_RETRANSMIT_BUDGET);
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
                sender.enqueue(rpc.request);
                return true;
            }
            if (!rpc.request.retransmit(resendOffset, resendLength)) {
                // Not sent yet (shorter messages go first): tell the server we are alive. The
                // draft's BUSY section says clients do not send BUSY, but its RESEND section allows
                // it for exactly this case (data held back for higher-priority transmissions).
                control.add(PacketType.BUSY, from, rpcId);
                counters.busySent++;
            }
            sender.enqueue(rpc.request);
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
            sender.enqueue(rpc.response);
        }
        return true;
    }

    /**
     * Whether a client's RESEND for the start of its response crossed that start on the way: the
     * packet holding the response's first byte left less than an RTO of the client ago, so the
     * client asked before it could have seen it (it asks only after an RTO without a byte of the
     * response). Sending the response again would send it twice, which busy servers answering
     * many clients at once saw for a noticeable share of their responses. The answer is
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
}
