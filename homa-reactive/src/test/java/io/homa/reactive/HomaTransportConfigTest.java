package io.homa.reactive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.engine.EngineConfig;
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
        assertThat(config.linkMbps()).isEqualTo(HomaTransportConfig.DEFAULT_LINK_MBPS);
        assertThat(config.priorityTos()).isTrue();
    }

    @Test
    void shouldRoundTripThroughToBuilder() {
        HomaTransportConfig config = HomaTransportConfig.builder().bindAddress("127.0.0.1").port(4000)
                .receiveBufferBytes(1 << 20).sendBufferBytes(1 << 20).nativeTransport(false).linkMbps(500).build();

        assertThat(config.priorityTos()).isTrue();
        assertThat(config.toBuilder().build()).isEqualTo(config);
        assertThat(config.toBuilder().priorityTos(false).build().priorityTos()).isFalse();
        assertThat(config.toBuilder().linkMbps(0).build().linkMbps()).isZero();
    }

    @Test
    void shouldRejectOutOfRangeValuesNamingThem() {
        assertThatThrownBy(() -> HomaTransportConfig.builder().port(65536).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("port must be between 0 and 65535, was 65536");
        assertThatThrownBy(() -> HomaTransportConfig.builder().receiveBufferBytes(1024).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("receive-buffer-size must be between 65536 and 1073741824 bytes, was 1024");
        assertThatThrownBy(() -> HomaTransportConfig.builder().linkMbps(-1).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("link-mbps must be between 0 and 1000000 (0 = no pacing), was -1");
        assertThatThrownBy(() -> HomaTransportConfig.builder().bindAddress(null).build())
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("bind-address");
    }
}
