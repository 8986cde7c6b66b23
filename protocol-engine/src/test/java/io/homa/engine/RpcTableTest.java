package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.internal.wire.HomaHeader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** RPCs and peers: who may speak for an RPC, and what ending one frees. */
class RpcTableTest {
    private static final InetSocketAddress A = new InetSocketAddress("10.0.0.1", 5000);
    private static final InetSocketAddress B = new InetSocketAddress("10.0.0.2", 5000);
    private static final InetSocketAddress A_OTHER_PORT = new InetSocketAddress("10.0.0.1", 5001);

    private final EngineConfig config = EngineConfig.defaults();
    private final EngineParams params = EngineParams.of(config);
    private final TimerQueue timers = new TimerQueue();
    private final EngineCounters counters = new EngineCounters();
    private final GrantScheduler grants = new GrantScheduler(config, params.unscheduledBytes(), params.payloadBytes(),
            params.grantIncrementBytes());
    private final RpcTable table = new RpcTable(config, grants, timers, counters);

    private ClientRpc clientRpc(long rpcId, Peer server) {
        ClientRpc rpc = new ClientRpc(rpcId, server);
        rpc.request = new OutboundMessage(new byte[][] {new byte[3_000]}, params.unscheduledBytes(), rpcId, server, rpcId, rpc, null);
        return rpc;
    }

    /** Writes {@code bytes} at {@code offset} of an inbound message and charges the table, as the Receiver does. */
    private void receive(InboundMessage message, int offset, int bytes) {
        grants.beforeReceive(message);
        int added = message.received.add(offset, offset + bytes);
        grants.received(message, added);
        table.addInboundBuffered(message, message.write(ByteBuffer.allocate(bytes), 0, offset, bytes, new ChunkPool(0)));
    }

    @Test
    void shouldCreateEachPeerOnceAndArmItsIdleExpiry() {
        assertThat(table.knownPeer(A)).as("never created by a lookup").isNull();
        Peer peer = table.peer(A, -5_000);
        assertThat(table.knownPeer(A)).isSameAs(peer);
        assertThat(peer.timerArmed()).isTrue();
        assertThat(peer.timerDeadlineNs).isEqualTo(-5_000 + config.peerIdleTimeoutNs() + 1);
        assertThat(peer.lastHeardNs).as("times start from creation, not 0").isEqualTo(-5_000);

        assertThat(table.peer(A, 1_000_000)).as("the same peer").isSameAs(peer);
        assertThat(peer.timerDeadlineNs).as("not re-armed").isEqualTo(-5_000 + config.peerIdleTimeoutNs() + 1);
        assertThat(table.peer(A_OTHER_PORT, 0)).as("another port is another peer").isNotSameAs(peer);
        assertThat(table.peerCount()).isEqualTo(2);
        assertThat(timers.size()).isEqualTo(2);
    }

    @Test
    void shouldForgetAPeerAndDisarmIt() {
        Peer peer = table.peer(A, 0);
        table.forget(peer);
        assertThat(table.knownPeer(A)).isNull();
        assertThat(peer.timerArmed()).isFalse();
        assertThat(timers.size()).isZero();
        assertThat(counters.peersForgotten()).isEqualTo(1);
        assertThat(table.peer(A, 10)).as("a new peer after forgetting").isNotSameAs(peer);
    }

    @Test
    void shouldAnswerForAClientRpcOnlyFromTheServerTheRequestWentTo() {
        Peer server = table.peer(A, 0);
        table.peer(B, 0);
        ClientRpc rpc = clientRpc(100, server);
        table.addClientRpc(rpc);
        assertThat(table.clientRpc(100, A)).isSameAs(rpc);
        assertThat(table.clientRpc(100, B)).as("another host").isNull();
        assertThat(table.clientRpc(100, A_OTHER_PORT)).as("another port of the same host").isNull();
        assertThat(table.clientRpc(102, A)).as("another rpcid").isNull();
        assertThat(table.clientRpc(100)).isSameAs(rpc);
        assertThat(table.clientRpcCount()).isEqualTo(1);
        assertThat(server.clientRpcCount).isEqualTo(1);
        assertThat(server.idle()).isFalse();
    }

