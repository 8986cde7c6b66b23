package io.homa.engine;

import io.homa.engine.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;

/**
 * What happens when time passes (draft "Retransmission", "Timeouts", "At-most-once semantics";
 * Linux Homa's {@code homa_timer.c}), run from {@link TimerQueue}: only RPCs and peers whose
 * deadline is due are visited, never the whole table.
 *
 * <ul>
 *   <li>A client RPC silent for {@code resendIntervalNs} sends RESENDs for what it misses (the
 *       response's start, or its gaps below the granted offset); after {@code timeoutResends}
 *       unanswered ones and {@code timeoutResends × resendIntervalNs} of silence from the server,
 *       it fails with {@link HomaEvent.Reason#TIMEOUT}. An RPC that waits on this endpoint (bytes
 *       not yet granted by our own scheduler) is not timed out.
 *   <li>A server RPC receiving its request asks for missing bytes the same way, and is forgotten
 *       (never delivered, so safe) if the client goes silent. A response sent in full is followed
 *       by NEED_ACK until the client ACKs; an RPC whose client has been silent for
 *       {@link EngineParams#reclaimAfterNs()} is reclaimed, its rpcid remembered as finished.
 *   <li>A peer flushes the acks it is owed in explicit ACKs, and is forgotten after
 *       {@code peerIdleTimeoutNs} with nothing in progress.
 * </ul>
 */
final class Timers {
    private final EngineConfig config;
    private final EngineParams params;
    private final TimerQueue queue;
    private final RpcTable rpcs;
    private final Receiver receiver;
    private final AtMostOnce atMostOnce;
    private final ControlQueue control;
    private final ArrayDeque<HomaEvent> events;
    private final EngineCounters counters;
    /** Entries visited by {@link #onTimeout} so far (each was due): for tests and diagnostics. */
    private long visits;

    Timers(EngineConfig config, EngineParams params, TimerQueue queue, RpcTable rpcs, Receiver receiver,
            AtMostOnce atMostOnce, ControlQueue control, ArrayDeque<HomaEvent> events, EngineCounters counters) {
        this.config = config;
        this.params = params;
        this.queue = queue;
        this.rpcs = rpcs;
        this.receiver = receiver;
        this.atMostOnce = atMostOnce;
        this.control = control;
        this.events = events;
        this.counters = counters;
    }

    /** The earliest deadline, or {@link Long#MAX_VALUE}. */
    long nextTimeoutNs() {
        return queue.earliestNs();
    }

    long visits() {
        return visits;
    }

    /** Runs every entry due at {@code nowNs}; then the grant scheduler, since ended messages freed incoming bytes. */
    void onTimeout(long nowNs) {
        boolean any = false;
        TimerEntry due;
        while ((due = queue.pollDue(nowNs)) != null) {
            visits++;
            any = true;
            if (due instanceof ClientRpc rpc) {
                client(rpc, nowNs);
            } else if (due instanceof ServerRpc rpc) {
                server(rpc, nowNs);
            } else {
                peer((Peer) due, nowNs);
            }
        }
        if (any) {
            receiver.scheduleGrants();
        }
    }

    /**
     * Draft "BUSY": the peer is alive and still knows the RPC, so its RESEND timer restarts and
     * its silence no longer counts; nothing else changes.
     */
    void onBusy(long nowNs, InetSocketAddress from, boolean fromServer, long rpcId) {
        if (fromServer) {
            ClientRpc rpc = rpcs.clientRpc(rpcId, from);
            if (rpc != null) {
                rpc.heard(nowNs, config.resendIntervalNs());
            }
        } else {
            ServerRpc rpc = rpcs.serverRpc(from, rpcId);
            if (rpc != null) {
                rpc.heard(nowNs, config.resendIntervalNs());
            }
        }
    }

