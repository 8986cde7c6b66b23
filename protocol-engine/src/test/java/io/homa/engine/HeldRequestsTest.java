package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A server that is not ready to serve (its application is still starting) holds complete
 * requests in the engine: the clients' RESENDs are answered BUSY, nothing times out or executes
 * twice, and the requests are delivered once, in arrival order, when it starts serving.
 */
class HeldRequestsTest {
    private static final EngineConfig CONFIG = EngineConfig.defaults();

    @Test
    void shouldHoldRequestsAnsweringBusyUntilDelivered() {
        EnginePair pair = new EnginePair(CONFIG);
        pair.server.holdRequests();
        long first = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {1}));
        long second = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {2}));
        // One and a half silence budgets: a silent server's RPCs would have timed out.
        long steps = CONFIG.peerSilenceTimeoutNs() * 3 / 2 / (CONFIG.resendIntervalNs() / 4);
        for (int i = 0; i < steps; i++) {
            pair.collect();
            pair.deliverShuffled(new Random(i));
            pair.advance(CONFIG.resendIntervalNs() / 4);
        }
        assertThat(pair.server.pollEvent()).as("held, not delivered").isNull();
        assertThat(pair.server.heldRequests()).isEqualTo(2);
        assertThat(pair.client.pollEvent()).as("no timeout while held").isNull();
        assertThat(pair.server.counters().busySent()).as("RESENDs answered BUSY").isGreaterThanOrEqualTo(7);
        assertThat(pair.server.counters().requestsDelivered()).isZero();

        pair.server.deliverRequests();
        HomaEvent.RequestReceived a = (HomaEvent.RequestReceived) pair.server.pollEvent();
        HomaEvent.RequestReceived b = (HomaEvent.RequestReceived) pair.server.pollEvent();
        assertThat(pair.server.pollEvent()).isNull();
        assertThat(java.util.List.of(a.rpcId(), b.rpcId())).containsExactlyInAnyOrder(first, second);
        assertThat(pair.server.heldRequests()).isZero();
        pair.server.sendResponse(pair.nowNs, a.client(), a.rpcId(), SendOptions.of(a.message()));
        pair.server.sendResponse(pair.nowNs, b.client(), b.rpcId(), SendOptions.of(b.message()));
        EnginePairTest.runUntilQuiet(pair, new Random(99));
        assertThat(pair.client.counters().rpcsCompleted()).isEqualTo(2);
        assertThat(pair.server.counters().requestsDelivered()).as("each once").isEqualTo(2);
    }

    @Test
    void shouldDeliverLaterRequestsAtOnceAndSkipHeldOnesThatEnded() {
        EnginePair pair = new EnginePair(CONFIG);
        pair.server.holdRequests();
        long rpcId = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {1}));
        pair.exchange(new Random(1));
        assertThat(pair.server.heldRequests()).isEqualTo(1);
        // The client gives up and tells the server: its next RESEND finds nothing and the server
        // answers it; here the client's RPC_UNKNOWN ends the held RPC.
        pair.client.cancel(pair.nowNs, rpcId);
        pair.server.onPacket(pair.nowNs, EnginePair.CLIENT, rpcUnknownFromClient(rpcId));
        pair.server.deliverRequests();
        assertThat(pair.server.pollEvent()).as("an RPC that ended while held is not delivered").isNull();

        long later = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {2}));
        pair.collect();
        pair.deliverShuffled(new Random(2));
        HomaEvent.RequestReceived request = (HomaEvent.RequestReceived) pair.server.pollEvent();
        assertThat(request.rpcId()).as("delivered at once after deliverRequests").isEqualTo(later);
    }

    private static java.nio.ByteBuffer rpcUnknownFromClient(long rpcId) {
        java.nio.ByteBuffer buffer = java.nio.ByteBuffer.allocate(io.homa.engine.internal.wire.ControlHeader.HEADER_LENGTH);
        new io.homa.engine.internal.wire.ControlHeader().wrap(buffer, 0).writeCommon(io.homa.engine.wire.PacketType.RPC_UNKNOWN,
                EnginePair.CLIENT.getPort(), EnginePair.SERVER.getPort(), rpcId);
        return buffer;
    }
}
