package io.homa.engine;

import static io.homa.engine.ComponentRig.OTHER;
import static io.homa.engine.ComponentRig.PEER;
import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.ComponentRig.Sent;
import io.homa.engine.internal.wire.AckHeader;
import io.homa.engine.internal.wire.CutoffsHeader;
import io.homa.engine.internal.wire.GrantHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import io.homa.engine.internal.wire.ResendHeader;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The receiving side, driven directly with DATA packets built by hand. */
class ReceiverTest {
    private static final long INTERVAL_NS = EngineConfig.DEFAULT_RESEND_INTERVAL_NS;

    private ComponentRig rig = new ComponentRig();

    private int payload() {
        return rig.payload();
    }

    private int packets(byte[] message) {
        return (message.length + payload() - 1) / payload();
    }

    /** Packet {@code k} of {@code message}, as its sender would send it (incoming = its unscheduled bytes, current cutoffs). */
    private ByteBuffer packet(long wireRpcId, byte[] message, int k) {
        return packet(wireRpcId, message, k, rig.cutoffs.version());
    }

    private ByteBuffer packet(long wireRpcId, byte[] message, int k, int cutoffVersion) {
        int offset = k * payload();
        int length = Math.min(payload(), message.length - offset);
        int incoming = Math.min(message.length, rig.params.unscheduledBytes());
        return ComponentRig.data(wireRpcId, message, incoming, offset, length, cutoffVersion);
    }

    private boolean feed(long nowNs, long wireRpcId, byte[] message, int k) {
        return rig.onData(nowNs, PEER, packet(wireRpcId, message, k));
    }

    private List<Sent> controlOfType(PacketType type) {
        return ComponentRig.ofType(rig.drainControl(), type);
    }

    @Test
    void shouldReassembleOutOfOrderAndDeliverOneRequest() {
        byte[] message = ComponentRig.pattern(40_000, 5); // 29 packets over three 16 KiB chunks
        List<Integer> order = new ArrayList<>();
        for (int k = 0; k < packets(message); k++) {
            order.add(k);
        }
        Collections.shuffle(order, new Random(11));
        for (int i = 0; i < order.size(); i++) {
            assertThat(feed(1_000, 100, message, order.get(i))).isTrue();
            if (i < order.size() - 1) {
                assertThat(rig.events).as("incomplete after %d packets", i + 1).isEmpty();
            }
        }
        assertThat(rig.events).hasSize(1);
        HomaEvent.RequestReceived request = (HomaEvent.RequestReceived) rig.events.poll();
        assertThat(request.client()).isEqualTo(PEER);
        assertThat(request.rpcId()).isEqualTo(100);
        assertThat(request.message()).isEqualTo(message);

        ServerRpc rpc = rig.rpcs.serverRpc(PEER, 100);
        assertThat(rpc.state()).isEqualTo(ServerRpc.State.IN_SERVICE);
        assertThat(rig.counters.requestsDelivered()).isEqualTo(1);
        assertThat(rig.rpcs.inboundBufferedBytes()).as("delivered: no longer counted").isZero();
        assertThat(rig.counters.duplicatePackets()).isZero();

        // A late copy of a packet executes nothing again.
        assertThat(feed(2_000, 100, message, 3)).isTrue();
        assertThat(rig.events).isEmpty();
        assertThat(rig.counters.duplicatePackets()).isEqualTo(1);
    }

    @Test
    void shouldCreateTheServerRpcAndArmItsTimerAtTheFirstPacket() {
        byte[] message = new byte[5_000];
        assertThat(rig.rpcs.knownPeer(PEER)).isNull();
        assertThat(feed(-3_000, 100, message, 1)).as("any packet may come first").isTrue();
        ServerRpc rpc = rig.rpcs.serverRpc(PEER, 100);
        assertThat(rpc).isNotNull();
        assertThat(rpc.state()).isEqualTo(ServerRpc.State.RECEIVING_REQUEST);
        assertThat(rpc.timerArmed()).isTrue();
        assertThat(rpc.timerDeadlineNs).isEqualTo(-3_000 + INTERVAL_NS);
        assertThat(rig.rpcs.knownPeer(PEER)).as("a peer for the new RPC").isNotNull();
        assertThat(rig.rpcs.knownPeer(PEER).finished.highestReceivedRpcId()).isEqualTo(100);
    }

