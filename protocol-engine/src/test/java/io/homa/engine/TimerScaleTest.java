package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/**
 * Timers at scale: with 10,000 live RPCs, {@link HomaEngine#nextTimeoutNs()} is the earliest real
 * deadline and {@link HomaEngine#onTimeout} visits only the deadlines that are due, never every
 * RPC (draft "Timeouts"; the engine's {@link TimerQueue}).
 */
class TimerScaleTest {
    private static final InetSocketAddress SERVER = new InetSocketAddress("10.0.0.2", 4000);
    private static final int RPCS = 10_000;
    private static final long STAGGER_NS = 1_000;

    @Test
    void shouldVisitOnlyDueTimersAmongTenThousandLiveRpcs() {
        EngineConfig config = EngineConfig.defaults();
        long resendIntervalNs = config.resendIntervalNs();
        HomaEngine client = new HomaEngine(config, 5000, 2);
        long startNs = 7_000_000_000L;
        PacketSink lost = (peer, packet, priority) -> { }; // the server never answers
        // RPC i's first packet leaves at startNs + i µs, so its RESEND is due resendInterval later.
        for (int i = 0; i < RPCS; i++) {
            long nowNs = startNs + i * STAGGER_NS;
            client.sendRequest(nowNs, SERVER, SendOptions.of(new byte[100]));
            assertThat(client.pollTransmit(nowNs, lost, 64)).isEqualTo(1);
        }
        long lastSendNs = startNs + (RPCS - 1) * STAGGER_NS;
        assertThat(client.activeClientRpcs()).isEqualTo(RPCS);
        assertThat(client.timers().armed()).as("one deadline per RPC, one for the peer").isEqualTo(RPCS + 1);
        long earliestNs = startNs + resendIntervalNs;
        assertThat(client.nextTimeoutNs()).as("the earliest real deadline").isEqualTo(earliestNs);

        // None is due yet: nothing is visited, nothing is sent.
        long visits = client.timers().visits();
        client.onTimeout(lastSendNs);
        client.onTimeout(earliestNs - 1);
        assertThat(client.timers().visits() - visits).isZero();
        assertThat(client.hasTransmit()).isFalse();

        // 100 are due: exactly those are visited and armed again. The server is silent, so one of
        // them probes it with a RESEND and the others defer theirs.
        client.onTimeout(earliestNs + 99 * STAGGER_NS);
        assertThat(client.timers().visits() - visits).isEqualTo(100);
        assertThat(client.counters().resendsSent()).isEqualTo(1);
        assertThat(client.counters().resendsDeferred()).isEqualTo(99);
        assertThat(client.nextTimeoutNs()).as("RPC 100 is next").isEqualTo(earliestNs + 100 * STAGGER_NS);
        assertThat(client.timers().armed()).isEqualTo(RPCS + 1);

        // The rest, one call later: each visited once.
        client.onTimeout(lastSendNs + resendIntervalNs);
        assertThat(client.timers().visits() - visits).isEqualTo(RPCS);
        assertThat(client.counters().resendsSent() + client.counters().resendsDeferred()).isEqualTo(RPCS);
        assertThat(client.counters().silentPeerProbes()).as("one per backoff step of the peer").isEqualTo(1);
        assertThat(client.nextTimeoutNs()).as("the first 100 RPCs' second RESEND, two intervals after the first")
                .isEqualTo(earliestNs + 99 * STAGGER_NS + 2 * resendIntervalNs);
    }

    @Test
    void shouldGiveTheEarliestDeadlineWithAClockOfNegativeOrigin() {
        // System.nanoTime() may be negative: "no pacer deadline" (MAX_VALUE) must not win over a
        // real deadline because a difference with it wraps.
        EngineConfig config = EngineConfig.builder().linkMbps(2_000).build();
        HomaEngine client = new HomaEngine(config, 5000, 2);
        long nowNs = -3_000_000_000L;
        client.sendRequest(nowNs, SERVER, SendOptions.of(new byte[100]));
        assertThat(client.pollTransmit(nowNs, (peer, packet, priority) -> { }, 64)).isEqualTo(1);
        assertThat(client.nextTimeoutNs()).isEqualTo(nowNs + config.resendIntervalNs());
        client.onTimeout(nowNs + config.resendIntervalNs());
        assertThat(client.counters().resendsSent()).isEqualTo(1);
    }

    @Test
    void shouldStopTickingWhenNothingIsLeft() {
        EngineConfig config = EngineConfig.defaults();
        HomaEngine client = new HomaEngine(config, 5000, 2);
        long rpcId = client.sendRequest(0, SERVER, SendOptions.of(new byte[100]));
        client.pollTransmit(0, (peer, packet, priority) -> { }, 64);
        client.cancel(0, rpcId);
        assertThat(client.timers().armed()).as("only the peer's idle expiry").isEqualTo(1);
        assertThat(client.nextTimeoutNs()).isEqualTo(config.peerIdleTimeoutNs() + 1);
        client.onTimeout(config.peerIdleTimeoutNs() + 1);
        assertThat(client.knownPeers()).isZero();
        assertThat(client.nextTimeoutNs()).isEqualTo(Long.MAX_VALUE);
        assertThat(client.timers().visits()).as("one visit: the peer's expiry").isEqualTo(1);
    }
}
