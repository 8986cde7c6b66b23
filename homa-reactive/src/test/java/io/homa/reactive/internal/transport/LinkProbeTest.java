package io.homa.reactive.internal.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.engine.EngineConfig;
import io.homa.engine.InvalidSettingException;
import io.homa.reactive.HomaTransportConfig;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/** The engine's settings as the bound address and its device make them. */
class LinkProbeTest {

    @Test
    void shouldUseTheLoopbackDeviceMtuWhenBoundToLoopback() throws Exception {
        InetSocketAddress loopback = new InetSocketAddress("127.0.0.1", 0);
        int loMtu = java.net.NetworkInterface.getByInetAddress(loopback.getAddress()).getMTU();
        org.junit.jupiter.api.Assumptions.assumeTrue(loMtu > 20_084, "loopback MTU " + loMtu);
        HomaTransportConfig config = HomaTransportConfig.builder().bindAddress("127.0.0.1").deviceMtu(true).build();

        assertThat(LinkProbe.engineConfig(config, loopback).mtuBytes())
                .as("lo has MTU 65,536 on Linux; capped at 65,535").isEqualTo(Math.min(loMtu, 65_535));
        assertThat(LinkProbe.engineConfig(config.toBuilder().deviceMtu(false).build(), loopback).mtuBytes())
                .isEqualTo(1_500);
        assertThat(LinkProbe.engineConfig(config, new InetSocketAddress("0.0.0.0", 0)).mtuBytes())
                .as("wildcard: the route is not known").isEqualTo(1_500);
        EngineConfig smallWindow = EngineConfig.builder().maxIncomingBytes(20_000).build();
        assertThat(LinkProbe.engineConfig(config.toBuilder().engine(smallWindow).build(), loopback).mtuBytes())
                .as("a full packet fits in max-incoming").isEqualTo(20_084);
    }

    @Test
    void shouldPaceAtTheDevicesSpeedWhereItReportsOneElseAtTenGigabitsAndAtASetRateAlways() throws Exception {
        HomaTransportConfig auto = HomaTransportConfig.defaults();
        InetSocketAddress loopback = new InetSocketAddress("127.0.0.1", 0);
        assertThat(LinkProbe.deviceSpeedMbps(loopback)).as("loopback reports no speed").isEqualTo(-1);
        assertThat(LinkProbe.engineConfig(auto, loopback).linkMbps()).as("loopback: what two JVMs carry")
                .isEqualTo(HomaTransportConfig.LOOPBACK_LINK_MBPS);
        assertThat(LinkProbe.engineConfig(auto, new InetSocketAddress("0.0.0.0", 0)).linkMbps())
                .as("wildcard: no one device").isEqualTo(HomaTransportConfig.DEFAULT_LINK_MBPS);
        assertThat(LinkProbe.engineConfig(auto.toBuilder().linkMbps(400).build(), loopback).linkMbps())
                .as("a set value wins").isEqualTo(400);
        assertThat(LinkProbe.engineConfig(auto.toBuilder().linkMbps(0).build(), loopback).linkMbps())
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
                assertThat(LinkProbe.engineConfig(auto, new InetSocketAddress(address, 0)).linkMbps())
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

        assertThat(LinkProbe.engineConfig(auto, loopback).rttBytes())
                .isEqualTo(HomaTransportConfig.LOOPBACK_RTT_BYTES);
        assertThat(LinkProbe.engineConfig(auto.toBuilder().linkMbps(40_000).build(), loopback).rttBytes())
                .as("whatever the pacer's rate").isEqualTo(HomaTransportConfig.LOOPBACK_RTT_BYTES);
        assertThat(LinkProbe.engineConfig(set, loopback).rttBytes()).as("a set value wins").isEqualTo(300_000);
        assertThat(LinkProbe.engineConfig(auto, new InetSocketAddress("0.0.0.0", 0)).rttBytes())
                .as("elsewhere the engine's: the link's bandwidth-delay product").isZero();
    }

    @Test
    void shouldSizeTheIncastBufferByTheBoundAddressUnlessItIsSet() {
        HomaTransportConfig auto = HomaTransportConfig.builder().receiveBufferBytes(1 << 20).build();
        assertThat(LinkProbe.engineConfig(auto, new InetSocketAddress("127.0.0.1", 0)).incastBufferBytes())
                .as("loopback: 4 x the receive buffer").isEqualTo(4 << 20);
        assertThat(LinkProbe.engineConfig(auto, new InetSocketAddress("0.0.0.0", 0)).incastBufferBytes())
                .as("elsewhere: the engine's").isEqualTo(EngineConfig.DEFAULT_INCAST_BUFFER_BYTES);
        HomaTransportConfig set = auto.toBuilder().incastBufferBytes(300_000).build();
        assertThat(LinkProbe.engineConfig(set, new InetSocketAddress("127.0.0.1", 0)).incastBufferBytes())
                .as("a set value wins").isEqualTo(300_000);
        assertThatThrownBy(() -> auto.toBuilder().incastBufferBytes(-2).build())
                .isInstanceOf(InvalidSettingException.class).hasMessageContaining("incast-buffer-bytes");
    }
}