    @Test
    void shouldRejectAFirstPacketBeyondTheStatedUnscheduledBytes() {
        byte[] message = new byte[5_000];
        // The sender says it sends 1,416 bytes unscheduled; a first packet at 1,416 was never authorised.
        ByteBuffer beyond = ComponentRig.data(100, message, 1_416, 1_416, 1_416, rig.cutoffs.version());
        assertThat(rig.onData(0, PEER, beyond)).isFalse();
        assertThat(rig.rpcs.serverRpcCount()).isZero();
        assertThat(rig.rpcs.knownPeer(PEER)).as("no state for a rejected packet").isNull();
        assertThat(rig.rpcs.inboundBufferedBytes()).isZero();

        // Nor can a sender claim more unscheduled bytes than ours.
        byte[] huge = new byte[1_000_000];
        int ours = rig.params.unscheduledBytes();
        ByteBuffer lying = ComponentRig.data(102, huge, 1_000_000, ours, 1_416, rig.cutoffs.version());
        assertThat(rig.onData(0, PEER, lying)).isFalse();
        assertThat(rig.rpcs.serverRpcCount()).isZero();

        // Within the stated bytes it is accepted.
        assertThat(rig.onData(0, PEER, ComponentRig.data(100, message, 1_416, 0, 1_416, rig.cutoffs.version())))
                .isTrue();
        assertThat(rig.rpcs.serverRpc(PEER, 100).request.receivedBytes()).isEqualTo(1_416);

        // For an RPC already held, bytes beyond what was granted are rejected too.
        byte[] large = new byte[200_000];
        assertThat(rig.onData(0, PEER, ComponentRig.data(104, large, ours, 0, 1_416, rig.cutoffs.version()))).isTrue();
        ByteBuffer ungranted = ComponentRig.data(104, large, ours, 100_000, 1_416, rig.cutoffs.version());
        assertThat(rig.onData(0, PEER, ungranted)).isFalse();
        assertThat(rig.rpcs.serverRpc(PEER, 104).request.receivedBytes()).isEqualTo(1_416);
    }

    @Test
    void shouldRefuseNewMessagesWhileTheInboundBufferIsFull() {
        rig = new ComponentRig(EngineConfig.builder().maxInboundBufferBytes(64 * 1024).build());
        byte[] a = ComponentRig.pattern(60_000, 1);
        byte[] b = new byte[20_000];
        byte[] c = ComponentRig.pattern(1_000, 3);
        int last = packets(a) - 1;
        for (int k = 0; k < last; k++) {
            assertThat(feed(0, 100, a, k)).isTrue();
        }
        assertThat(rig.rpcs.inboundBufferedBytes()).isEqualTo(60_000); // its four chunks
        assertThat(feed(0, 102, b, 0)).isTrue(); // one more chunk: 76,384 bytes held
        assertThat(rig.rpcs.inboundBufferedBytes()).isGreaterThanOrEqualTo(64 * 1024);

        assertThat(feed(0, 104, c, 0)).as("dropped, not malformed").isTrue();
        assertThat(rig.counters.droppedForBufferSpace()).isEqualTo(1);
        assertThat(rig.rpcs.serverRpc(PEER, 104)).isNull();

        // A message already arriving may complete; then there is room again.
        assertThat(feed(0, 100, a, last)).isTrue();
        assertThat(((HomaEvent.RequestReceived) rig.events.poll()).message()).isEqualTo(a);
        assertThat(rig.rpcs.inboundBufferedBytes()).isEqualTo(InboundMessage.CHUNK_BYTES);
        assertThat(feed(0, 104, c, 0)).isTrue();
        assertThat(((HomaEvent.RequestReceived) rig.events.poll()).message()).isEqualTo(c);
        assertThat(rig.counters.droppedForBufferSpace()).isEqualTo(1);
    }

    @Test
    void shouldCountADuplicatePacketAndChargeNothingForIt() {
        byte[] message = new byte[5_000];
        assertThat(feed(0, 100, message, 1)).isTrue();
        long buffered = rig.rpcs.inboundBufferedBytes();
        assertThat(feed(10, 100, message, 1)).isTrue();
        assertThat(rig.counters.duplicatePackets()).isEqualTo(1);
        assertThat(rig.rpcs.inboundBufferedBytes()).isEqualTo(buffered);
        assertThat(rig.rpcs.serverRpc(PEER, 100).request.receivedBytes()).isEqualTo(1_416);
    }

