package io.homa.reactive.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;

class RpcEnvelopeTest {

    private static byte[] bytes(int... values) {
        byte[] out = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = (byte) values[i];
        }
        return out;
    }

    @Test
    void shouldEncodeRequestWithTheDocumentedLayout() {
        byte[] encoded = RpcEnvelope.encodeRequest("kv", "get", "json", bytes(0x7B, 0x7D));

        assertThat(encoded).containsExactly(
                1, 0, // version, kind
                0, 2, 'k', 'v', // serviceLen, service
                0, 3, 'g', 'e', 't', // methodLen, method
                4, 'j', 's', 'o', 'n', // codecLen, codec
                0x7B, 0x7D); // payload
    }

    @Test
    void shouldEncodeResponseWithTheDocumentedLayout() {
        byte[] encoded = RpcEnvelope.encodeResponse(HomaStatus.NOT_FOUND, "no", bytes(9));

        assertThat(encoded).containsExactly(1, 1, 5, 0, 2, 'n', 'o', 9);
    }

    @Test
    void shouldRoundTripRequestWithUnicodeNamesAndEmptyPayload() {
        RpcEnvelope.Request request = new RpcEnvelope.Request("Dienst-ü", "方法", "json", new byte[0]);

        RpcEnvelope.Request decoded = RpcEnvelope.decodeRequest(RpcEnvelope.encodeRequest(request));

        assertThat(decoded).isEqualTo(request);
        assertThat(decoded.payload()).isEmpty();
    }

    @Test
    void shouldRoundTripRequestWithLargePayload() {
        byte[] payload = new byte[1 << 20];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) (i * 31);
        }

        RpcEnvelope.Request decoded =
                RpcEnvelope.decodeRequest(RpcEnvelope.encodeRequest("s", "m", "json", payload));

        assertThat(decoded.payload()).isEqualTo(payload);
    }

    @Test
    void shouldDecodeRequestFromReadableBytesOfBufferWithoutMovingIndices() {
        byte[] envelope = RpcEnvelope.encodeRequest("svc", "m", "json", bytes(1, 2, 3));
        ByteBuf buffer = Unpooled.buffer();
        buffer.writeBytes(new byte[] {42, 42, 42});
        buffer.writeBytes(envelope);
        buffer.readerIndex(3);
        ByteBuf direct = Unpooled.directBuffer().writeBytes(envelope);

        RpcEnvelope.Request fromHeap = RpcEnvelope.decodeRequest(buffer);
        RpcEnvelope.Request fromDirect = RpcEnvelope.decodeRequest(direct);

        assertThat(fromHeap).isEqualTo(new RpcEnvelope.Request("svc", "m", "json", bytes(1, 2, 3)));
        assertThat(fromDirect).isEqualTo(fromHeap);
        assertThat(buffer.readerIndex()).isEqualTo(3);
        assertThat(direct.readerIndex()).isZero();
        direct.release();
    }

    @Test
    void shouldRoundTripOkAndErrorResponses() {
        RpcEnvelope.Response ok = RpcEnvelope.decodeResponse(RpcEnvelope.encodeOk(bytes(1, 2)));
        RpcEnvelope.Response error =
                RpcEnvelope.decodeResponse(RpcEnvelope.encodeError(HomaStatus.UNAUTHENTICATED, "wer bist du? ✋"));

        assertThat(ok).isEqualTo(new RpcEnvelope.Response(HomaStatus.OK, "", bytes(1, 2)));
        assertThat(error).isEqualTo(new RpcEnvelope.Response(HomaStatus.UNAUTHENTICATED, "wer bist du? ✋", new byte[0]));
    }

    @Test
    void shouldDecodeEveryStatusAndMapUnknownCodesToUnknown() {
        for (HomaStatus status : HomaStatus.values()) {
            assertThat(RpcEnvelope.decodeResponse(RpcEnvelope.encodeError(status, "x")).status()).isEqualTo(status);
        }
        assertThat(RpcEnvelope.decodeResponse(bytes(1, 1, 200, 0, 0)).status()).isEqualTo(HomaStatus.UNKNOWN);
    }

    @Test
    void shouldTruncateLongErrorMessageAtCharacterBoundary() {
        // 'é' is 2 UTF-8 bytes: 40,000 of them are 80,000 bytes, cut to 65,534 (not mid-character).
        String message = "é".repeat(40_000);

        RpcEnvelope.Response decoded =
                RpcEnvelope.decodeResponse(RpcEnvelope.encodeError(HomaStatus.INTERNAL, message));

        assertThat(decoded.message()).isEqualTo("é".repeat(32_767));
        assertThat(decoded.message().getBytes(StandardCharsets.UTF_8)).hasSize(65_534);
    }

    @Test
    void shouldRejectBadNamesWhenEncoding() {
        assertThatThrownBy(() -> RpcEnvelope.encodeRequest("", "m", "json", new byte[0]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("service must be 1 to 65535 UTF-8 bytes long, was 0");
        assertThatThrownBy(() -> RpcEnvelope.encodeRequest("s", "x".repeat(65_536), "json", new byte[0]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("method must be 1 to 65535 UTF-8 bytes long, was 65536");
        assertThatThrownBy(() -> RpcEnvelope.encodeRequest("s", "m", "jsön", new byte[0]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("codec name must be printable ASCII");
        assertThatThrownBy(() -> RpcEnvelope.encodeRequest("s", "m", "c".repeat(256), new byte[0]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("codec name must be 1 to 255 characters long, was 256");
    }

    @Test
    void shouldRejectMalformedRequests() {
        assertMalformedRequest(new byte[0]).hasMessageContaining("header needs 1 bytes but only 0 remain");
        assertMalformedRequest(bytes(2, 0, 0, 0)).hasMessageContaining("version 2 is not supported");
        assertMalformedRequest(bytes(1, 1, 0, 0)).hasMessageContaining("kind 1 is not a request");
        assertMalformedRequest(bytes(1, 0, 0)).hasMessageContaining("header needs 2 bytes but only 1 remain");
        assertMalformedRequest(bytes(1, 0, 0, 5, 'a', 'b')).hasMessageContaining("service needs 5 bytes but only 2 remain");
        assertMalformedRequest(bytes(1, 0, 0, 1, 0xC3, 0, 1, 'm', 1, 'j'))
                .hasMessageContaining("service is not valid UTF-8");
        assertMalformedRequest(bytes(1, 0, 0, 1, 's', 0, 1, 'm'))
                .hasMessageContaining("header needs 1 bytes but only 0 remain");
        assertMalformedRequest(bytes(1, 0, 0, 1, 's', 0, 1, 'm', 2, 'j', 0xE9))
                .hasMessageContaining("codec name is not printable ASCII");
        assertMalformedRequest(bytes(1, 0, 0, 1, 's', 0, 1, 'm', 4, 'j'))
                .hasMessageContaining("codec name needs 4 bytes but only 1 remain");
    }

    @Test
    void shouldRejectMalformedResponses() {
        assertMalformedResponse(new byte[0]).hasMessageContaining("malformed response envelope");
        assertMalformedResponse(bytes(1, 0, 0, 0, 0)).hasMessageContaining("kind 0 is not a response");
        assertMalformedResponse(bytes(1, 1, 0, 0)).hasMessageContaining("header needs 2 bytes but only 1 remain");
        assertMalformedResponse(bytes(1, 1, 13, 0, 9, 'x')).hasMessageContaining("error message needs 9 bytes");
        assertMalformedResponse(bytes(0, 1, 0, 0, 0)).hasMessageContaining("version 0 is not supported");
    }

    private static AbstractThrowableAssert<?, ? extends Throwable> assertMalformedRequest(byte[] message) {
        return assertThatThrownBy(() -> RpcEnvelope.decodeRequest(message))
                .isInstanceOf(HomaException.class)
                .hasMessageStartingWith("malformed request envelope: ")
                .satisfies(e -> assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.INVALID_ARGUMENT));
    }

    private static AbstractThrowableAssert<?, ? extends Throwable> assertMalformedResponse(byte[] message) {
        return assertThatThrownBy(() -> RpcEnvelope.decodeResponse(message))
                .isInstanceOf(HomaException.class)
                .satisfies(e -> assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.INVALID_ARGUMENT));
    }
}
