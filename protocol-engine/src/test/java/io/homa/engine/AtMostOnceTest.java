package io.homa.engine;

import static io.homa.engine.ComponentRig.OTHER;
import static io.homa.engine.ComponentRig.PEER;
import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.ComponentRig.Sent;
import io.homa.engine.internal.wire.AckHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** ACK, NEED_ACK's counterpart and RPC_UNKNOWN: a request executes at most once. */
class AtMostOnceTest {
    private final ComponentRig rig = new ComponentRig();

    /** A server RPC whose response was sent in full and waits for the client's ACK. */
    private ServerRpc awaitingAck(long rpcId) {
        ServerRpc rpc = rig.serverRpcInService(0, PEER, rpcId, 10);
        rig.sender.respond(rpc, new byte[][] {new byte[10]}, 0L);
        rig.drain(0);
        assertThat(rpc.state()).isEqualTo(ServerRpc.State.AWAITING_ACK);
        assertThat(rpc.timerArmed()).isTrue();
        return rpc;
    }

    @Test
    void shouldTellWhyTheServerNoLongerKnowsAnRpcWhenItSays() {
        ClientRpc budget = rig.startRequest(0, PEER, new byte[10]);
        ClientRpc other = rig.startRequest(0, PEER, new byte[10]);
        rig.atMostOnce.onRpcUnknown(PEER, true, budget.rpcId, HomaHeader.REASON_RETRANSMIT_BUDGET);
        rig.atMostOnce.onRpcUnknown(PEER, true, other.rpcId, 0);
        assertThat(rig.events).hasSize(2).allSatisfy(e -> assertThat(((HomaEvent.RpcFailed) e).reason())
                .isEqualTo(HomaEvent.Reason.SERVER_LOST_RPC));
        assertThat(((HomaEvent.RpcFailed) rig.events.poll()).detail())
                .contains("retransmission budget").contains("the request was executed");
        assertThat(((HomaEvent.RpcFailed) rig.events.poll()).detail()).contains("no longer knows the RPC")
                .doesNotContain("budget");
    }

    @Test
    void shouldReleaseEveryRpcAnAckNamesAndRememberThem() {
        ServerRpc header = awaitingAck(10);
        ServerRpc listed1 = awaitingAck(12);
        ServerRpc listed2 = awaitingAck(14);
        ServerRpc untouched = awaitingAck(16);
        assertThat(rig.onAck(PEER, ComponentRig.ack(10, 12, 14))).isTrue();
        for (ServerRpc rpc : List.of(header, listed1, listed2)) {
            assertThat(rpc.state()).as("rpc %d", rpc.rpcId).isEqualTo(ServerRpc.State.DEAD);
            assertThat(rpc.timerArmed()).isFalse();
            assertThat(rig.rpcs.serverRpc(PEER, rpc.rpcId)).isNull();
            assertThat(rpc.client.finished.contains(rpc.rpcId)).as("rpc %d finished", rpc.rpcId).isTrue();
        }
        assertThat(untouched.state()).isEqualTo(ServerRpc.State.AWAITING_ACK);
        assertThat(untouched.client.finished.contains(16)).isFalse();
        assertThat(rig.rpcs.serverRpcCount()).isEqualTo(1);
    }

    @Test
    void shouldIgnoreAckedRpcIdsAboveTheHighestReceived() {
        awaitingAck(14);
        Peer client = rig.rpcs.knownPeer(PEER);
        // A forged ACK: the real RPC, plus rpcids never received.
        assertThat(rig.onAck(PEER, ComponentRig.ack(14, 16, 1_000, 1L << 62))).isTrue();
        assertThat(client.finished.contains(14)).isTrue();
        assertThat(client.finished.contains(16)).as("never received: not finished").isFalse();
        assertThat(client.finished.contains(1_000)).isFalse();
        assertThat(client.finished.floorRpcId()).isLessThanOrEqualTo(14);
        // So the client's next request still executes.
        assertThat(rig.onData(0, PEER, ComponentRig.data(16, new byte[10], 10, 0, 10, rig.cutoffs.version()))).isTrue();
        assertThat(rig.events).hasSize(1);
        assertThat(((HomaEvent.RequestReceived) rig.events.poll()).rpcId()).isEqualTo(16);
    }