    @Test
    void shouldIgnoreRequestDataForAFinishedRpc() {
        Peer client = rig.rpcs.peer(PEER, 0);
        client.finished.received(100);
        client.finished.remember(100);
        assertThat(feed(0, 100, new byte[10], 0)).isTrue();
        assertThat(rig.rpcs.serverRpcCount()).as("never executes again").isZero();
        assertThat(rig.events).isEmpty();
        assertThat(rig.counters.duplicatePackets()).isEqualTo(1);
    }

    @Test
    void shouldForgetARequestWhoseLengthChangesWhileArriving() {
        byte[] message = new byte[5_000];
        assertThat(feed(0, 100, message, 0)).isTrue();
        assertThat(rig.rpcs.inboundBufferedBytes()).isPositive();
        assertThat(feed(0, 100, new byte[6_000], 1)).isFalse();
        assertThat(rig.rpcs.serverRpc(PEER, 100)).isNull();
        assertThat(rig.rpcs.inboundBufferedBytes()).isZero();
        assertThat(rig.grantScheduler.totalIncomingBytes()).isZero();
    }

    @Test
    void shouldGrantOnceAGrantIncrementHasArrived() {
        byte[] message = new byte[200_000];
        int increment = rig.params.grantIncrementBytes();
        int unscheduled = rig.params.unscheduledBytes();
        int k = 0;
        List<Sent> grants = List.of();
        while (grants.isEmpty() && k < 43) {
            assertThat(feed(0, 100, message, k++)).isTrue();
            grants = controlOfType(PacketType.GRANT);
        }
        assertThat(k * payload()).as("the first GRANT waits for a grant increment").isEqualTo(increment);
        assertThat(grants).hasSize(1);
        GrantHeader grant = new GrantHeader().wrap(grants.get(0).buffer(), 0);
        assertThat(grant.rpcId()).isEqualTo(100 | HomaHeader.FROM_SERVER_BIT);
        assertThat(grants.get(0).to()).isEqualTo(PEER);
        assertThat(grant.grantOffset()).as("rttBytes ahead of what arrived").isEqualTo(increment + unscheduled);
        assertThat(grant.priority()).as("the only scheduled message: lowest level").isZero();
        assertThat(rig.rpcs.serverRpc(PEER, 100).request.grantedOffset).isEqualTo(increment + unscheduled);
    }

    @Test
    void shouldAskOnlyForGapsBelowTheGrantedOffset() {
        Peer peer = rig.rpcs.peer(PEER, 0);
        InboundMessage message = new InboundMessage(100_000, 20_000, peer, 101);
        message.received.add(1_000, 2_000);
        message.received.add(5_000, 6_000);
        rig.receiver.requestMissing(message, PEER, 101, 0);
        List<Sent> resends = rig.drainControl();
        assertThat(resends).extracting(Sent::type).containsOnly(PacketType.RESEND);
        List<int[]> ranges = resends.stream().map(p -> {
            ResendHeader header = new ResendHeader().wrap(p.buffer(), 0);
            assertThat(header.rpcId()).isEqualTo(101);
            assertThat(p.to()).isEqualTo(PEER);
            return new int[] {header.resendOffset(), header.length()};
        }).toList();
        assertThat(ranges).containsExactly(new int[] {0, 1_000}, new int[] {2_000, 3_000}, new int[] {6_000, 14_000});
        assertThat(rig.counters.resendsSent()).isEqualTo(3);

        // Everything granted has arrived: nothing to ask for (the rest is not granted yet).
        InboundMessage whole = new InboundMessage(100_000, 20_000, peer, 103);
        whole.received.add(0, 20_000);
        rig.receiver.requestMissing(whole, PEER, 103, 0);
        assertThat(rig.control.isEmpty()).isTrue();
    }

    @Test
    void shouldAskForAtMostEightGaps() {
        Peer peer = rig.rpcs.peer(PEER, 0);
        InboundMessage message = new InboundMessage(100_000, 60_000, peer, 101);
        for (int i = 0; i < 20; i++) {
            message.received.add(1_000 + 2_000 * i, 2_000 + 2_000 * i); // 20 gaps of 1,000 bytes
        }
        rig.receiver.requestMissing(message, PEER, 101, 0);
        List<Sent> resends = rig.drainControl();
        assertThat(resends).hasSize(8);
        assertThat(resends).extracting(p -> new ResendHeader().wrap(p.buffer(), 0).resendOffset())
                .containsExactly(0, 2_000, 4_000, 6_000, 8_000, 10_000, 12_000, 14_000);
    }

