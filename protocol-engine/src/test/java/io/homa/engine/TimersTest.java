package io.homa.engine;

import static io.homa.engine.ComponentRig.OTHER;
import static io.homa.engine.ComponentRig.PEER;
import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.ComponentRig.Sent;
import io.homa.engine.internal.wire.AckHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import io.homa.engine.internal.wire.ResendHeader;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What happens when time passes, driven directly on virtual time. */
class TimersTest {
    private static final long I = EngineConfig.DEFAULT_RESEND_INTERVAL_NS;
    private static final long IDLE_NS = 1_000_000_000L;
    /** Any clock origin works; this one is far from 0. */
    private static final long T0 = 7_000_000_000_000L;

    /** The silence budget: 40 intervals, so the backoff cap is 8 intervals (a fifth of it). */
    private static final long BUDGET_NS = 40 * I;
    private static final long CAP_NS = 8 * I;

    private final ComponentRig rig = new ComponentRig(
            EngineConfig.builder().peerSilenceTimeoutNs(BUDGET_NS).peerIdleTimeoutNs(IDLE_NS).build());

    /**
     * When RESENDs (or NEED_ACKs) go to a silent peer from {@code startNs}, before {@code untilNs}:
     * one RTO (I) after the start, then after waits of 2I, 4I, 8I and the cap from then on.
     */
    private static List<Long> backoffTimes(long startNs, long untilNs) {
        List<Long> times = new ArrayList<>();
        long waitNs = I;
        for (long t = startNs + I; t < untilNs; t += waitNs) {
            times.add(t);
            waitNs = Math.min(CAP_NS, 2 * waitNs);
        }
        return times;
    }

    /** Runs every due deadline until {@code untilNs}, returning when packets of {@code type} went out. */
    private List<Long> runUntil(long untilNs, PacketType type) {
        List<Long> times = new ArrayList<>();
        long nowNs;
        while ((nowNs = rig.timers.nextTimeoutNs()) < untilNs) {
            rig.timers.onTimeout(nowNs);
            for (Sent sent : controlOfType(type)) {
                times.add(nowNs);
            }
        }
        return times;
    }

    private List<Sent> controlOfType(PacketType type) {
        return ComponentRig.ofType(rig.drainControl(), type);
    }

    /** A client RPC whose one-packet request has left at T0: its RESEND timer runs. */
    private ClientRpc sentRequest() {
        ClientRpc rpc = rig.startRequest(T0, PEER, new byte[10]);
        rig.drain(T0);
        assertThat(rpc.timerDeadlineNs).isEqualTo(T0 + I);
        return rpc;
    }

    @Test
    void shouldResendWhenAClientRpcIsDueAndArmItAgain() {
        ClientRpc rpc = sentRequest();
        assertThat(rig.timers.nextTimeoutNs()).isEqualTo(T0 + I);
        rig.timers.onTimeout(T0 + I - 1);
        assertThat(rig.timers.visits()).as("nothing due yet").isZero();
        assertThat(rig.control.isEmpty()).isTrue();

        rig.timers.onTimeout(T0 + I);
        List<Sent> resends = controlOfType(PacketType.RESEND);
        assertThat(resends).hasSize(1);
        ResendHeader resend = new ResendHeader().wrap(resends.get(0).buffer(), 0);
        assertThat(resend.rpcId()).isEqualTo(rpc.rpcId);
        assertThat(resend.resendOffset()).isZero();
        assertThat(resend.length()).as("the response's start").isEqualTo(rig.params.unscheduledBytes());
        assertThat(resends.get(0).to()).isEqualTo(PEER);
        assertThat(rpc.resendsWithoutAnswer).isEqualTo(1);
        assertThat(rpc.timerDeadlineNs).as("unanswered: the next wait is doubled").isEqualTo(T0 + 3 * I);
        assertThat(rig.timers.visits()).isEqualTo(1);
        assertThat(rig.counters.resendsSent()).isEqualTo(1);
    }