    @Test
    void shouldRememberAnAckedRpcIdWhoseStateIsAlreadyGone() {
        awaitingAck(20);
        Peer client = rig.rpcs.knownPeer(PEER);
        assertThat(rig.onAck(PEER, ComponentRig.ack(8))).isTrue();
        assertThat(client.finished.contains(8)).isTrue();
        assertThat(rig.rpcs.serverRpcCount()).isEqualTo(1);
    }

    @Test
    void shouldRejectMalformedAcksAndIgnoreUnknownClients() {
        ServerRpc rpc = awaitingAck(10);
        ByteBuffer fromServer = ComponentRig.ack(10 | HomaHeader.FROM_SERVER_BIT);
        assertThat(rig.onAck(PEER, fromServer)).as("only clients ACK").isFalse();
        ByteBuffer truncated = ComponentRig.ack(10, 12, 14);
        truncated.limit(AckHeader.packetLength(1));
        assertThat(rig.onAck(PEER, truncated)).as("lists more than it holds").isFalse();
        assertThat(rpc.state()).isEqualTo(ServerRpc.State.AWAITING_ACK);

        assertThat(rig.onAck(OTHER, ComponentRig.ack(10))).as("well-formed").isTrue();
        assertThat(rig.rpcs.knownPeer(OTHER)).as("a packet alone creates no peer").isNull();
        assertThat(rpc.state()).as("another client's rpcid 10").isEqualTo(ServerRpc.State.AWAITING_ACK);
    }

    @Test
    void shouldNotRememberAnRpcReleasedBeforeDelivery() {
        assertThat(rig.onData(0, PEER, ComponentRig.data(30, new byte[5_000], 5_000, 0, 1_416, rig.cutoffs.version())))
                .isTrue();
        ServerRpc rpc = rig.rpcs.serverRpc(PEER, 30);
        assertThat(rpc.state()).isEqualTo(ServerRpc.State.RECEIVING_REQUEST);
        rig.atMostOnce.release(rpc);
        assertThat(rpc.state()).isEqualTo(ServerRpc.State.DEAD);
        assertThat(rpc.client.finished.contains(30)).as("never executed: a retry may run").isFalse();
        assertThat(rig.rpcs.inboundBufferedBytes()).isZero();
    }

    @Test
    void shouldRememberAnAbortedRequestAsFinished() {
        ServerRpc rpc = rig.serverRpcInService(0, PEER, 40, 10);
        rig.atMostOnce.abort(rpc);
        assertThat(rpc.state()).isEqualTo(ServerRpc.State.DEAD);
        assertThat(rig.rpcs.serverRpc(PEER, 40)).isNull();
        assertThat(rpc.client.finished.contains(40)).isTrue();
    }

    @Test
    void shouldFailTheClientRpcWhenItsServerAnswersRpcUnknown() {
        ClientRpc rpc = rig.startRequest(0, PEER, new byte[10]);
        rig.drain(0);
        rig.atMostOnce.onRpcUnknown(OTHER, true, rpc.rpcId, 0);
        assertThat(rig.events).as("another host cannot speak for the RPC").isEmpty();
        assertThat(rpc.state()).isEqualTo(ClientRpc.State.SENDING_REQUEST);

        rig.atMostOnce.onRpcUnknown(PEER, true, rpc.rpcId, 0);
        HomaEvent.RpcFailed failed = (HomaEvent.RpcFailed) rig.events.poll();
        assertThat(failed.rpcId()).isEqualTo(rpc.rpcId);
        assertThat(failed.server()).isEqualTo(PEER);
        assertThat(failed.reason()).isEqualTo(HomaEvent.Reason.SERVER_LOST_RPC);
        assertThat(rpc.state()).isEqualTo(ClientRpc.State.DONE);
        assertThat(rpc.timerArmed()).isFalse();
        assertThat(rig.rpcs.clientRpc(rpc.rpcId)).isNull();
        assertThat(rpc.request.abandoned).isTrue();

        rig.atMostOnce.onRpcUnknown(PEER, true, rpc.rpcId, 0);
        assertThat(rig.events).as("one event per RPC").isEmpty();
    }

