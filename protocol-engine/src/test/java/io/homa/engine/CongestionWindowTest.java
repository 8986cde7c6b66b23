package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CongestionWindowTest {
    /** A probe's round trip between two hosts of a rack, ns. */
    private static final long RTT_MIN_NS = 25_000;

    private static CongestionWindow at(int linkMbps) {
        EngineConfig config = EngineConfig.builder().linkMbps(linkMbps).build();
        return CongestionWindow.of(RTT_MIN_NS, linkMbps, EngineParams.gsoBatchBytes(config));
    }

    @ParameterizedTest
    @ValueSource(ints = {100, 1_000, 25_000})
    void shouldKeepThreeRegionsAtEveryLinkRate(int linkMbps) {
        CongestionWindow window = at(linkMbps);

        assertThat(window.rttLowNs()).isLessThan(window.rttMidNs());
        assertThat(window.rttMidNs()).isLessThan(window.rttHighNs());
        assertThat(window.rttLowNs()).isEqualTo(2 * (RTT_MIN_NS + window.gsoDelayNs()));
        assertThat(window.rttMidNs()).isEqualTo(2 * window.rttLowNs());
    }

    @Test
    void shouldDepartFromThePapersHighThresholdOnlyWhereAGsoBatchOutlastsTheRoundTrip() {
        // 100 Mbit/s: the pacer allows 625 bytes ahead, so a batch is one 1,472-byte datagram, 118 µs.
        CongestionWindow slow = at(100);
        assertThat(slow.gsoDelayNs()).isEqualTo(117_760);
        long papersHighNs = 8 * RTT_MIN_NS;
        assertThat(slow.rttMidNs()).as("the paper's rtt_high would fall below rtt_mid").isGreaterThan(papersHighNs);
        // 25 Gbit/s: the batch drains in a fraction of rtt_min and the threshold is close to the paper's.
        CongestionWindow fast = at(25_000);
        assertThat(fast.gsoDelayNs()).isLessThan(RTT_MIN_NS);
    }

    @Test
    void shouldSizeGsoBatchesFromThePacersAllowance() {
        assertThat(EngineParams.gsoBatchBytes(EngineConfig.builder().linkMbps(100).build())).isEqualTo(1_472);
        assertThat(EngineParams.gsoBatchBytes(EngineConfig.builder().linkMbps(1_000).build())).isEqualTo(4 * 1_472);
        assertThat(EngineParams.gsoBatchBytes(EngineConfig.builder().linkMbps(25_000).build()))
                .isEqualTo(EngineParams.MAX_GSO_BATCH_BYTES / 1_472 * 1_472);
    }

    @ParameterizedTest
    @ValueSource(ints = {100, 1_000, 25_000})
    void shouldFollowThePapersUnscheduledWindowInEachRegion(int linkMbps) {
        CongestionWindow window = at(linkMbps);
        long low = window.rttLowNs();
        long mid = window.rttMidNs();
        long high = window.rttHighNs();

        // Below rtt_mid (idle or lightly loaded): the full rtt_mid.
        assertThat(window.unscheduledNs(RTT_MIN_NS)).isEqualTo(mid);
        assertThat(window.unscheduledNs(low)).isEqualTo(mid);
        assertThat(window.unscheduledNs(mid)).isEqualTo(mid);
        assertThat(window.congested(mid)).isFalse();
        // Between rtt_mid and rtt_high: rtt_low - (rtt_recent - rtt_mid) * 3/8, shrinking, still positive.
        long between = (mid + high) / 2;
        assertThat(window.unscheduledNs(between)).isEqualTo(low - (between - mid) * 3 / 8);
        assertThat(window.unscheduledNs(mid + 1)).isLessThanOrEqualTo(low);
        assertThat(window.unscheduledNs(high)).isLessThan(window.unscheduledNs(between)).isPositive();
        assertThat(window.congested(high)).isFalse();
        // Above rtt_high: congested, one GSO batch (0 here; the caller sends the batch).
        assertThat(window.unscheduledNs(high + 1)).isZero();
        assertThat(window.congested(high + 1)).isTrue();
    }

    @Test
    void shouldConvertTimeToBytesAtTheLinkRate() {
        assertThat(CongestionWindow.bytes(80_000, 100)).isEqualTo(1_000);
        assertThat(CongestionWindow.bytes(8_000, 25_000)).isEqualTo(25_000);
    }
}
