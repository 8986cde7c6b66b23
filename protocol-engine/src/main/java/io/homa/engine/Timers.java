package io.homa.engine;

import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;

/**
 * What happens when time passes (draft "Retransmission", "Timeouts", "At-most-once semantics";
 * Linux Homa's {@code homa_timer.c}), run from {@link TimerQueue}: only RPCs and peers whose
 * deadline is due are visited, never the whole table.
 *
 * <p>Timers are built for endpoints that pause (GC, JIT, a descheduled VM), not only for lossy
 * networks:
 * <ul>
 *   <li><b>Retransmission.</b> An RPC missing bytes asks for them with RESEND after its peer's RTO
 *       ({@link RttEstimate}: max(resend-interval, SRTT + 4 x RTTVAR)); every RESEND that goes
 *       unanswered, or is answered BUSY, doubles the wait, up to
 *       {@link EngineConfig#maxResendIntervalNs()} (RFC 6298 §5.5). Any packet about the RPC
 *       ends its backoff, so loss recovery from a peer that talks stays prompt.
 *   <li><b>One probe per silent peer.</b> A peer is silent when no packet about any RPC held with
 *       it arrived within its RTO. Then its RPCs' RESENDs (and NEED_ACKs) are not all sent: one
 *       goes per backoff step of the peer, the others are deferred (many RPCs waiting on one
 *       peer means the peer is paused or overloaded, not that the network lost their packets).
 *   <li><b>Failure is a wall-clock budget.</b> A client RPC whose server has been silent for
 *       {@code peerSilenceTimeoutNs} fails with {@link HomaEvent.Reason#TIMEOUT}, checked at that
 *       very deadline. An RPC that waits on this endpoint (bytes not yet granted by our own
 *       scheduler) is not timed out. A server RPC receiving its request is forgotten (never
 *       delivered, so safe) after the same silence from its client.
 *   <li><b>Reclaim.</b> A response sent in full is followed by NEED_ACK until the client ACKs;
 *       an RPC whose client has been silent for {@link EngineParams#reclaimAfterNs()} (twice the
 *       budget, so that the client has given up first) is reclaimed, its rpcid remembered as
 *       finished.
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

    /** Deadlines armed. */
    int armed() {
        return queue.size();
    }

    /** Deadlines visited so far, each due when visited. */
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
            receiver.scheduleGrants(nowNs);
        }
    }

    /**
     * Draft "BUSY": the peer is alive and still knows the RPC, so its RESEND timer restarts and
     * its silence no longer counts; nothing else changes.
     *
     * @return true: the packet is well formed whatever it names
     */
    boolean onBusy(long nowNs, InetSocketAddress from, boolean fromServer, long rpcId) {
        if (fromServer) {
            ClientRpc rpc = rpcs.clientRpc(rpcId, from);
            if (rpc != null) {
                // The engine answers a RESEND with BUSY at once, whatever the handler does: a round
                // trip through the network and the server's event loop.
                if (rpc.resendProbe && !rpc.resendProbeAmbiguous && rpc.server.sampleRtt(rpc.resendProbeSentNs, nowNs)) {
                    counters.rttSamples++;
                }
                rpc.resendProbe = false;
                rpc.heardBusy(nowNs);
            }
        } else {
            ServerRpc rpc = rpcs.serverRpc(from, rpcId);
            if (rpc != null) {
                rpc.heardBusy(nowNs);
            }
        }
        return true;
    }

    private void client(ClientRpc rpc, long nowNs) {
        Peer server = rpc.server;
        boolean waitingOnUs = waitingOnOurselves(rpc, nowNs);
        if (waitingOnUs) {
            rpc.lastHeardNs = nowNs; // the silence that counts is the server's, not ours
        }
        long silentSinceNs = later(server.lastHeardNs, rpc.lastHeardNs);
        long failAtNs = silentSinceNs + config.peerSilenceTimeoutNs();
        if (!waitingOnUs && nowNs - failAtNs >= 0) {
            // Draft "Timeouts": the server said nothing about any RPC of ours for the whole budget.
            rpcs.removeClientRpc(rpc);
            counters.timeouts++;
            events.add(new HomaEvent.RpcFailed(rpc.rpcId, server.address, HomaEvent.Reason.TIMEOUT,
                    (!server.heardFrom ? "never a packet from " + server.address
                            : "no packet from " + server.address + " for "
                                    + (nowNs - silentSinceNs) / 1_000_000 + " ms")
                            + " (peer-silence-timeout " + config.peerSilenceTimeoutNs() / 1_000_000 + " ms), after "
                            + rpc.resendsWithoutAnswer + " RESENDs"));
            return;
        }
        if (nowNs - rpc.nextResendNs >= 0) {
            if (!waitingOnUs && rpc.response != null) {
                receiver.noteSilence(rpc.response);
            }
            if (waitingOnUs) {
                rpc.resendsWithoutAnswer = 0;
                rpc.resendBackoffNs = 0;
            } else if (mayProbe(server, nowNs)) {
                receiver.requestMissingResponse(rpc, nowNs);
                rpc.resendsWithoutAnswer++;
                rpc.resendProbeAmbiguous = rpc.resendProbe;
                rpc.resendProbe = true;
                rpc.resendProbeSentNs = nowNs;
            }
            if (!waitingOnUs) {
                rpc.resendBackoffNs = backedOff(rpc.resendIntervalNs());
            }
            rpc.nextResendNs = nowNs + rpc.resendIntervalNs();
        }
        queue.armAtOrBefore(rpc, waitingOnUs || rpc.nextResendNs - failAtNs < 0 ? rpc.nextResendNs : failAtNs);
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
        // Everything we granted has arrived: the rest waits for our own scheduler.
        boolean waitingOnUs = rpc.request.receivedBytes() >= rpc.request.grantedOffset;
        // The RPC's own silence: a half-open request is not kept by its client's other packets
        // (else a flooder could keep thousands alive by sending anything at all). A live client
        // speaks about it: its DATA, its BUSY, its RESENDs for the response.
        long forgetAtNs = rpc.lastHeardNs + config.peerSilenceTimeoutNs();
        if (waitingOnUs) {
            // Except while it waits for our own scheduler: its client has nothing to say about it
            // (it speaks up only when it stops hearing from us), so it is alive while it talks
            // about anything it holds with us. Forgetting it then failed healthy calls with
            // RPC_UNKNOWN under load; the address's share of the inbound buffer bounds what a
            // flooder can keep this way.
            forgetAtNs = later(forgetAtNs, peer.lastHeardNs + config.peerSilenceTimeoutNs());
        }
        if (nowNs - forgetAtNs >= 0) {
            // Silent about it; never delivered to the application: safe to forget.
            atMostOnce.release(rpc);
            counters.timeouts++;
            return;
        }
        if (nowNs - rpc.nextTimerNs >= 0) {
            if (!waitingOnUs) {
                receiver.noteSilence(rpc.request);
            }
            if (waitingOnUs) {
                rpc.resendsWithoutAnswer = 0;
                rpc.resendBackoffNs = 0;
            } else if (mayProbe(peer, nowNs)) {
                receiver.requestMissing(rpc.request, peer.address, rpc.rpcId | HomaHeader.FROM_SERVER_BIT, nowNs);
                rpc.resendsWithoutAnswer++;
            }
            if (!waitingOnUs) {
                rpc.resendBackoffNs = backedOff(rpc.resendIntervalNs());
            }
            rpc.nextTimerNs = nowNs + rpc.resendIntervalNs();
        }
        queue.armAtOrBefore(rpc, rpc.nextTimerNs - forgetAtNs < 0 ? rpc.nextTimerNs : forgetAtNs);
    }

    /**
     * Whether a RESEND or NEED_ACK may go to {@code peer} now. Always while the peer talks (heard
     * within its RTO): loss recovery is per RPC. While it is silent, the first at once, then one
     * per backoff step of the peer (twice its RTO, doubled each time up to the cap); the others
     * are deferred.
     */
    private boolean mayProbe(Peer peer, long nowNs) {
        long rtoNs = peer.rtt.rtoNs();
        if (nowNs - peer.lastHeardNs < rtoNs) {
            return true;
        }
        if (nowNs - peer.nextProbeNs < 0) {
            counters.resendsDeferred++;
            return false;
        }
        peer.probeBackoffNs = backedOff(peer.probeBackoffNs == 0 ? rtoNs : peer.probeBackoffNs);
        peer.nextProbeNs = nowNs + peer.probeBackoffNs;
        peer.probedSilent = true;
        peer.probedSilentNs = nowNs;
        counters.silentPeerProbes++;
        return true;
    }

    /** The later of two times on the engine's clock (whose origin is arbitrary). */
    private static long later(long aNs, long bNs) {
        return aNs - bNs >= 0 ? aNs : bNs;
    }

    /**
     * A packet about {@code rpcId} was handled (draft "Timeouts"): a peer is alive when it speaks
     * about an RPC we hold with it, before or after this packet (a request's first DATA, an RPC the
     * packet ended). Packets about anything else (a forged BUSY, a stray RPC_UNKNOWN) refresh
     * nobody's liveness.
     *
     * @param heldBefore whether we held the RPC before the packet was handled
     */
    void onPacketAbout(long nowNs, InetSocketAddress peer, boolean fromServer, long rpcId, boolean heldBefore) {
        TimerEntry held = rpcs.held(peer, fromServer, rpcId);
        if (heldBefore || held != null) {
            rpcs.heardFrom(peer, nowNs);
        }
        if (held != null) {
            onHeard(held);
        }
    }

    /**
     * A packet about {@code rpc} arrived and may have moved its next RESEND or NEED_ACK earlier
     * (its backoff ended): arm it there. Deadlines that moved later are left for the queue to
     * find when they fire.
     */
    void onHeard(TimerEntry rpc) {
        if (rpc instanceof ClientRpc client) {
            if (client.state() == ClientRpc.State.SENDING_REQUEST || client.state() == ClientRpc.State.RECEIVING_RESPONSE) {
                queue.armAtOrBefore(client, client.nextResendNs);
            }
        } else if (rpc instanceof ServerRpc server && server.state() == ServerRpc.State.RECEIVING_REQUEST) {
            queue.armAtOrBefore(server, server.nextTimerNs);
        }
    }

    /** The next wait after one of {@code intervalNs} went unanswered: doubled, up to the cap. */
    private long backedOff(long intervalNs) {
        return Math.min(config.maxResendIntervalNs(), Math.max(intervalNs, 2 * intervalNs));
    }

    /** SENDING_RESPONSE or AWAITING_ACK: reclaim if the client is gone; NEED_ACK while awaiting its ACK. */
    private void answered(ServerRpc rpc, long nowNs) {
        Peer peer = rpc.client;
        // A client that talks about other RPCs but never about this one (it forgot it, or its
        // ACKs keep getting lost) is given up too: the rpcid is remembered as finished.
        long reclaimAtNs = (rpc.state() == ServerRpc.State.AWAITING_ACK ? rpc.lastHeardNs
                : Math.max(rpc.lastHeardNs, peer.lastHeardNs)) + params.reclaimAfterNs() + 1;
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
                if (mayProbe(peer, nowNs)) {
                    control.add(PacketType.NEED_ACK, peer.address, rpc.rpcId | HomaHeader.FROM_SERVER_BIT);
                    rpc.resendsWithoutAnswer++;
                }
                rpc.resendBackoffNs = backedOff(rpc.resendIntervalNs());
                rpc.nextTimerNs = nowNs + rpc.resendIntervalNs();
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
