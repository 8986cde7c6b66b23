package io.homa.reactive.internal.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.RpcEnvelope;
import io.homa.reactive.rpc.TestTypes;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class EnvelopeCodecTest {

    private static byte[] bytes(int... values) {
        byte[] out = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = (byte) values[i];
        }
        return out;
    }

    @Test
    void shouldEncodeRequestWithTheDocumentedLayout() {
        byte[] encoded = EnvelopeCodec.encodeRequest("kv", "get", "json", bytes(0x7B, 0x7D));

        assertThat(encoded).containsExactly(
                2, 0, // version, kind
                0, 2, 'k', 'v', // serviceLen, service
                0, 3, 'g', 'e', 't', // methodLen, method
                4, 'j', 's', 'o', 'n', // codecLen, codec
                0, 0, // metadata count
                0x7B, 0x7D); // payload
    }

    @Test
    void shouldEncodeRequestMetadataWithTheDocumentedLayout() {
        Map<String, String> metadata = new LinkedHashMap<>();
        metadata.put("homa-timeout-ms", "250");
        metadata.put("b3", "ü");

        byte[] encoded = EnvelopeCodec.encodeRequest("s", "m", "cbor", metadata, bytes(1));

        assertThat(encoded).containsExactly(
                2, 0, 0, 1, 's', 0, 1, 'm', 4, 'c', 'b', 'o', 'r',
                0, 2, // metadata count
                15, 'h', 'o', 'm', 'a', '-', 't', 'i', 'm', 'e', 'o', 'u', 't', '-', 'm', 's', 0, 3, '2', '5', '0',
                2, 'b', '3', 0, 2, 0xC3, 0xBC, // "ü" is 2 UTF-8 bytes
                1); // payload
    }

    @Test
    void shouldEncodeResponseWithTheDocumentedLayout() {
        byte[] encoded = EnvelopeCodec.encodeResponse(HomaStatus.NOT_FOUND, "no", bytes(9));
        byte[] withMetadata = EnvelopeCodec.encodeResponse(HomaStatus.INTERNAL, "", Map.of("k", "v"), bytes(9));

        assertThat(encoded).containsExactly(2, 1, 5, 0, 2, 'n', 'o', 0, 0, 9);
        assertThat(withMetadata).containsExactly(2, 1, 13, 0, 0, 0, 1, 1, 'k', 0, 1, 'v', 9);
    }

    @Test
    void shouldRoundTripMetadataInRequestsAndResponses() {
        Map<String, String> metadata = Map.of("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                "homa-error-type", "java.lang.IllegalStateException", "empty", "");
        RpcEnvelope.Request request = new RpcEnvelope.Request("s", "m", "smile", metadata, bytes(1, 2));
        RpcEnvelope.Response response = new RpcEnvelope.Response(HomaStatus.ABORTED, "x", metadata, bytes(3));

        assertThat(EnvelopeCodec.decodeRequest(EnvelopeCodec.encodeRequest(request))).isEqualTo(request);
        assertThat(EnvelopeCodec.decodeResponse(EnvelopeCodec.encodeResponse(response))).isEqualTo(response);
        assertThat(EnvelopeCodec.decodeResponse(EnvelopeCodec.encodeResponse(response)).metadata())
                .containsEntry("empty", "");
    }

    @Test
    void shouldRoundTripRequestWithUnicodeNamesAndEmptyPayload() {
        RpcEnvelope.Request request = new RpcEnvelope.Request("Dienst-ü", "方法", "json", new byte[0]);

        RpcEnvelope.Request decoded = EnvelopeCodec.decodeRequest(EnvelopeCodec.encodeRequest(request));

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
                EnvelopeCodec.decodeRequest(EnvelopeCodec.encodeRequest("s", "m", "json", payload));

        assertThat(decoded.payload()).isEqualTo(payload);
    }

    @Test
    void shouldDecodeRequestFromReadableBytesOfBufferWithoutMovingIndices() {
        byte[] envelope = EnvelopeCodec.encodeRequest("svc", "m", "json", bytes(1, 2, 3));
        ByteBuf buffer = Unpooled.buffer();
        buffer.writeBytes(new byte[] {42, 42, 42});
        buffer.writeBytes(envelope);
        buffer.readerIndex(3);
        ByteBuf direct = Unpooled.directBuffer().writeBytes(envelope);

        RpcEnvelope.Request fromHeap = EnvelopeCodec.decodeRequest(buffer);
        RpcEnvelope.Request fromDirect = EnvelopeCodec.decodeRequest(direct);

        assertThat(fromHeap).isEqualTo(new RpcEnvelope.Request("svc", "m", "json", bytes(1, 2, 3)));
        assertThat(fromDirect).isEqualTo(fromHeap);
        assertThat(buffer.readerIndex()).isEqualTo(3);
        assertThat(direct.readerIndex()).isZero();
        direct.release();
    }

    @Test
    void shouldRoundTripOkAndErrorResponses() {
        RpcEnvelope.Response ok = EnvelopeCodec.decodeResponse(EnvelopeCodec.encodeOk(bytes(1, 2)));
        RpcEnvelope.Response error =
                EnvelopeCodec.decodeResponse(EnvelopeCodec.encodeError(HomaStatus.UNAUTHENTICATED, "wer bist du? ✋"));

        assertThat(ok).isEqualTo(new RpcEnvelope.Response(HomaStatus.OK, "", bytes(1, 2)));
        assertThat(error).isEqualTo(new RpcEnvelope.Response(HomaStatus.UNAUTHENTICATED, "wer bist du? ✋", new byte[0]));
    }

    @Test
    void shouldHoldAPayloadOfPartsAsTheJoinedBytes() {
        RpcEnvelope.Response parts = RpcEnvelope.Response.okParts(bytes(1), bytes(2, 3), new byte[0]);

        assertThat(parts.payloadLengthBytes()).isEqualTo(3);
        assertThat(parts.payload()).containsExactly(1, 2, 3);
        assertThat(parts).isEqualTo(RpcEnvelope.Response.ok(bytes(1, 2, 3))).hasSameHashCodeAs(RpcEnvelope.Response.ok(bytes(1, 2, 3)));
        assertThat(parts.withMetadata("k", "v").payload()).containsExactly(1, 2, 3);
        assertThat(EnvelopeCodec.decodeResponse(EnvelopeCodec.encodeResponse(parts)).payload()).containsExactly(1, 2, 3);
        assertThatThrownBy(() -> RpcEnvelope.Response.okParts(bytes(1), null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void shouldDecodeEveryStatusAndMapUnknownCodesToUnknown() {
        for (HomaStatus status : HomaStatus.values()) {
            assertThat(EnvelopeCodec.decodeResponse(EnvelopeCodec.encodeError(status, "x")).status()).isEqualTo(status);
        }
        assertThat(EnvelopeCodec.decodeResponse(bytes(2, 1, 200, 0, 0, 0, 0)).status()).isEqualTo(HomaStatus.UNKNOWN);
    }

    @Test
    void shouldTruncateLongErrorMessageAtCharacterBoundary() {
        // 'é' is 2 UTF-8 bytes: 40,000 of them are 80,000 bytes, cut to 65,534 (not mid-character).
        String message = "é".repeat(40_000);

        RpcEnvelope.Response decoded =
                EnvelopeCodec.decodeResponse(EnvelopeCodec.encodeError(HomaStatus.INTERNAL, message));

        assertThat(decoded.message()).isEqualTo("é".repeat(32_767));
        assertThat(decoded.message().getBytes(StandardCharsets.UTF_8)).hasSize(65_534);
    }

    @Test
    void shouldRejectBadNamesWhenEncoding() {
        assertThatThrownBy(() -> EnvelopeCodec.encodeRequest("", "m", "json", new byte[0]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("service must be 1 to 65535 UTF-8 bytes long, was 0");
        assertThatThrownBy(() -> EnvelopeCodec.encodeRequest("s", "x".repeat(65_536), "json", new byte[0]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("method must be 1 to 65535 UTF-8 bytes long, was 65536");
        assertThatThrownBy(() -> EnvelopeCodec.encodeRequest("s", "m", "jsön", new byte[0]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("codec name must be printable ASCII");
        assertThatThrownBy(() -> EnvelopeCodec.encodeRequest("s", "m", "c".repeat(256), new byte[0]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("codec name must be 1 to 255 characters long, was 256");
        assertThatThrownBy(() -> EnvelopeCodec.encodeRequest("s", "m", "json", Map.of("a key", "v"), new byte[0]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("metadata key must be printable ASCII, was 'a key'");
        assertThatThrownBy(() -> EnvelopeCodec.encodeRequest("s", "m", "json", Map.of("k", "v".repeat(65_536)), new byte[0]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("metadata value of 'k' must be at most 65535 UTF-8 bytes long, was 65536");
    }

    @Test
    void shouldRejectMalformedRequests() {
        assertMalformedRequest(new byte[0]).hasMessageContaining("header needs 1 bytes but only 0 remain");
        assertMalformedRequest(bytes(1, 0, 0, 1, 's', 0, 1, 'm', 1, 'j', 0))
                .hasMessageContaining("version 1 is not supported (expected 2; the peer runs an older Homa RPC layer");
        assertMalformedRequest(bytes(3, 0, 0, 0)).hasMessageContaining("version 3 is not supported");
        assertMalformedRequest(bytes(2, 1, 0, 0)).hasMessageContaining("kind 1 is not a request");
        assertMalformedRequest(bytes(2, 0, 0)).hasMessageContaining("header needs 2 bytes but only 1 remain");
        assertMalformedRequest(bytes(2, 0, 0, 5, 'a', 'b')).hasMessageContaining("service needs 5 bytes but only 2 remain");
        assertMalformedRequest(bytes(2, 0, 0, 1, 0xC3, 0, 1, 'm', 1, 'j', 0, 0))
                .hasMessageContaining("service is not valid UTF-8");
        assertMalformedRequest(bytes(2, 0, 0, 1, 's', 0, 1, 'm'))
                .hasMessageContaining("header needs 1 bytes but only 0 remain");
        assertMalformedRequest(bytes(2, 0, 0, 1, 's', 0, 1, 'm', 2, 'j', 0xE9, 0, 0))
                .hasMessageContaining("codec name is not printable ASCII");
        assertMalformedRequest(bytes(2, 0, 0, 1, 's', 0, 1, 'm', 4, 'j'))
                .hasMessageContaining("codec name needs 4 bytes but only 1 remain");
        assertMalformedRequest(bytes(2, 0, 0, 1, 's', 0, 1, 'm', 1, 'j', 0))
                .hasMessageContaining("header needs 2 bytes but only 1 remain");
        assertMalformedRequest(bytes(2, 0, 0, 1, 's', 0, 1, 'm', 1, 'j', 0, 1, 1, 'k', 0, 5, 'v'))
                .hasMessageContaining("metadata value of 'k' needs 5 bytes but only 1 remain");
        assertMalformedRequest(bytes(2, 0, 0, 1, 's', 0, 1, 'm', 1, 'j', 0, 1, 0, 0, 0))
                .hasMessageContaining("metadata key is empty");
        assertMalformedRequest(bytes(2, 0, 0, 1, 's', 0, 1, 'm', 1, 'j', 0, 2, 1, 'k', 0, 0, 1, 'k', 0, 0))
                .hasMessageContaining("metadata key 'k' appears twice");
    }

    @Test
    void shouldRejectMalformedResponses() {
        assertMalformedResponse(new byte[0]).hasMessageContaining("malformed response envelope");
        assertMalformedResponse(bytes(2, 0, 0, 0, 0, 0, 0)).hasMessageContaining("kind 0 is not a response");
        assertMalformedResponse(bytes(2, 1, 0, 0)).hasMessageContaining("header needs 2 bytes but only 1 remain");
        assertMalformedResponse(bytes(2, 1, 13, 0, 9, 'x')).hasMessageContaining("error message needs 9 bytes");
        assertMalformedResponse(bytes(2, 1, 13, 0, 0)).hasMessageContaining("header needs 2 bytes but only 0 remain");
        assertMalformedResponse(bytes(0, 1, 0, 0, 0)).hasMessageContaining("version 0 is not supported");
        assertMalformedResponse(bytes(1, 1, 0, 0, 0)).hasMessageContaining("version 1 is not supported (expected 2");
    }

    private static AbstractThrowableAssert<?, ? extends Throwable> assertMalformedRequest(byte[] message) {
        return assertThatThrownBy(() -> EnvelopeCodec.decodeRequest(message))
                .isInstanceOf(HomaException.class)
                .hasMessageStartingWith("malformed request envelope: ")
                .satisfies(e -> assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.INVALID_ARGUMENT));
    }

    private static AbstractThrowableAssert<?, ? extends Throwable> assertMalformedResponse(byte[] message) {
        return assertThatThrownBy(() -> EnvelopeCodec.decodeResponse(message))
                .isInstanceOf(HomaException.class)
                .satisfies(e -> assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.INVALID_ARGUMENT));
    }

    @Test
    void shouldLeaveThePayloadInPlaceInTheViewsTheRpcLayerDecodesFrom() {
        byte[] payload = {1, 2, 3, 4};
        byte[] request = EnvelopeCodec.encodeRequest("svc", "m", "json", java.util.Map.of("k", "v"), payload);
        byte[] message = new byte[request.length + 10];
        System.arraycopy(request, 0, message, 6, request.length);
        io.netty.buffer.ByteBuf buffer = io.netty.buffer.Unpooled.wrappedBuffer(message, 6, request.length);

        EnvelopeCodec.RequestView view = EnvelopeCodec.decodeRequestView(buffer);

        assertThat(view.payload().array()).as("no copy").isSameAs(message);
        assertThat(io.netty.buffer.ByteBufUtil.getBytes(view.payload())).containsExactly(1, 2, 3, 4);
        assertThat(view.payload().arrayOffset() + view.payload().readerIndex()).isEqualTo(6 + request.length - 4);
        assertThat(view.toRequest()).isEqualTo(EnvelopeCodec.decodeRequest(request));
        assertThat(buffer.readerIndex()).isZero();

        byte[] response = EnvelopeCodec.encodeResponse(HomaStatus.OK, "", java.util.Map.of("a", "b"), payload);
        EnvelopeCodec.ResponseView responseView = EnvelopeCodec.decodeResponseView(io.netty.buffer.Unpooled.wrappedBuffer(response));
        assertThat(responseView.payload().array()).isSameAs(response);
        assertThat(io.netty.buffer.ByteBufUtil.getBytes(responseView.payload())).containsExactly(1, 2, 3, 4);
        assertThat(responseView.metadata()).containsEntry("a", "b");
    }

    @ParameterizedTest(name = "payload of {0} bytes, metadata value of {1} bytes, in 16 KiB chunks")
    @CsvSource({"0, 1", "1, 1", "100000, 1", "100000, 5000", "100000, 20000", "10, 20000"})
    void shouldReadEnvelopesOfMessagesInChunksAndLeaveThePayloadThere(int payloadBytes, int metadataValueBytes) {
        // A long message arrives as the transport's chunks, a composite buffer without one array:
        // the envelope is read from its first bytes (or the whole message, if it is longer than
        // the probe), the payload stays in the chunks.
        byte[] payload = new byte[payloadBytes];
        new java.util.Random(payloadBytes).nextBytes(payload);
        java.util.Map<String, String> metadata = java.util.Map.of("k", "v".repeat(metadataValueBytes));
        byte[] request = EnvelopeCodec.encodeRequest("svc", "m", "json", metadata, payload);
        byte[] response = EnvelopeCodec.encodeResponse(HomaStatus.OK, "", metadata, payload);

        EnvelopeCodec.RequestView view = EnvelopeCodec.decodeRequestView(TestTypes.chunked(request));
        assertThat(view.metadata()).isEqualTo(metadata);
        assertThat(io.netty.buffer.ByteBufUtil.getBytes(view.payload())).isEqualTo(payload);
        EnvelopeCodec.ResponseView responseView = EnvelopeCodec.decodeResponseView(TestTypes.chunked(response));
        assertThat(responseView.metadata()).isEqualTo(metadata);
        assertThat(io.netty.buffer.ByteBufUtil.getBytes(responseView.payload())).isEqualTo(payload);

        byte[] cut = java.util.Arrays.copyOf(request, request.length - payloadBytes - 1); // the envelope less its last byte
        assertThatThrownBy(() -> EnvelopeCodec.decodeRequestView(TestTypes.chunked(cut)))
                .isInstanceOf(HomaException.class)
                .hasMessageContaining("request");
    }

}