    @Test
    void shouldSendCutoffsToAStaleSenderAtMostOncePerResendInterval() {
        byte[] message = new byte[5_000];
        int stale = 0; // the sender has no cutoffs from us
        assertThat(rig.onData(0, PEER, packet(100, message, 0, stale))).isTrue();
        List<Sent> cutoffs = controlOfType(PacketType.CUTOFFS);
        assertThat(cutoffs).hasSize(1);
        CutoffsHeader header = new CutoffsHeader().wrap(cutoffs.get(0).buffer(), 0);
        assertThat(header.rpcId()).isEqualTo(100 | HomaHeader.FROM_SERVER_BIT);
        assertThat(cutoffs.get(0).to()).isEqualTo(PEER);
        assertThat(header.cutoffVersion()).isEqualTo(rig.cutoffs.version());
        for (int i = 0; i < CutoffsHeader.NUM_PRIORITIES; i++) {
            assertThat(header.cutoff(i)).isEqualTo(rig.cutoffs.cutoffs()[i]);
        }

        assertThat(rig.onData(1_000, PEER, packet(100, message, 1, stale))).isTrue();
        assertThat(controlOfType(PacketType.CUTOFFS)).as("within the interval: no second one").isEmpty();
        assertThat(rig.onData(INTERVAL_NS - 1, PEER, packet(100, message, 2, stale))).isTrue();
        assertThat(controlOfType(PacketType.CUTOFFS)).isEmpty();
        assertThat(rig.onData(INTERVAL_NS, PEER, packet(100, message, 3, stale))).isTrue();
        assertThat(controlOfType(PacketType.CUTOFFS)).as("still stale after an interval: again").hasSize(1);

        // A sender naming the current version gets none.
        assertThat(rig.onData(5 * INTERVAL_NS, PEER, packet(102, message, 0))).isTrue();
        assertThat(controlOfType(PacketType.CUTOFFS)).isEmpty();
    }

    @Test
    void shouldAnswerNeedAckForAnUnknownRpcWithAnAck() {
        rig.receiver.onNeedAck(0, PEER, true, 500);
        List<Sent> sent = rig.drainControl();
        assertThat(sent).extracting(Sent::type).containsExactly(PacketType.ACK);
        AckHeader ack = new AckHeader().wrap(sent.get(0).buffer(), 0);
        assertThat(ack.rpcId()).as("from the client: no S bit").isEqualTo(500);
        assertThat(ack.numAcks()).isZero();
        assertThat(sent.get(0).to()).isEqualTo(PEER);
    }

    @Test
    void shouldAnswerNeedAckForAnIncompleteResponseWithResends() {
        ClientRpc rpc = rig.startRequest(0, PEER, new byte[10]);
        rig.drain(0);
        rig.receiver.onNeedAck(100, PEER, true, rpc.rpcId);
        List<Sent> sent = rig.drainControl();
        assertThat(sent).extracting(Sent::type).as("no response byte yet: ask for its start").containsExactly(PacketType.RESEND);
        ResendHeader resend = new ResendHeader().wrap(sent.get(0).buffer(), 0);
        assertThat(resend.resendOffset()).isZero();
        assertThat(resend.length()).isEqualTo(rig.params.unscheduledBytes());
        assertThat(rpc.lastHeardNs).isEqualTo(100);

        rpc.request.flags |= io.homa.engine.internal.wire.DataHeader.FLAG_INCAST;
        rpc.request.incastHeadBytes = 3_000;
        rig.receiver.requestMissingResponse(rpc, 0);
        ResendHeader incast = new ResendHeader().wrap(rig.drainControl().get(0).buffer(), 0);
        assertThat(incast.length()).as("an INCAST request's response starts with the head it named")
                .isEqualTo(3_000);
    }

    @Test
    void shouldTakeTheHeadAnIncastRequestNamesUpToOurUnscheduledBytesAndOurOwnWhenItNamesNone() {
        byte[] request = new byte[100];
        int[] named = {0, 3_000, 0xFFFF};
        int[] expected = {rig.params.incastUnscheduledBytes(), 3_000, rig.params.unscheduledBytes()};
        for (int i = 0; i < named.length; i++) {
            ByteBuffer packet = ComponentRig.data(200 + 2 * i, request, request.length, 0, request.length, rig.cutoffs.version());
            new io.homa.engine.internal.wire.DataHeader().wrap(packet, 0).flags(io.homa.engine.internal.wire.DataHeader.FLAG_INCAST)
                    .incastHeadBytes(named[i]);
            rig.onData(0, PEER, packet);
            assertThat(rig.rpcs.serverRpc(PEER, 200 + 2 * i).incastHeadBytes).as("named %d", named[i]).isEqualTo(expected[i]);
        }
        rig.onData(0, PEER, ComponentRig.data(210, request, request.length, 0, request.length, rig.cutoffs.version()));
        assertThat(rig.rpcs.serverRpc(PEER, 210).incastHeadBytes).as("not marked").isZero();
    }