    @Test
    void shouldBackOffThenTimeOutExactlyAtTheSilenceBudget() {
        ClientRpc rpc = sentRequest();
        List<Long> resends = runUntil(T0 + BUDGET_NS, PacketType.RESEND);
        assertThat(resends).as("RESENDs at I, 3I, 7I, 15I, then every 8I").isEqualTo(backoffTimes(T0, T0 + BUDGET_NS));
        assertThat(rig.events).isEmpty();
        assertThat(rig.timers.nextTimeoutNs()).as("the budget's end is a deadline of its own").isEqualTo(T0 + BUDGET_NS);
        rig.timers.onTimeout(T0 + BUDGET_NS);
        assertThat(rig.control.isEmpty()).as("no RESEND at the end").isTrue();
        HomaEvent.RpcFailed failed = (HomaEvent.RpcFailed) rig.events.poll();
        assertThat(failed.rpcId()).isEqualTo(rpc.rpcId);
        assertThat(failed.server()).isEqualTo(PEER);
        assertThat(failed.reason()).isEqualTo(HomaEvent.Reason.TIMEOUT);
        assertThat(failed.detail()).contains("never a packet from").contains(resends.size() + " RESENDs")
                .contains("peer-silence-timeout 400 ms");
        assertThat(rpc.state()).isEqualTo(ClientRpc.State.DONE);
        assertThat(rpc.timerArmed()).isFalse();
        assertThat(rig.rpcs.clientRpc(rpc.rpcId)).isNull();
        assertThat(rig.counters.timeouts()).isEqualTo(1);
        assertThat(rig.events).isEmpty();
    }

    @Test
    void shouldNotTimeOutWhileTheServerIsHeardFromAtAll() {
        ClientRpc rpc = sentRequest();
        runUntil(T0 + 30 * I, PacketType.RESEND);
        // Some packet from the server about another RPC we hold with it arrived: it is alive.
        long heardNs = T0 + 30 * I;
        rig.rpcs.heardFrom(PEER, heardNs);
        runUntil(T0 + BUDGET_NS + 1, PacketType.RESEND);
        assertThat(rig.events).as("not silent for the whole budget").isEmpty();
        assertThat(rpc.state()).isEqualTo(ClientRpc.State.SENDING_REQUEST);
        // Silence from then on for the whole budget: it fails, naming the silence.
        runUntil(heardNs + BUDGET_NS, PacketType.RESEND);
        assertThat(rig.events).isEmpty();
        rig.timers.onTimeout(heardNs + BUDGET_NS);
        HomaEvent.RpcFailed failed = (HomaEvent.RpcFailed) rig.events.poll();
        assertThat(failed.reason()).isEqualTo(HomaEvent.Reason.TIMEOUT);
        assertThat(failed.detail()).contains("no packet from").contains("for 400 ms");
    }

    @Test
    void shouldSendOneProbePerBackoffStepToASilentPeerNotOnePerRpc() {
        List<ClientRpc> waiting = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            waiting.add(sentRequestTo(PEER));
        }
        List<Long> probes = runUntil(T0 + BUDGET_NS, PacketType.RESEND);
        assertThat(probes).as("one RESEND per step of the peer, whatever the number of RPCs")
                .hasSizeLessThanOrEqualTo(backoffTimes(T0, T0 + BUDGET_NS).size() + 1);
        assertThat(rig.counters.silentPeerProbes()).isEqualTo(probes.size());
        assertThat(rig.counters.resendsDeferred()).as("the other RPCs' RESENDs").isGreaterThan(20);

