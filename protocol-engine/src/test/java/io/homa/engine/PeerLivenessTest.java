package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.internal.wire.ControlHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * Draft "Timeouts": a peer is alive when it speaks about an RPC we hold with it. A BUSY, GRANT or
 * RPC_UNKNOWN naming an rpcid we do not hold with that peer refreshes nobody's liveness, so such
 * packets (stray or forged from the peer's address) cannot keep a dead server's RPCs waiting.
 */
class PeerLivenessTest {
    private static final EngineConfig CONFIG = EngineConfig.defaults();
    /** Resend intervals covering twice the silence budget. */
    private static final int ENOUGH_INTERVALS = (int) (2 * CONFIG.peerSilenceTimeoutNs() / CONFIG.resendIntervalNs());

    private static ByteBuffer fromServer(PacketType type, long rpcId) {
        ByteBuffer packet = ByteBuffer.allocate(ControlHeader.HEADER_LENGTH);
        new ControlHeader().wrap(packet, 0).writeCommon(type, EnginePair.SERVER.getPort(), EnginePair.CLIENT.getPort(),
                rpcId | HomaHeader.FROM_SERVER_BIT);
        return packet;
    }

    /** Runs the client for {@code intervals} resend intervals, the server silent, injecting {@code busyRpcId} each time. */
    private static HomaEvent runAgainstSilentServer(long busyRpcIdOrZero, int intervals) {
        HomaEngine client = new HomaEngine(CONFIG, EnginePair.CLIENT.getPort(), 1000);
        long nowNs = 1_000_000_000L;
        long rpcId = client.sendRequest(nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {1}));
        PacketSink lost = (peer, packet, priority) -> { };
        client.pollTransmit(nowNs, lost, 64);
        for (int i = 0; i < intervals; i++) {
            nowNs += CONFIG.resendIntervalNs();
            if (busyRpcIdOrZero != 0) {
                long named = busyRpcIdOrZero == 1 ? rpcId : busyRpcIdOrZero;
                client.onPacket(nowNs - 1, EnginePair.SERVER, fromServer(PacketType.BUSY, named));
            }
            client.onTimeout(nowNs);
            client.pollTransmit(nowNs, lost, 64);
            HomaEvent event = client.pollEvent();
            if (event != null) {
                return event;
            }
        }
        return null;
    }

    @Test
    void shouldTimeOutASilentServerWhateverPacketsNameOtherRpcs() {
        HomaEvent silent = runAgainstSilentServer(0, ENOUGH_INTERVALS);
        assertThat(silent).isInstanceOf(HomaEvent.RpcFailed.class);
        assertThat(((HomaEvent.RpcFailed) silent).reason()).isEqualTo(HomaEvent.Reason.TIMEOUT);

        // BUSY every interval from the server's address, about an rpcid this client never used.
        HomaEvent forged = runAgainstSilentServer(777_778L, ENOUGH_INTERVALS);
        assertThat(forged).as("a BUSY about another rpcid keeps nothing alive").isInstanceOf(HomaEvent.RpcFailed.class);
        assertThat(((HomaEvent.RpcFailed) forged).reason()).isEqualTo(HomaEvent.Reason.TIMEOUT);
    }

    @Test
    void shouldKeepAnRpcAliveWhileItsServerAnswersBusyAboutIt() {
        assertThat(runAgainstSilentServer(1, ENOUGH_INTERVALS)).as("BUSY about the RPC itself").isNull();
    }
}