    @Test
    void shouldReleaseTheServerRpcWhenItsClientAnswersRpcUnknown() {
        ServerRpc rpc = awaitingAck(50);
        rig.atMostOnce.onRpcUnknown(PEER, false, 50, 0);
        assertThat(rpc.state()).isEqualTo(ServerRpc.State.DEAD);
        assertThat(rpc.client.finished.contains(50)).isTrue();
    }

    @Test
    void shouldArmTheAckFlushWhenTheFirstAckIsOwed() {
        Peer server = rig.rpcs.peer(PEER, 0);
        long idleExpiryNs = server.timerDeadlineNs;
        rig.atMostOnce.owe(server, 100, 1_000);
        assertThat(server.ackFlushNs).isEqualTo(1_000 + rig.params.ackDelayNs());
        assertThat(server.timerDeadlineNs).as("moved earlier than the idle expiry").isEqualTo(server.ackFlushNs)
                .isLessThan(idleExpiryNs);
        rig.atMostOnce.owe(server, 102, 5_000);
        assertThat(server.ackFlushNs).as("the oldest owed ack sets the flush time").isEqualTo(1_000 + rig.params.ackDelayNs());
        assertThat(server.pendingAckCount).isEqualTo(2);
    }

    @Test
    void shouldFlushEveryOwedAckInAckPackets() {
        Peer server = rig.rpcs.peer(PEER, 0);
        Set<Long> owed = new HashSet<>();
        for (long id = 100; id < 100 + 2 * 130; id += 2) {
            rig.atMostOnce.owe(server, id, 0);
            owed.add(id);
        }
        rig.atMostOnce.flushAcks(server);
        assertThat(server.pendingAckCount).isZero();
        List<Sent> acks = rig.drainControl();
        int perPacket = rig.params.maxAcksPerPacket() + 1; // the header's rpcid and the listed ones
        assertThat(acks).hasSize((130 + perPacket - 1) / perPacket);
        Set<Long> acked = new HashSet<>();
        for (Sent packet : acks) {
            assertThat(packet.type()).isEqualTo(PacketType.ACK);
            assertThat(packet.to()).isEqualTo(PEER);
            AckHeader header = new AckHeader().wrap(packet.buffer(), 0);
            assertThat(header.fromServer()).isFalse();
            assertThat(acked.add(header.rpcId())).isTrue();
            for (int i = 0; i < header.numAcks(); i++) {
                assertThat(acked.add(header.ackRpcId(i))).as("acked once").isTrue();
            }
        }
        assertThat(acked).isEqualTo(owed);

        rig.atMostOnce.flushAcks(server);
        assertThat(rig.control.isEmpty()).as("nothing owed: nothing sent").isTrue();
    }

    @Test
    void shouldReleaseServerStateWhenTheFlushedAcksArrive() {
        // The client's flushed ACK, fed to a server that holds those RPCs: every one is released.
        ComponentRig server = new ComponentRig();
        for (long id = 100; id < 100 + 2 * 70; id += 2) {
            ServerRpc rpc = server.serverRpcInService(0, PEER, id, 10);
            server.sender.respond(rpc, new byte[][] {new byte[1]}, 0L);
            rig.atMostOnce.owe(rig.rpcs.peer(PEER, 0), id, 0);
        }
        server.drain(0);
        assertThat(server.rpcs.serverRpcCount()).isEqualTo(70);
        rig.atMostOnce.flushAcks(rig.rpcs.knownPeer(PEER));
        for (Sent packet : rig.drainControl()) {
            assertThat(server.onAck(PEER, packet.buffer())).isTrue();
        }
        assertThat(server.rpcs.serverRpcCount()).isZero();
    }
}
