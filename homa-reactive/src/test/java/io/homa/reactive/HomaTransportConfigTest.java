package io.homa.reactive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.engine.EngineConfig;
import io.homa.engine.InvalidSettingException;
import org.junit.jupiter.api.Test;

class HomaTransportConfigTest {

    @Test
    void shouldHaveDocumentedDefaults() {
        HomaTransportConfig config = HomaTransportConfig.defaults();

        assertThat(config.bindAddress()).isEqualTo("0.0.0.0");
        assertThat(config.port()).isZero();
        assertThat(config.receiveBufferBytes()).isEqualTo(4 * 1024 * 1024);
        assertThat(config.sendBufferBytes()).isEqualTo(4 * 1024 * 1024);
        assertThat(config.nativeTransport()).isTrue();
        assertThat(config.engine()).isEqualTo(EngineConfig.defaults());
        assertThat(config.linkMbps()).as("auto").isEqualTo(HomaTransportConfig.AUTO_LINK_MBPS);
        assertThat(config.priorityTos()).isEqualTo(HomaTransportConfig.PriorityTos.AUTO);
        assertThat(config.maxNicQueueNs()).isEqualTo(50_000);
        assertThat(config.deviceMtu()).isTrue();
        assertThat(config.busyPollNs()).isEqualTo(50_000);
        assertThat(config.loops()).as("auto").isEqualTo(HomaTransportConfig.AUTO_LOOPS);
        assertThat(config.resolvedLoops()).as("one per available processor")
                .isEqualTo(Math.min(HomaTransportConfig.MAX_LOOPS, Runtime.getRuntime().availableProcessors()));
    }

    @Test
    void shouldSetCongestionControlInTheEngineSettings() {
        HomaTransportConfig config = HomaTransportConfig.builder()
                .congestionControl(io.homa.engine.CongestionControl.RTT).rttProbeIntervalNs(250_000).build();
        assertThat(config.congestionControl()).isEqualTo(io.homa.engine.CongestionControl.RTT);
        assertThat(config.engine().rttProbeIntervalNs()).isEqualTo(250_000);
        assertThat(HomaTransportConfig.defaults().congestionControl()).isEqualTo(io.homa.engine.CongestionControl.OFF);
        assertThatThrownBy(() -> HomaTransportConfig.builder().rttProbeIntervalNs(1_000))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("rtt-probe-interval must be between");
    }

    @Test
    void shouldTakeAndCheckTheNumberOfLoops() {
        assertThat(HomaTransportConfig.builder().loops(3).build().resolvedLoops()).isEqualTo(3);
        assertThat(HomaTransportConfig.builder().loops(3).build().toBuilder().build().loops()).isEqualTo(3);
        assertThatThrownBy(() -> HomaTransportConfig.builder().loops(65).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("loops must be between 0 and 64, was 65");
        assertThatThrownBy(() -> HomaTransportConfig.builder().loops(-1).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("loops must be between 0 and 64, was -1");
    }

    @Test
    void shouldRoundTripThroughToBuilder() {
        HomaTransportConfig config = HomaTransportConfig.builder().bindAddress("127.0.0.1").port(4000)
                .receiveBufferBytes(1 << 20).sendBufferBytes(1 << 20).nativeTransport(false).linkMbps(500).build();

        assertThat(config.priorityTos()).isEqualTo(HomaTransportConfig.PriorityTos.AUTO);
        assertThat(config.toBuilder().build()).isEqualTo(config);
        assertThat(config.toBuilder().priorityTos(false).build().priorityTos())
                .isEqualTo(HomaTransportConfig.PriorityTos.OFF);
        assertThat(config.toBuilder().priorityTos(true).build().priorityTos())
                .isEqualTo(HomaTransportConfig.PriorityTos.ON);
        assertThat(config.toBuilder().linkMbps(0).build().linkMbps()).isZero();
        assertThat(config.toBuilder().busyPollNs(0).build().busyPollNs()).isZero();
        assertThat(config.toBuilder().maxNicQueueNs(2_000).deviceMtu(false).build())
                .extracting(HomaTransportConfig::maxNicQueueNs, HomaTransportConfig::deviceMtu)
                .containsExactly(2_000L, false);
    }

    @Test
    void shouldRejectOutOfRangeValuesNamingThem() {
        assertThatThrownBy(() -> HomaTransportConfig.builder().port(65536).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("port must be between 0 and 65535, was 65536");
        assertThatThrownBy(() -> HomaTransportConfig.builder().receiveBufferBytes(1024).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("receive-buffer-size must be between 65536 and 1073741824 bytes, was 1024");
        assertThatThrownBy(() -> HomaTransportConfig.builder().linkMbps(-2).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("link-mbps must be between 0 and 1000000 (0 = no pacing), was -2");
        assertThatThrownBy(() -> HomaTransportConfig.builder().maxNicQueueNs(999).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("max-nic-queue must be between 1000 and 10000000 ns, was 999 ns");
        assertThatThrownBy(() -> HomaTransportConfig.builder().busyPollNs(1_000_001).build())
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("busy-poll must be between 0 and 1000000 ns, was 1000001 ns");
        assertThatThrownBy(() -> HomaTransportConfig.builder().busyPollNs(-1).build())
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("busy-poll must be between 0 and 1000000 ns, was -1 ns");
        assertThatThrownBy(() -> HomaTransportConfig.builder().bindAddress(null).build())
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("bind-address");
    }

    @Test
    void shouldMarkPrioritiesUnlessAutoIsBoundToLoopback() throws Exception {
        java.net.InetAddress loopback = java.net.InetAddress.getByName("127.0.0.1");
        java.net.InetAddress loopback6 = java.net.InetAddress.getByName("::1");
        java.net.InetAddress wildcard = java.net.InetAddress.getByName("0.0.0.0");
        java.net.InetAddress remote = java.net.InetAddress.getByName("198.18.0.1");

        assertThat(HomaTransportConfig.PriorityTos.AUTO.enabledFor(loopback)).isFalse();
        assertThat(HomaTransportConfig.PriorityTos.AUTO.enabledFor(loopback6)).isFalse();
        assertThat(HomaTransportConfig.PriorityTos.AUTO.enabledFor(wildcard)).as("peers may be remote").isTrue();
        assertThat(HomaTransportConfig.PriorityTos.AUTO.enabledFor(remote)).isTrue();
        assertThat(HomaTransportConfig.PriorityTos.ON.enabledFor(loopback)).isTrue();
        assertThat(HomaTransportConfig.PriorityTos.OFF.enabledFor(remote)).isFalse();
        assertThatThrownBy(() -> HomaTransportConfig.builder().priorityTos((HomaTransportConfig.PriorityTos) null).build())
                .isInstanceOf(NullPointerException.class).hasMessageContaining("priority-tos");
    }
}
