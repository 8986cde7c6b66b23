package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** The thresholds and the adaptive unscheduled window of the ByteDance congestion control. */
class DelayThresholdsTest {

    @ParameterizedTest(name = "{0} Mbit/s, rtt_min {1} ns, GSO batch {2} B")
    @CsvSource({
        "100, 25000, 1500", // the rack: one packet takes 120 µs, more than the probe's round trip
        "100, 25000, 64000",
        "1000, 25000, 64000",
        "25000, 25000, 64000", // the paper's setting: 64 KB in 21 µs
        "25000, 5000, 1500",
    })
    void shouldKeepTheThreeRegionsInOrderAtEveryLinkRate(int linkMbps, long rttMinNs, int gsoBatchBytes) {
        DelayThresholds thresholds = DelayThresholds.of(rttMinNs, gsoBatchBytes, linkMbps);

        assertThat(thresholds.rttLowNs()).isLessThan(thresholds.rttMidNs());
        assertThat(thresholds.rttMidNs()).isLessThan(thresholds.rttHighNs());
        // the window follows the regions: rtt_mid while clear, shrinking across the middle, one batch congested
        long midNs = thresholds.rttMidNs();
        long highNs = thresholds.rttHighNs();
        assertThat(thresholds.unscheduledWindowNs(midNs / 2)).isEqualTo(midNs);
        assertThat(thresholds.unscheduledWindowNs(midNs)).isEqualTo(midNs);
        long justAboveMid = thresholds.unscheduledWindowNs(midNs + 1);
        long nearHigh = thresholds.unscheduledWindowNs(highNs);
        assertThat(justAboveMid).isLessThan(midNs).isEqualTo(thresholds.rttLowNs());
        assertThat(nearHigh).isLessThan(justAboveMid).isPositive();
        assertThat(thresholds.unscheduledWindowNs(highNs + 1)).isEqualTo(thresholds.gsoDelayNs());
        assertThat(thresholds.unscheduledBytes(highNs + 1, false, 1.0)).isEqualTo(gsoBatchBytes);
        assertThat(thresholds.congested(highNs)).isFalse();
        assertThat(thresholds.congested(highNs + 1)).isTrue();
    }

    @Test
    void shouldMatchThePaperWhereABatchDrainsWellWithinTheRoundTrip() {
        // 25 Gbit/s, 64 KB batches: gso_delay 20.48 µs; rtt_min 200 µs
        DelayThresholds thresholds = DelayThresholds.of(200_000, 64_000, 25_000);

        assertThat(thresholds.gsoDelayNs()).isEqualTo(20_480);
        assertThat(thresholds.rttLowNs()).isEqualTo(2 * (200_000 + 20_480));
        assertThat(thresholds.rttMidNs()).isEqualTo(4 * (200_000 + 20_480));
        // the paper's rtt_high is 8 rtt_min = 1.6 ms; ours adds the batch: within 11%
        assertThat(thresholds.rttHighNs()).isEqualTo(8 * 220_480).isBetween(1_600_000L, 1_780_000L);
        // between rtt_mid and rtt_high: the paper's rtt_low - (rtt_recent - rtt_mid) * 3/8
        long recentNs = 1_000_000;
        assertThat(thresholds.unscheduledWindowNs(recentNs))
                .isEqualTo(thresholds.rttLowNs() - (recentNs - thresholds.rttMidNs()) * 3 / 8);
    }

    @Test
    void shouldTurnTheWindowIntoBytesAtThePeersLinkRate() {
        DelayThresholds thresholds = DelayThresholds.of(20_000, 1_500, 1_000); // 1 Gbit/s: 1,500 B in 12 µs

        assertThat(thresholds.rttMidNs()).isEqualTo(4 * 32_000);
        // 128 µs at 1 Gbit/s
        assertThat(thresholds.unscheduledBytes(10_000, false, 1.0)).isEqualTo(16_000);
        assertThat(thresholds.scheduledWindowBytes(1_000)).isEqualTo(16_000);
        assertThat(thresholds.scheduledWindowBytes(10_000)).isEqualTo(160_000);
        // nothing of ours throttled: rtt_mid whatever the delay, halved when unscheduled bytes are
        // less than 40% of what the receiver sees
        long congestedNs = thresholds.rttHighNs() * 2;
        assertThat(thresholds.unscheduledBytes(congestedNs, true, 0.5)).isEqualTo(16_000);
        assertThat(thresholds.unscheduledBytes(congestedNs, true, 0.3)).isEqualTo(8_000);
    }

    @Test
    void shouldRefuseThresholdsWithoutARoundTripOrALink() {
        assertThatThrownBy(() -> DelayThresholds.of(0, 1_500, 100)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("rttMinNs");
        assertThatThrownBy(() -> DelayThresholds.of(20_000, 1_500, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> DelayThresholds.of(20_000, 0, 100)).isInstanceOf(IllegalArgumentException.class);
    }
}