    @Test
    void shouldCompleteAResponseAndOweTheServerAnAck() {
        ClientRpc rpc = rig.startRequest(0, PEER, new byte[10]);
        byte[] response = ComponentRig.pattern(3_000, 9);
        long wire = rpc.rpcId | HomaHeader.FROM_SERVER_BIT;
        assertThat(feed(0, wire, response, 0)).isTrue();
        assertThat(rpc.response).as("about a request that has not left yet: ignored").isNull();
        assertThat(rig.counters.duplicatePackets()).isEqualTo(1);

        rig.drain(0); // the request leaves
        assertThat(rig.onData(10, OTHER, packet(wire, response, 0))).as("another host cannot answer").isTrue();
        assertThat(rpc.response).isNull();

        assertThat(feed(20, wire, response, 2)).isTrue();
        assertThat(rpc.state()).isEqualTo(ClientRpc.State.RECEIVING_RESPONSE);
        assertThat(feed(30, wire, response, 0)).isTrue();
        assertThat(rig.events).isEmpty();
        assertThat(feed(40, wire, response, 1)).isTrue();

        HomaEvent.ResponseReceived done = (HomaEvent.ResponseReceived) rig.events.poll();
        assertThat(done.rpcId()).isEqualTo(rpc.rpcId);
        assertThat(done.message()).isEqualTo(response);
        assertThat(rpc.state()).isEqualTo(ClientRpc.State.DONE);
        assertThat(rig.rpcs.clientRpc(rpc.rpcId)).isNull();
        assertThat(rig.counters.rpcsCompleted()).isEqualTo(1);
        assertThat(rig.rpcs.inboundBufferedBytes()).isZero();
        Peer server = rpc.server;
        assertThat(server.pendingAckCount).isEqualTo(1);
        assertThat(server.pendingAcks[0]).isEqualTo(rpc.rpcId);
        assertThat(server.timerDeadlineNs).as("ACK flush armed").isEqualTo(40 + rig.params.ackDelayNs());
    }

    @Test
    void shouldFailAResponseWhoseLengthChanges() {
        ClientRpc rpc = rig.startRequest(0, PEER, new byte[10]);
        rig.drain(0);
        long wire = rpc.rpcId | HomaHeader.FROM_SERVER_BIT;
        assertThat(feed(10, wire, new byte[3_000], 0)).isTrue();
        assertThat(feed(20, wire, new byte[4_000], 1)).isFalse();
        HomaEvent.RpcFailed failed = (HomaEvent.RpcFailed) rig.events.poll();
        assertThat(failed.reason()).isEqualTo(HomaEvent.Reason.PROTOCOL_ERROR);
        assertThat(failed.rpcId()).isEqualTo(rpc.rpcId);
        assertThat(rpc.state()).isEqualTo(ClientRpc.State.DONE);
        assertThat(rig.rpcs.inboundBufferedBytes()).isZero();
    }

    @Test
    void shouldReleaseTheRpcAnAckOnRequestDataNames() {
        ServerRpc answered = rig.serverRpcInService(0, PEER, 100, 10);
        rig.sender.respond(answered, new byte[][] {new byte[10]}, 0L);
        rig.drain(0);
        assertThat(answered.state()).isEqualTo(ServerRpc.State.AWAITING_ACK);

        ByteBuffer next = packet(102, new byte[10], 0);
        new io.homa.engine.internal.wire.DataHeader().wrap(next, 0).ackRpcId(100).ackServerPort(ComponentRig.LOCAL_PORT);
        assertThat(rig.onData(5, PEER, next)).isTrue();
        assertThat(answered.state()).isEqualTo(ServerRpc.State.DEAD);
        assertThat(rig.rpcs.serverRpc(PEER, 100)).isNull();
        assertThat(rig.rpcs.knownPeer(PEER).finished.contains(100)).isTrue();
        assertThat(rig.rpcs.serverRpc(PEER, 102).state()).isEqualTo(ServerRpc.State.IN_SERVICE);
    }
}
