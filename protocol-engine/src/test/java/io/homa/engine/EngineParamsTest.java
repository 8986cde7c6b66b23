package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The grant window ({@code rttBytes}) each receiver keeps ahead of what has arrived. */
class EngineParamsTest {

    /** Message bytes of a full DATA packet at the default MTU, 1,500: less IP/UDP (28) and DATA (56) headers. */
    private static final int PAYLOAD = 1_416;

    @Test
    void shouldSizeTheAutomaticWindowByTheLinkOverOneEndpointRoundTripPlusTwoPacketsOfStoreAndForward() {
        EngineConfig tenGigabits = EngineConfig.builder().linkMbps(10_000).build();
        EngineConfig twentyFiveGigabits = EngineConfig.builder().linkMbps(25_000).build();
        EngineConfig unpaced = EngineConfig.builder().linkMbps(0).build();

        assertThat(EngineParams.of(tenGigabits).payloadBytes()).isEqualTo(PAYLOAD);
        assertThat(EngineParams.of(tenGigabits).rttBytes()).as("10 Gbit/s x 100 us").isEqualTo(125_000 + 2 * PAYLOAD);
        assertThat(EngineParams.of(twentyFiveGigabits).rttBytes()).isEqualTo(312_500 + 2 * PAYLOAD);
        assertThat(EngineParams.of(unpaced).rttBytes()).as("sized for 10 Gbit/s").isEqualTo(125_000 + 2 * PAYLOAD);
    }

    @Test
    void shouldSendNoMoreUnscheduledBytesThanOneRoundTripOfTheLinkCarries() {
        EngineParams hundredMegabits = EngineParams.of(EngineConfig.builder().linkMbps(100).build());
        EngineParams tenGigabits = EngineParams.of(EngineConfig.builder().linkMbps(10_000).build());

        // 100 Mbit/s x 100 us = 1,250 B, plus two packets' store-and-forward: 4,082 B, in whole packets.
        assertThat(hundredMegabits.rttBytes()).isEqualTo(3 * PAYLOAD);
        assertThat(hundredMegabits.unscheduledBytes()).as("capped by the round trip").isEqualTo(3 * PAYLOAD);
        assertThat(tenGigabits.unscheduledBytes()).as("the configured 60,000 in whole packets")
                .isEqualTo(43 * PAYLOAD);
    }

    @Test
    void shouldTakeAnExplicitWindowWhateverTheLinkButNeverBelowTheUnscheduledBytesOrTwoPackets() {
        EngineConfig explicit = EngineConfig.builder().linkMbps(25_000).rttBytes(125_000).build();
        EngineConfig belowUnscheduled = EngineConfig.builder().linkMbps(10_000).rttBytes(10_000).build();
        EngineConfig jumbo = EngineConfig.builder().mtuBytes(65_535).linkMbps(10_000).rttBytes(10_000).build();
        EngineParams jumboParams = EngineParams.of(jumbo);

        assertThat(EngineParams.of(explicit).rttBytes()).isEqualTo(125_000);
        assertThat(EngineParams.of(belowUnscheduled).unscheduledBytes()).as("the window's bytes, in whole packets")
                .isEqualTo(8 * PAYLOAD);
        assertThat(EngineParams.of(belowUnscheduled).rttBytes())
                .isEqualTo(EngineParams.of(belowUnscheduled).unscheduledBytes());
        assertThat(jumboParams.rttBytes()).as("two 64 KB packets").isEqualTo(2 * jumboParams.payloadBytes());
    }

    @Test
    void shouldRefuseANegativeWindowNamingTheSetting() {
        assertThatThrownBy(() -> EngineConfig.builder().rttBytes(-1).build())
                .isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("rtt-bytes must be between 0");
        assertThat(EngineConfig.defaults().rttBytes()).as("automatic by default").isZero();
        assertThat(EngineConfig.builder().rttBytes(200_000).build().toBuilder().build().rttBytes()).isEqualTo(200_000);
    }

    @Test
    void shouldValidateTheCongestionControlSettingsNamingThem() {
        EngineConfig defaults = EngineConfig.defaults();
        assertThat(defaults.congestionControl()).isEqualTo(CongestionControl.OFF);
        assertThat(defaults.rttProbeIntervalNs()).isEqualTo(1_000_000);
        assertThatThrownBy(() -> EngineConfig.builder().rttProbeIntervalNs(9_999).build())
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("rtt-probe-interval must be between 10000 and 10000000000 ns, was 9999 ns");
        assertThatThrownBy(() -> EngineConfig.builder().congestionControl(null).build())
                .isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("congestion-control must be rtt or off");
        EngineConfig rtt = EngineConfig.builder().congestionControl(CongestionControl.RTT).rttProbeIntervalNs(50_000).build();
        assertThat(rtt.toBuilder().build()).isEqualTo(rtt);
    }

    @Test
    void shouldLetAMeasuredWindowReachUnscheduledBytesOnlyWithCongestionControl() {
        EngineConfig slow = EngineConfig.builder().linkMbps(100).build();
        EngineParams off = EngineParams.of(slow);
        EngineParams rtt = EngineParams.of(slow.toBuilder().congestionControl(CongestionControl.RTT).build());
        assertThat(off.maxUnscheduledBytes()).isEqualTo(off.unscheduledBytes()).isEqualTo(3 * off.payloadBytes());
        assertThat(rtt.unscheduledBytes()).as("before any probe").isEqualTo(off.unscheduledBytes());
        assertThat(rtt.maxUnscheduledBytes()).isEqualTo(43 * rtt.payloadBytes()); // 60,000 in whole packets
    }
}