    @Test
    void shouldFreeEverythingWhenAClientRpcIsRemoved() {
        Peer server = table.peer(A, 0);
        ClientRpc rpc = clientRpc(100, server);
        table.addClientRpc(rpc);
        rpc.moveTo(ClientRpc.State.SENDING_REQUEST);
        timers.armAtOrBefore(rpc, 10_000_000);
        long bufferedBefore = table.inboundBufferedBytes();
        // A response partly arrived: 40,000 bytes of 200,000 (three 16 KiB chunks held).
        rpc.response = new InboundMessage(200_000, params.unscheduledBytes(), server, 100);
        rpc.moveTo(ClientRpc.State.RECEIVING_RESPONSE);
        grants.added(rpc.response);
        receive(rpc.response, 0, 40_000);
        assertThat(table.inboundBufferedBytes()).isEqualTo(bufferedBefore + 3 * InboundMessage.CHUNK_BYTES);
        assertThat(grants.totalIncomingBytes()).isEqualTo(params.unscheduledBytes() - 40_000);

        table.removeClientRpc(rpc);
        assertThat(rpc.state()).isEqualTo(ClientRpc.State.DONE);
        assertThat(rpc.timerArmed()).isFalse();
        assertThat(timers.size()).as("only the peer's expiry is left").isEqualTo(1);
        assertThat(table.inboundBufferedBytes()).isEqualTo(bufferedBefore);
        assertThat(grants.totalIncomingBytes()).as("granted bytes no longer come").isZero();
        assertThat(rpc.response.ended).isTrue();
        assertThat(rpc.request.abandoned).isTrue();
        assertThat(rpc.request.hasSendable()).isFalse();
        assertThat(table.clientRpc(100)).isNull();
        assertThat(table.clientRpcCount()).isZero();
        assertThat(server.clientRpcCount).isZero();

        table.removeClientRpc(rpc); // twice: harmless
        assertThat(rpc.state()).isEqualTo(ClientRpc.State.DONE);
        assertThat(table.inboundBufferedBytes()).isEqualTo(bufferedBefore);
        assertThat(server.clientRpcCount).isZero();
        assertThat(table.clientRpcCount()).isZero();
    }

    @Test
    void shouldNotFreeACompleteResponseTwice() {
        Peer server = table.peer(A, 0);
        ClientRpc rpc = clientRpc(100, server);
        table.addClientRpc(rpc);
        rpc.moveTo(ClientRpc.State.SENDING_REQUEST);
        rpc.response = new InboundMessage(1_000, 1_000, server, 100);
        rpc.moveTo(ClientRpc.State.RECEIVING_RESPONSE);
        grants.added(rpc.response);
        receive(rpc.response, 0, 1_000);
        table.endInbound(rpc.response); // the Receiver does this when the response completes
        assertThat(table.inboundBufferedBytes()).isZero();
        table.removeClientRpc(rpc);
        assertThat(table.inboundBufferedBytes()).as("not subtracted again").isZero();
    }

    @Test
    void shouldFreeTheRequestWhenAServerRpcStillReceivingIsRemoved() {
        Peer client = table.peer(A, 0);
        ServerRpc rpc = new ServerRpc(200, client,
                new InboundMessage(50_000, params.unscheduledBytes(), client, 200 | HomaHeader.FROM_SERVER_BIT));
        grants.added(rpc.request);
        table.addServerRpc(rpc);
        timers.armAtOrBefore(rpc, 10_000_000);
        receive(rpc.request, 0, 20_000);
        assertThat(table.inboundBufferedBytes()).isEqualTo(2 * InboundMessage.CHUNK_BYTES);
        assertThat(table.serverRpc(A, 200)).isSameAs(rpc);
        assertThat(table.serverRpc(B, 200)).as("another client's rpcid 200").isNull();
        assertThat(table.serverRpcCount()).isEqualTo(1);

        table.removeServerRpc(rpc);
        assertThat(rpc.state()).isEqualTo(ServerRpc.State.DEAD);
        assertThat(rpc.timerArmed()).isFalse();
        assertThat(table.inboundBufferedBytes()).isZero();
        assertThat(grants.totalIncomingBytes()).isZero();
        assertThat(table.serverRpc(A, 200)).isNull();
        assertThat(table.serverRpcCount()).isZero();
        assertThat(client.idle()).isTrue();

        table.removeServerRpc(rpc); // twice: harmless (no DEAD -> DEAD)
        assertThat(table.serverRpcCount()).isZero();
        assertThat(table.inboundBufferedBytes()).isZero();
    }

