package io.homa.reactive.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class HomaMetadataTest {

    @Test
    void shouldCarryBinaryValuesAsBase64UnderBinKeys() {
        HomaMetadata metadata = HomaMetadata.create().put("tenant", "acme").putBinary("key-bin", new byte[] {0, -1, 7});

        assertThat(metadata.asMap()).containsExactly(Map.entry("tenant", "acme"), Map.entry("key-bin", "AP8H"));
        assertThat(metadata.getBinary("key-bin")).containsExactly(0, -1, 7);
        assertThat(metadata.getBinary("other-bin")).isNull();
    }

    @Test
    void shouldRejectReservedMisplacedAndOverlongKeys() {
        HomaMetadata metadata = HomaMetadata.create();

        assertThatThrownBy(() -> metadata.put("homa-timeout-ms", "1")).hasMessageContaining("reserved");
        assertThatThrownBy(() -> metadata.put("token-bin", "x")).hasMessageContaining("use putBinary");
        assertThatThrownBy(() -> metadata.putBinary("token", new byte[1])).hasMessageContaining("must end in -bin");
        assertThatThrownBy(() -> metadata.put("", "x")).hasMessageContaining("1 to 255 characters");
        assertThatThrownBy(() -> metadata.getBinary("tenant")).hasMessageContaining("must end in -bin");
    }

    @Test
    void shouldLeaveReservedKeysOutOfReceivedMetadataAndStayReadOnly() {
        HomaMetadata received = HomaMetadata.readOnlyOf(Map.of("homa-timeout-ms", "250", "traceparent", "00-ab"));

        assertThat(received.asMap()).containsOnlyKeys("traceparent");
        assertThatThrownBy(() -> received.put("x", "y")).isInstanceOf(UnsupportedOperationException.class);
    }
}