    private void client(ClientRpc rpc, long nowNs) {
        if (nowNs - rpc.nextResendNs < 0) {
            queue.armAtOrBefore(rpc, rpc.nextResendNs); // heard from since: not due yet
            return;
        }
        if (waitingOnOurselves(rpc, nowNs)) {
            rpc.resendsWithoutAnswer = 0;
        } else if (rpc.resendsWithoutAnswer >= config.timeoutResends()
                && nowNs - rpc.server.lastHeardNs >= params.silenceTimeoutNs()) {
            // Draft "Timeouts": the peer answered none of our RESENDs. A peer that is busy sending
            // other messages to us is alive, and will get to this one.
            rpcs.removeClientRpc(rpc);
            counters.timeouts++;
            events.add(new HomaEvent.RpcFailed(rpc.rpcId, rpc.server.address, HomaEvent.Reason.TIMEOUT,
                    (!rpc.server.heardFrom ? "never a packet from " + rpc.server.address
                            : "no packet from " + rpc.server.address + " for "
                                    + (nowNs - rpc.server.lastHeardNs) / 1_000_000 + " ms")
                            + ", after " + rpc.resendsWithoutAnswer + " RESENDs"));
            return;
        } else {
            receiver.requestMissingResponse(rpc);
            rpc.resendsWithoutAnswer++;
        }
        rpc.nextResendNs = nowNs + config.resendIntervalNs();
        queue.armAtOrBefore(rpc, rpc.nextResendNs);
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

    private void server(ServerRpc rpc, long nowNs) {
        switch (rpc.state()) {
            case RECEIVING_REQUEST -> receivingRequest(rpc, nowNs);
            case SENDING_RESPONSE, AWAITING_ACK -> answered(rpc, nowNs);
            default -> {
                // IN_SERVICE: the application holds the request; the client's RESENDs get BUSY.
            }
        }
    }

    private void receivingRequest(ServerRpc rpc, long nowNs) {
        Peer peer = rpc.client;
        if (nowNs - rpc.nextTimerNs < 0) {
            queue.armAtOrBefore(rpc, rpc.nextTimerNs);
            return;
        }
        if (rpc.request.receivedBytes() >= rpc.request.grantedOffset
                && nowNs - peer.lastHeardNs < params.silenceTimeoutNs()) {
            // Everything we granted has arrived: the rest waits for our own scheduler.
            rpc.resendsWithoutAnswer = 0;
        } else if (rpc.resendsWithoutAnswer >= config.timeoutResends()
                && nowNs - peer.lastHeardNs >= params.silenceTimeoutNs()) {
            // The client went silent; never delivered to the application: safe to forget.
            atMostOnce.release(rpc);
            counters.timeouts++;
            return;
        } else {
            receiver.requestMissing(rpc.request, peer.address, rpc.rpcId | HomaHeader.FROM_SERVER_BIT);
            rpc.resendsWithoutAnswer++;
        }
        rpc.nextTimerNs = nowNs + config.resendIntervalNs();
        queue.armAtOrBefore(rpc, rpc.nextTimerNs);
    }

    /** SENDING_RESPONSE or AWAITING_ACK: reclaim if the client is gone; NEED_ACK while awaiting its ACK. */
    private void answered(ServerRpc rpc, long nowNs) {
        Peer peer = rpc.client;
        long reclaimAtNs = Math.max(rpc.lastHeardNs, peer.lastHeardNs) + params.reclaimAfterNs() + 1;
        if (waitingForGrants(rpc)) {
            // A response that has sent all it was granted waits for the client's grant scheduler,
            // which may serve other messages (SRPT, max-incoming) for a long while: the receiver
            // drives, so only a client silent for peer-idle-timeout is taken for gone. Reclaiming
            // sooner made the client fail live RPCs with RPC_UNKNOWN under incast.
            reclaimAtNs = Math.max(reclaimAtNs, peer.lastHeardNs + config.peerIdleTimeoutNs());
        }
        if (nowNs - reclaimAtNs >= 0) {
            // The client is gone (draft: the server MAY then reclaim the state).
            atMostOnce.release(rpc);
            counters.timeouts++;
            return;
        }
        long nextNs = reclaimAtNs;
        if (rpc.state() == ServerRpc.State.AWAITING_ACK) {
            if (nowNs - rpc.nextTimerNs >= 0) {
                if (rpc.resendsWithoutAnswer >= config.timeoutResends()) {
                    // timeoutResends NEED_ACKs and not a word about this RPC: give up. The rpcid is
                    // remembered as finished, so it never executes again.
                    atMostOnce.release(rpc);
                    counters.timeouts++;
                    return;
                }
                control.add(PacketType.NEED_ACK, peer.address, rpc.rpcId | HomaHeader.FROM_SERVER_BIT);
                rpc.resendsWithoutAnswer++;
                rpc.nextTimerNs = nowNs + config.resendIntervalNs();
            }
            if (rpc.nextTimerNs - nextNs < 0) {
                nextNs = rpc.nextTimerNs;
            }
        }
        queue.armAtOrBefore(rpc, nextNs);
    }

    /** Whether a response has sent every byte the client granted and waits for more grants. */
    private static boolean waitingForGrants(ServerRpc rpc) {
        OutboundMessage response = rpc.response;
        return rpc.state() == ServerRpc.State.SENDING_RESPONSE && response != null
                && response.nextOffset >= response.grantedOffset && response.nextOffset < response.lengthBytes
                && !response.hasRetransmit();
    }

    private void peer(Peer peer, long nowNs) {
        if (peer.pendingAckCount > 0) {
            if (nowNs - peer.ackFlushNs < 0) {
                queue.armAtOrBefore(peer, peer.ackFlushNs);
                return;
            }
            atMostOnce.flushAcks(peer);
        }
        long idleSinceNs = Math.max(peer.lastHeardNs, peer.lastUsedNs);
        if (peer.idle() && nowNs - idleSinceNs > config.peerIdleTimeoutNs()) {
            rpcs.forget(peer);
            return;
        }
        long expiryNs = idleSinceNs + config.peerIdleTimeoutNs() + 1;
        queue.armAtOrBefore(peer, nowNs - expiryNs < 0 ? expiryNs : nowNs + config.peerIdleTimeoutNs());
    }
}