        // The peer talks again (about one of its RPCs): loss recovery is per RPC once more.
        long heardNs = T0 + BUDGET_NS - I / 2;
        rig.rpcs.heardFrom(PEER, heardNs);
        for (ClientRpc rpc : waiting) {
            rpc.heard(heardNs); // as a packet about each does
            rig.timers.onHeard(rpc);
        }
        rig.rpcs.heardFrom(PEER, heardNs + I - 1); // and keeps talking
        rig.timers.onTimeout(heardNs + I);
        assertThat(controlOfType(PacketType.RESEND)).as("each RPC asks for its own bytes").hasSize(20);
        assertThat(rig.events).isEmpty();
    }

    @Test
    void shouldArmAgainNotActWhenTheRealDeadlineMovedLater() {
        ClientRpc rpc = sentRequest();
        rpc.heard(T0 + I / 2); // a packet from the server: RESEND now due at T0 + 1.5 I
        assertThat(rpc.timerDeadlineNs).as("the heap is not touched").isEqualTo(T0 + I);

        rig.timers.onTimeout(T0 + I);
        assertThat(rig.timers.visits()).as("the stale deadline is visited once").isEqualTo(1);
        assertThat(rig.control.isEmpty()).as("nothing is due for the RPC").isTrue();
        assertThat(rpc.resendsWithoutAnswer).isZero();
        assertThat(rpc.timerArmed()).isTrue();
        assertThat(rpc.timerDeadlineNs).isEqualTo(T0 + I + I / 2);

        rig.timers.onTimeout(T0 + I + I / 2);
        assertThat(controlOfType(PacketType.RESEND)).hasSize(1);
        assertThat(rpc.timerDeadlineNs).isEqualTo(T0 + 3 * I + I / 2);
    }

    @Test
    void shouldNotResendWhileTheResponseWaitsForOurOwnGrants() {
        ClientRpc rpc = sentRequest();
        // Every byte we granted has arrived; the rest waits for our grant scheduler.
        rpc.response = new InboundMessage(5_000, 1_000, rpc.server, rpc.rpcId);
        rpc.response.received.add(0, 1_000);
        rpc.moveTo(ClientRpc.State.RECEIVING_RESPONSE);
        for (int i = 1; i <= 100; i++) {
            rig.timers.onTimeout(T0 + i * I);
        }
        assertThat(rig.control.isEmpty()).as("no RESEND for bytes not granted").isTrue();
        assertThat(rig.events).as("and no timeout, however long past the budget").isEmpty();
        assertThat(rpc.resendsWithoutAnswer).isZero();
        assertThat(rpc.timerDeadlineNs).isEqualTo(T0 + 101 * I);
    }

    @Test
    void shouldSendNeedAckWhileAwaitingAckThenGiveUp() {
        ServerRpc rpc = rig.serverRpcInService(T0, PEER, 100, 10);
        rig.sender.respond(rpc, new byte[][] {new byte[10]}, 0L);
        rig.drain(T0);
        assertThat(rpc.state()).isEqualTo(ServerRpc.State.AWAITING_ACK);
        assertThat(rpc.timerDeadlineNs).isEqualTo(T0 + I);

        rig.timers.onTimeout(T0 + I);
        List<Sent> needAcks = controlOfType(PacketType.NEED_ACK);
        assertThat(needAcks).hasSize(1);
        assertThat(needAcks.get(0).wireRpcId()).as("from the server: S bit").isEqualTo(100 | HomaHeader.FROM_SERVER_BIT);
        assertThat(needAcks.get(0).to()).isEqualTo(PEER);
        assertThat(rpc.timerDeadlineNs).as("doubled").isEqualTo(T0 + 3 * I);
        long reclaimNs = T0 + 2 * BUDGET_NS + 1;
        List<Long> later = runUntil(reclaimNs, PacketType.NEED_ACK);
        assertThat(later).as("backed off").isEqualTo(backoffTimes(T0, reclaimNs).subList(1, later.size() + 1));
        assertThat(later.size() + 1).isEqualTo(backoffTimes(T0, reclaimNs).size());
        assertThat(rpc.state()).isEqualTo(ServerRpc.State.AWAITING_ACK);
        rig.timers.onTimeout(reclaimNs);
        assertThat(rig.control.isEmpty()).isTrue();
        assertThat(rpc.state()).as("client silent for twice the budget").isEqualTo(ServerRpc.State.DEAD);
        assertThat(rig.rpcs.serverRpc(PEER, 100)).isNull();
        assertThat(rpc.client.finished.contains(100)).as("executed: never again").isTrue();
        assertThat(rig.counters.timeouts()).isEqualTo(1);
    }

    @Test
    void shouldAskForMissingRequestBytesThenForgetASilentClient() {
        byte[] request = new byte[4_000];
        int version = rig.cutoffs.version();
        rig.onData(T0, PEER, ComponentRig.data(100, request, 4_000, 0, 1_416, version));
        rig.onData(T0, PEER, ComponentRig.data(100, request, 4_000, 2_832, 1_168, version));
        ServerRpc rpc = rig.rpcs.serverRpc(PEER, 100);
        rig.drainControl();
        rig.timers.onTimeout(T0 + I);
        List<Sent> resends = controlOfType(PacketType.RESEND);
        assertThat(resends).hasSize(1);
        ResendHeader resend = new ResendHeader().wrap(resends.get(0).buffer(), 0);
        assertThat(resend.rpcId()).isEqualTo(100 | HomaHeader.FROM_SERVER_BIT);
        assertThat(resend.resendOffset()).isEqualTo(1_416);
        assertThat(resend.length()).isEqualTo(1_416);
        List<Long> later = runUntil(T0 + BUDGET_NS, PacketType.RESEND);
        assertThat(later).as("backed off").isEqualTo(backoffTimes(T0, T0 + BUDGET_NS).subList(1, later.size() + 1));
        assertThat(rpc.state()).isEqualTo(ServerRpc.State.RECEIVING_REQUEST);
        rig.timers.onTimeout(T0 + BUDGET_NS);
        assertThat(rig.control.isEmpty()).isTrue();
        assertThat(rpc.state()).isEqualTo(ServerRpc.State.DEAD);
        assertThat(rig.rpcs.serverRpc(PEER, 100)).isNull();
        assertThat(rpc.client.finished.contains(100)).as("never delivered: a retry may execute").isFalse();
        assertThat(rig.rpcs.inboundBufferedBytes()).isZero();
        assertThat(rig.events).isEmpty();
        assertThat(rig.counters.timeouts()).isEqualTo(1);
    }

    /**
     * A request whose granted bytes have all arrived waits for our own grant scheduler (here busy
     * with a shorter request): its client has nothing to say about it and stays quiet while it
     * hears from us. It is kept as long as the client talks about anything it holds with us, and
     * forgotten only once the client itself falls silent.
     */
    @Test
    void shouldKeepARequestThatWaitsForOurGrantsWhileItsClientTalks() {
        ComponentRig rig = new ComponentRig(EngineConfig.builder().peerSilenceTimeoutNs(BUDGET_NS)
                .peerIdleTimeoutNs(IDLE_NS).maxOvercommit(1).build());
        int version = rig.cutoffs.version();
        int payload = rig.params.payloadBytes();
        byte[] shorter = new byte[190_000];
        byte[] longer = new byte[200_000];
        rig.onData(T0, OTHER, ComponentRig.data(200, shorter, payload, 0, payload, version));
        rig.onData(T0, PEER, ComponentRig.data(100, longer, payload, 0, payload, version));
        ServerRpc waiting = rig.rpcs.serverRpc(PEER, 100);
        assertThat(waiting.request.grantedOffset).as("all it was granted has arrived").isEqualTo(payload);
        long nowNs = T0;
        for (int k = 1; k <= 80; k++) {
            nowNs = T0 + k * I;
            // The shorter request trickles in (its client alive); the longer one's client talks about another RPC.
            rig.onData(nowNs, OTHER, ComponentRig.data(200, shorter, k * payload, k * payload, payload, version));
            rig.rpcs.serverRpc(OTHER, 200).lastHeardNs = nowNs;
            rig.rpcs.heardFrom(PEER, nowNs);
            rig.timers.onTimeout(nowNs);
        }
        assertThat(nowNs - T0).as("twice the silence budget").isEqualTo(2 * BUDGET_NS);
        assertThat(rig.rpcs.serverRpc(PEER, 100)).as("kept").isSameAs(waiting);
        assertThat(waiting.state()).isEqualTo(ServerRpc.State.RECEIVING_REQUEST);
        assertThat(rig.counters.timeouts()).isZero();

        // The client falls silent: the request is forgotten a silence budget after its last word.
        long silentFromNs = nowNs;
        while (nowNs - silentFromNs <= BUDGET_NS) {
            nowNs += I;
            rig.timers.onTimeout(nowNs);
        }
        assertThat(rig.rpcs.serverRpc(PEER, 100)).isNull();
        assertThat(rig.counters.timeouts()).isPositive();
    }

    @Test
    void shouldFlushOwedAcksAtTheirDeadline() {
        Peer server = rig.rpcs.peer(PEER, T0);
        rig.atMostOnce.owe(server, 100, T0);
        long flushNs = T0 + rig.params.ackDelayNs();
        rig.timers.onTimeout(flushNs - 1);
        assertThat(rig.control.isEmpty()).isTrue();
        rig.timers.onTimeout(flushNs);
        List<Sent> acks = controlOfType(PacketType.ACK);
        assertThat(acks).hasSize(1);
        assertThat(new AckHeader().wrap(acks.get(0).buffer(), 0).rpcId()).isEqualTo(100);
        assertThat(server.pendingAckCount).isZero();
        assertThat(rig.rpcs.knownPeer(PEER)).as("not idle long enough to be forgotten").isSameAs(server);
        assertThat(server.timerDeadlineNs).as("back to its idle expiry").isEqualTo(T0 + IDLE_NS + 1);
    }

    @Test
    void shouldForgetAnIdlePeerAfterPeerIdleTimeout() {
        Peer peer = rig.rpcs.peer(OTHER, T0);
        rig.timers.onTimeout(T0 + IDLE_NS);
        assertThat(rig.rpcs.knownPeer(OTHER)).isSameAs(peer);
        assertThat(rig.timers.visits()).isZero();
        rig.timers.onTimeout(T0 + IDLE_NS + 1);
        assertThat(rig.rpcs.knownPeer(OTHER)).isNull();
        assertThat(peer.timerArmed()).isFalse();
        assertThat(rig.counters.peersForgotten()).isEqualTo(1);
        assertThat(rig.timers.visits()).isEqualTo(1);
        assertThat(rig.timers.nextTimeoutNs()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void shouldKeepAPeerThatIsBusyOrHeardFromRecently() {
        ClientRpc rpc = rig.startRequest(T0, PEER, new byte[10]); // in progress (still queued, no timer)
        Peer heard = rig.rpcs.peer(OTHER, T0);
        heard.lastHeardNs = T0 + IDLE_NS / 2;
        long dueNs = T0 + IDLE_NS + 1;
        rig.timers.onTimeout(dueNs);
        assertThat(rig.timers.visits()).isEqualTo(2);
        assertThat(rig.rpcs.knownPeer(PEER)).isSameAs(rpc.server);
        assertThat(rpc.server.timerDeadlineNs).as("checked again an idle timeout later").isEqualTo(dueNs + IDLE_NS);
        assertThat(rig.rpcs.knownPeer(OTHER)).isSameAs(heard);
        assertThat(heard.timerDeadlineNs).as("idle timeout after it was last heard").isEqualTo(T0 + IDLE_NS / 2 + IDLE_NS + 1);
        assertThat(rig.counters.peersForgotten()).isZero();
    }

    @Test
    void shouldVisitOnlyDueEntries() {
        List<Peer> peers = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            peers.add(rig.rpcs.peer(new InetSocketAddress("10.1.0." + (i + 1), 5000), T0 + i * 1_000L));
        }
        List<ClientRpc> rpcs = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            rpcs.add(sentRequestTo(PEER));
        }
        // At T0 + I the 20 RPCs are due; no peer is.
        rig.timers.onTimeout(T0 + I);
        assertThat(rig.timers.visits()).isEqualTo(20);
        rig.drainControl();
        rig.timers.onTimeout(T0 + I);
        assertThat(rig.timers.visits()).as("nothing is due twice").isEqualTo(20);

        // Remove the RPCs so that only the idle expiries remain: PEER's and 10 of the 50 are due.
        rpcs.forEach(rig.rpcs::removeClientRpc);
        rig.timers.onTimeout(T0 + IDLE_NS + 1 + 9_000);
        assertThat(rig.timers.visits()).isEqualTo(20 + 11);
        assertThat(rig.counters.peersForgotten()).isEqualTo(11);
        assertThat(rig.rpcs.knownPeer(PEER)).isNull();
        for (int i = 0; i < 50; i++) {
            InetSocketAddress address = peers.get(i).address;
            assertThat(rig.rpcs.knownPeer(address)).as("peer %d", i).isEqualTo(i < 10 ? null : peers.get(i));
        }
    }

    private ClientRpc sentRequestTo(InetSocketAddress server) {
        ClientRpc rpc = rig.startRequest(T0, server, new byte[10]);
        rig.drain(T0);
        return rpc;
    }
}