    @Test
    void shouldAbandonTheResponseWhenAnAnsweredServerRpcIsRemoved() {
        Peer client = table.peer(A, 0);
        ServerRpc rpc = new ServerRpc(200, client, new InboundMessage(1_000, 1_000, client, 201));
        grants.added(rpc.request);
        table.addServerRpc(rpc);
        receive(rpc.request, 0, 1_000);
        table.endInbound(rpc.request); // delivered
        rpc.moveTo(ServerRpc.State.IN_SERVICE);
        rpc.response = new OutboundMessage(new byte[][] {new byte[5_000]}, params.unscheduledBytes(), 0, client, 201, null, rpc);
        rpc.moveTo(ServerRpc.State.SENDING_RESPONSE);
        timers.armAtOrBefore(rpc, 1);
        assertThat(rpc.response.hasSendable()).isTrue();

        table.removeServerRpc(rpc);
        assertThat(rpc.response.abandoned).isTrue();
        assertThat(rpc.response.hasSendable()).isFalse();
        assertThat(rpc.state()).isEqualTo(ServerRpc.State.DEAD);
        assertThat(rpc.timerArmed()).isFalse();
        assertThat(table.inboundBufferedBytes()).as("the delivered request is not freed twice").isZero();
    }

    @Test
    void shouldNoteTheRpcIdAsReceivedWhenAServerRpcIsAdded() {
        Peer client = table.peer(A, 0);
        assertThat(client.finished.highestReceivedRpcId()).isZero();
        client.finished.remember(300);
        assertThat(client.finished.contains(300)).as("not received yet: cannot be remembered").isFalse();

        table.addServerRpc(new ServerRpc(300, client, new InboundMessage(10, 10, client, 301)));
        assertThat(client.finished.highestReceivedRpcId()).isEqualTo(300);
        client.finished.remember(300);
        assertThat(client.finished.contains(300)).isTrue();
        client.finished.remember(302);
        assertThat(client.finished.contains(302)).as("above the highest received").isFalse();
    }

    @Test
    void shouldEvictTheLeastRecentlyUsedIdlePeerWhenTheTableIsFull() {
        RpcTable small = new RpcTable(config, grants, timers, counters, 3);
        InetSocketAddress[] addresses = new InetSocketAddress[5];
        for (int i = 0; i < addresses.length; i++) {
            addresses[i] = new InetSocketAddress("10.0.1." + (i + 1), 5000);
        }
        Peer first = small.peerForInbound(addresses[0], 0);
        Peer second = small.peerForInbound(addresses[1], 0);
        small.peerForInbound(addresses[2], 0);
        // The first is busy (it has a request in progress); the second was used last.
        small.addServerRpc(new ServerRpc(10, first, new InboundMessage(10, 10, first, 11)));
        assertThat(small.knownPeer(addresses[1])).isSameAs(second);

        assertThat(small.peerForInbound(addresses[3], 0)).isNotNull();
        assertThat(small.knownPeer(addresses[0])).as("busy: kept").isSameAs(first);
        assertThat(small.knownPeer(addresses[2])).as("the least recently used idle peer").isNull();
        assertThat(small.peerCount()).isEqualTo(3);
        assertThat(counters.peersEvicted()).isEqualTo(1);

        // Every peer busy: a new address gets nothing, and the packet is counted as dropped.
        small.addServerRpc(new ServerRpc(12, second, new InboundMessage(10, 10, second, 13)));
        Peer third = small.knownPeer(addresses[3]);
        small.addServerRpc(new ServerRpc(14, third, new InboundMessage(10, 10, third, 15)));
        assertThat(small.peerForInbound(addresses[4], 0)).isNull();
        assertThat(counters.droppedForPeerTable()).isEqualTo(1);
        assertThat(small.peerForInbound(addresses[0], 0)).as("a known peer is always found").isSameAs(first);
    }

    @Test
    void shouldDropEverythingOnClear() {
        Peer server = table.peer(A, 0);
        table.addClientRpc(clientRpc(100, server));
        Peer client = table.peer(B, 0);
        InboundMessage request = new InboundMessage(10, 10, client, 201);
        table.addServerRpc(new ServerRpc(200, client, request));
        table.addInboundBuffered(request, 4_096);
        table.clear();
        assertThat(table.peerCount()).isZero();
        assertThat(table.clientRpcCount()).isZero();
        assertThat(table.serverRpcCount()).isZero();
        assertThat(table.inboundBufferedBytes()).isZero();
        assertThat(table.clientRpc(100)).isNull();
        assertThat(table.knownPeer(A)).isNull();
    }
}
