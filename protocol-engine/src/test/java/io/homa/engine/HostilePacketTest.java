package io.homa.engine;

import static io.homa.engine.ComponentRig.PEER;
import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.ComponentRig.Sent;
import io.homa.engine.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Well-formed packets an attacker can forge without keys (issue 14, "budgets that hold without
 * keys"): each may not drop, corrupt or amplify anything of a legitimate peer's, and each is
 * counted.
 */
class HostilePacketTest {

    private static final long RPC_ID = 40;

    @Test
    void shouldKeepAnRpcWhoseResponseHasNotGoneOutInFullWhenAnAckNamesIt() {
        ComponentRig rig = new ComponentRig();
        ServerRpc rpc = rig.serverRpcInService(0, PEER, RPC_ID, 100);

        assertThat(rig.onAck(PEER, ComponentRig.ack(RPC_ID))).isTrue();
        assertThat(rig.rpcs.serverRpc(PEER, RPC_ID)).as("in service: no client can have its response").isSameAs(rpc);

        // A response longer than the unscheduled bytes goes out in part; an ack is still forged.
        int length = rig.params.unscheduledBytes() + 10 * rig.payload();
        rig.sender.respond(rpc, ComponentRig.pattern(length, 1));
        assertThat(rig.drain(0)).isNotEmpty();
        assertThat(rpc.response.nextOffset).isLessThan(length);
        assertThat(rig.onAck(PEER, ComponentRig.ack(2, RPC_ID))).isTrue();
        assertThat(rig.rpcs.serverRpc(PEER, RPC_ID)).isSameAs(rpc);
        assertThat(rig.counters.acksIgnored()).isEqualTo(2);

        // Once every byte went out, the client's ACK releases it and the rpcid counts as finished.
        rig.onGrant(0, PEER, ComponentRig.grant(RPC_ID, length, 0));
        rig.drain(1_000_000_000L);
        assertThat(rpc.response.nextOffset).isEqualTo(length);
        assertThat(rig.onAck(PEER, ComponentRig.ack(RPC_ID))).isTrue();
        assertThat(rig.rpcs.serverRpc(PEER, RPC_ID)).isNull();
        assertThat(rig.rpcs.peer(PEER, 0).finished.contains(RPC_ID)).isTrue();
        assertThat(rig.counters.acksIgnored()).isEqualTo(2);
    }

    @Test
    void shouldTakeAnAckListingMoreRpcidsThanOurSendersPutInOnePacketAsMalformed() {
        ComponentRig rig = new ComponentRig();
        rig.serverRpcInService(0, PEER, RPC_ID, 100);
        long[] listed = new long[AtMostOnce.MAX_ACKS_PER_PACKET + 1];
        for (int i = 0; i < listed.length; i++) {
            listed[i] = 2 + 2L * i;
        }
        assertThat(rig.onAck(PEER, ComponentRig.ack(2, listed))).isFalse();
        assertThat(rig.onAck(PEER, ComponentRig.ack(2, java.util.Arrays.copyOf(listed, listed.length - 1)))).isTrue();
        assertThat(rig.params.maxAcksPerPacket()).isLessThanOrEqualTo(AtMostOnce.MAX_ACKS_PER_PACKET);
    }

    @Test
    void shouldForgetARequestWhoseOverlappingSegmentsDisagree() {
        ComponentRig rig = new ComponentRig();
        byte[] request = ComponentRig.pattern(3_000, 2);
        byte[] forged = request.clone();
        forged[700] ^= 1;

        assertThat(rig.onData(0, PEER, ComponentRig.data(RPC_ID, request, 3_000, 0, 1_000, 0))).isTrue();
        // The same bytes again (a retransmission) are a duplicate, not a conflict.
        assertThat(rig.onData(0, PEER, ComponentRig.data(RPC_ID, request, 3_000, 500, 1_000, 0))).isTrue();
        assertThat(rig.counters.conflictingDataPackets()).isZero();
        assertThat(rig.rpcs.serverRpc(PEER, RPC_ID)).isNotNull();

        // Bytes 500..1000 arrived before; byte 700 now differs.
        assertThat(rig.onData(0, PEER, ComponentRig.data(RPC_ID, forged, 3_000, 600, 1_000, 0))).isTrue();
        assertThat(rig.counters.conflictingDataPackets()).isEqualTo(1);
        assertThat(rig.rpcs.serverRpc(PEER, RPC_ID)).as("not executed: forgotten").isNull();
        assertThat(rig.events).isEmpty();
        assertThat(rig.counters.malformedPackets()).isZero();
    }

    @Test
    void shouldFailAResponseWhoseOverlappingSegmentsDisagree() {
        ComponentRig rig = new ComponentRig();
        ClientRpc rpc = rig.startRequest(0, PEER, new byte[100]);
        rig.drain(0);
        byte[] response = ComponentRig.pattern(3_000, 3);
        byte[] forged = response.clone();
        forged[1_999] ^= 0x40;
        long wireRpcId = rpc.rpcId | HomaHeader.FROM_SERVER_BIT;

        assertThat(rig.onData(0, PEER, ComponentRig.data(wireRpcId, response, 3_000, 1_000, 1_000, 0))).isTrue();
        assertThat(rig.onData(0, PEER, ComponentRig.data(wireRpcId, forged, 3_000, 0, 2_000, 0))).isTrue();

        assertThat(rig.counters.conflictingDataPackets()).isEqualTo(1);
        assertThat(rig.rpcs.clientRpc(rpc.rpcId, PEER)).isNull();
        HomaEvent.RpcFailed failed = (HomaEvent.RpcFailed) rig.events.poll();
        assertThat(failed.reason()).isEqualTo(HomaEvent.Reason.PROTOCOL_ERROR);
        assertThat(failed.detail()).contains("offset 0", "differs");
        assertThat(rig.events).isEmpty();
    }

    /** The amplification attack: forged RESENDs for a stored response, spoofing its client. */
    @Test
    void shouldRetransmitAStoredResponseAtMostItsBudgetThenDropItAndSayRpcUnknown() {
        ComponentRig rig = new ComponentRig();
        ServerRpc rpc = rig.serverRpcInService(0, PEER, RPC_ID, 100);
        int length = 20_000;
        long budgetBytes = (long) Sender.RETRANSMIT_BUDGET_FACTOR * Sender.RETRANSMIT_BUDGET_FLOOR_BYTES;
        rig.sender.respond(rpc, ComponentRig.pattern(length, 4));
        long firstBytes = payloadBytes(rig.drain(0));
        assertThat(firstBytes).isEqualTo(length);

        long retransmittedBytes = 0;
        List<Sent> last = List.of();
        int rounds = (int) (budgetBytes / length) + 5;
        for (int i = 1; i <= rounds; i++) {
            long nowNs = i * 10_000_000L; // the pacer lets each round out
            rig.onResend(nowNs, PEER, ComponentRig.resend(RPC_ID, 0, length));
            last = rig.drain(nowNs);
            retransmittedBytes += payloadBytes(last);
        }
        // Whole rounds while the budget lasts; the round that would pass it is not sent.
        assertThat(retransmittedBytes).isEqualTo(budgetBytes / length * length);
        assertThat(rig.counters.retransmitBudgetExceeded()).isEqualTo(1);
        assertThat(rig.rpcs.serverRpc(PEER, RPC_ID)).isNull();
        assertThat(rig.rpcs.peer(PEER, 0).finished.contains(RPC_ID)).as("never executed again").isTrue();
        assertThat(ComponentRig.ofType(last, PacketType.RPC_UNKNOWN)).as("later RESENDs").hasSize(1);
    }

    @Test
    void shouldNotCountLossRecoveryAgainstTheBudget() {
        ComponentRig rig = new ComponentRig();
        ServerRpc rpc = rig.serverRpcInService(0, PEER, RPC_ID, 100);
        int length = 20_000;
        rig.sender.respond(rpc, ComponentRig.pattern(length, 5));
        rig.drain(0);
        // Each packet of the response asked for once more, one by one, as a lossy path would.
        int payload = rig.payload();
        long retransmittedBytes = 0;
        for (int offset = 0; offset < length; offset += payload) {
            long nowNs = (offset / payload + 1) * 10_000_000L;
            rig.onResend(nowNs, PEER, ComponentRig.resend(RPC_ID, offset, payload));
            retransmittedBytes += payloadBytes(rig.drain(nowNs));
        }
        assertThat(retransmittedBytes).isEqualTo(length);
        assertThat(rig.counters.retransmitBudgetExceeded()).isZero();
        assertThat(rig.rpcs.serverRpc(PEER, RPC_ID)).isSameAs(rpc);
    }

    /** Requests have no budget: a server short of buffer space asks for one over and over. */
    @Test
    void shouldSendARequestAgainAsOftenAsItsServerAsks() {
        ComponentRig rig = new ComponentRig();
        int length = 100_000;
        ClientRpc rpc = rig.startRequest(0, PEER, ComponentRig.pattern(length, 6));
        rig.onGrant(0, PEER, ComponentRig.grant(rpc.rpcId | HomaHeader.FROM_SERVER_BIT, length, 0));
        rig.drain(1_000_000_000L);
        assertThat(rpc.request.nextOffset).isEqualTo(length);
        long retransmittedBytes = 0;
        int rounds = 2 * Sender.RETRANSMIT_BUDGET_FACTOR;
        for (int i = 1; i <= rounds; i++) {
            long nowNs = (i + 1) * 1_000_000_000L;
            rig.onResend(nowNs, PEER, ComponentRig.resend(rpc.rpcId | HomaHeader.FROM_SERVER_BIT, 0, length));
            retransmittedBytes += payloadBytes(rig.drain(nowNs));
        }
        assertThat(retransmittedBytes).isEqualTo((long) rounds * length);
        assertThat(rig.counters.retransmitBudgetExceeded()).isZero();
        assertThat(rig.rpcs.clientRpc(rpc.rpcId, PEER)).isSameAs(rpc);
        assertThat(rig.events).isEmpty();
    }

    private static long payloadBytes(List<Sent> packets) {
        return ComponentRig.ofType(packets, PacketType.DATA).stream().mapToLong(Sent::payloadBytes).sum();
    }
}
