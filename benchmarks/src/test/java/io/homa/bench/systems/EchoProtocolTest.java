package io.homa.bench.systems;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class EchoProtocolTest {
    @Test
    void shouldEchoAnEchoRequestAndSizeOtherResponses() {
        byte[] echo = EchoProtocol.echoRequest(100);
        byte[] sized = EchoProtocol.request(100, 10_000);

        assertThat(EchoProtocol.respond(echo)).isSameAs(echo);
        assertThat(EchoProtocol.respond(sized)).hasSize(10_000);
        assertThat(EchoProtocol.expectedResponseBytes(echo)).isEqualTo(100);
        assertThat(EchoProtocol.expectedResponseBytes(sized)).isEqualTo(10_000);
        assertThat(EchoProtocol.echoRequest(100)).isSameAs(echo);
    }

    @Test
    void shouldRejectRequestsShorterThanTheHeader() {
        assertThatThrownBy(() -> EchoProtocol.echoRequest(3)).hasMessageContaining("at least 4 bytes");
        assertThatThrownBy(() -> EchoProtocol.respond(new byte[2])).hasMessageContaining("header");
        assertThatThrownBy(() -> EchoProtocol.request(10, 0)).hasMessageContaining("responseBytes");
    }

    @Test
    void shouldNameTheOptionForAnUnknownSystem() {
        assertThat(SystemKind.fromId("HOMA-RPC")).isEqualTo(SystemKind.HOMA_RPC);
        assertThatThrownBy(() -> SystemKind.fromId("quic")).hasMessageContaining("--systems").hasMessageContaining("homa-rpc");
    }
}
