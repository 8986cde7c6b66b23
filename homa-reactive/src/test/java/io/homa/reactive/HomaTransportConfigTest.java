package io.homa.reactive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.engine.EngineConfig;
import io.homa.engine.InvalidSettingException;
import java.net.InetSocketAddress;
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
    void shouldUseTheLoopbackDeviceMtuWhenBoundToLoopback() throws Exception {
        InetSocketAddress loopback = new InetSocketAddress("127.0.0.1", 0);
        int loMtu = java.net.NetworkInterface.getByInetAddress(loopback.getAddress()).getMTU();
        org.junit.jupiter.api.Assumptions.assumeTrue(loMtu > 20_084, "loopback MTU " + loMtu);
        HomaTransportConfig config = HomaTransportConfig.builder().bindAddress("127.0.0.1").deviceMtu(true).build();

        assertThat(NettyHomaTransport.engineConfig(config, loopback).mtuBytes())
                .as("lo has MTU 65,536 on Linux; capped at 65,535").isEqualTo(Math.min(loMtu, 65_535));
        assertThat(NettyHomaTransport.engineConfig(config.toBuilder().deviceMtu(false).build(), loopback).mtuBytes())
                .isEqualTo(1_500);
        assertThat(NettyHomaTransport.engineConfig(config, new InetSocketAddress("0.0.0.0", 0)).mtuBytes())
                .as("wildcard: the route is not known").isEqualTo(1_500);
        EngineConfig smallWindow = EngineConfig.builder().maxIncomingBytes(20_000).build();
        assertThat(NettyHomaTransport.engineConfig(config.toBuilder().engine(smallWindow).build(), loopback).mtuBytes())
                .as("a full packet fits in max-incoming").isEqualTo(20_084);
    }

    @Test
    void shouldPaceAtTheDevicesSpeedWhereItReportsOneElseAtTenGigabitsAndAtASetRateAlways() throws Exception {
        HomaTransportConfig auto = HomaTransportConfig.defaults();
        InetSocketAddress loopback = new InetSocketAddress("127.0.0.1", 0);
        assertThat(NettyHomaTransport.deviceSpeedMbps(loopback)).as("loopback reports no speed").isEqualTo(-1);
        assertThat(NettyHomaTransport.engineConfig(auto, loopback).linkMbps()).as("loopback: what two JVMs carry")
                .isEqualTo(HomaTransportConfig.LOOPBACK_LINK_MBPS);
        assertThat(NettyHomaTransport.engineConfig(auto, new InetSocketAddress("0.0.0.0", 0)).linkMbps())
                .as("wildcard: no one device").isEqualTo(HomaTransportConfig.DEFAULT_LINK_MBPS);
        assertThat(NettyHomaTransport.engineConfig(auto.toBuilder().linkMbps(400).build(), loopback).linkMbps())
                .as("a set value wins").isEqualTo(400);
        assertThat(NettyHomaTransport.engineConfig(auto.toBuilder().linkMbps(0).build(), loopback).linkMbps())
                .as("0: no pacing").isZero();
        // Any device of this machine that reports a speed is paced at it.
        for (java.net.NetworkInterface device : java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces())) {
            java.nio.file.Path speedFile = java.nio.file.Path.of("/sys/class/net", device.getName(), "speed");
            int reported;
            try {
                reported = Integer.parseInt(java.nio.file.Files.readString(speedFile).trim());
            } catch (java.io.IOException | NumberFormatException e) {
                continue;
            }
            for (java.net.InetAddress address : java.util.Collections.list(device.getInetAddresses())) {
                int expected = reported > 0 ? reported : HomaTransportConfig.DEFAULT_LINK_MBPS;
                assertThat(NettyHomaTransport.engineConfig(auto, new InetSocketAddress(address, 0)).linkMbps())
                        .as("%s on %s, which reports %d", address, device.getName(), reported).isEqualTo(expected);
            }
        }
        assertThatThrownBy(() -> auto.toBuilder().linkMbps(-2).build())
                .isInstanceOf(InvalidSettingException.class).hasMessageContaining("link-mbps");
    }

    @Test
    void shouldKeepTheGrantWindowOfTenGigabitsOnLoopbackUnlessItIsSet() {
        HomaTransportConfig auto = HomaTransportConfig.defaults();
        InetSocketAddress loopback = new InetSocketAddress("127.0.0.1", 0);
        HomaTransportConfig set = auto.toBuilder().engine(EngineConfig.builder().rttBytes(300_000).build()).build();

        assertThat(NettyHomaTransport.engineConfig(auto, loopback).rttBytes())
                .isEqualTo(HomaTransportConfig.LOOPBACK_RTT_BYTES);
        assertThat(NettyHomaTransport.engineConfig(auto.toBuilder().linkMbps(40_000).build(), loopback).rttBytes())
                .as("whatever the pacer's rate").isEqualTo(HomaTransportConfig.LOOPBACK_RTT_BYTES);
        assertThat(NettyHomaTransport.engineConfig(set, loopback).rttBytes()).as("a set value wins").isEqualTo(300_000);
        assertThat(NettyHomaTransport.engineConfig(auto, new InetSocketAddress("0.0.0.0", 0)).rttBytes())
                .as("elsewhere the engine's: the link's bandwidth-delay product").isZero();
    }

    @Test
    void shouldSizeTheIncastBufferByTheBoundAddressUnlessItIsSet() {
        HomaTransportConfig auto = HomaTransportConfig.builder().receiveBufferBytes(1 << 20).build();
        assertThat(NettyHomaTransport.engineConfig(auto, new InetSocketAddress("127.0.0.1", 0)).incastBufferBytes())
                .as("loopback: 4 x the receive buffer").isEqualTo(4 << 20);
        assertThat(NettyHomaTransport.engineConfig(auto, new InetSocketAddress("0.0.0.0", 0)).incastBufferBytes())
                .as("elsewhere: the engine's").isEqualTo(EngineConfig.DEFAULT_INCAST_BUFFER_BYTES);
        HomaTransportConfig set = auto.toBuilder().incastBufferBytes(300_000).build();
        assertThat(NettyHomaTransport.engineConfig(set, new InetSocketAddress("127.0.0.1", 0)).incastBufferBytes())
                .as("a set value wins").isEqualTo(300_000);
        assertThatThrownBy(() -> auto.toBuilder().incastBufferBytes(-2).build())
                .isInstanceOf(InvalidSettingException.class).hasMessageContaining("incast-buffer-bytes");
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
