package io.homa.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Metadata;
import io.grpc.Status;
import java.io.ByteArrayOutputStream;
import java.util.List;
import org.junit.jupiter.api.Test;

class GrpcWireTest {
    private static final Metadata.Key<String> TEXT = Metadata.Key.of("x-text", Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<byte[]> BINARY = Metadata.Key.of("x-data-bin", Metadata.BINARY_BYTE_MARSHALLER);

    @Test
    void shouldRoundTripARequestWithMetadataAndMessage() {
        Metadata headers = new Metadata();
        headers.put(TEXT, "one");
        headers.put(TEXT, "two");
        headers.put(BINARY, new byte[] {0, -1, 7});

        GrpcWire.Request request = GrpcWire.decodeRequest(
                GrpcWire.encodeRequest(42L, 1_500_000L, "host:4000", headers, new byte[] {9, 8}));

        assertThat(request.callId()).isEqualTo(42L);
        assertThat(request.timeoutNs()).isEqualTo(1_500_000L);
        assertThat(request.authority()).isEqualTo("host:4000");
        assertThat(request.headers().getAll(TEXT)).containsExactly("one", "two");
        assertThat(request.headers().get(BINARY)).containsExactly(0, -1, 7);
        assertThat(request.message().toArray()).containsExactly(9, 8);
    }

    @Test
    void shouldTellAnEmptyMessageFromNone() {
        assertThat(GrpcWire.decodeRequest(GrpcWire.encodeRequest(1, 0, "", new Metadata(), null)).message()).isNull();
        assertThat(GrpcWire.decodeRequest(GrpcWire.encodeRequest(1, 0, "", new Metadata(), new byte[0])).message()
                .toArray()).isEmpty();
    }

    @Test
    void shouldRoundTripResponseFrames() {
        Metadata headers = new Metadata();
        headers.put(TEXT, "h");
        Metadata trailers = new Metadata();
        trailers.put(BINARY, new byte[] {1});
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        GrpcWire.writeHeaders(out, headers);
        GrpcWire.writeMessage(out, new byte[] {5, 6, 7});
        GrpcWire.writeTrailers(out, Status.NOT_FOUND.withDescription("nö 😈 %"), trailers);
        ByteArrayOutputStream noDescription = new ByteArrayOutputStream();
        GrpcWire.writeTrailers(noDescription, Status.OK, new Metadata());

        List<GrpcWire.Frame> frames = GrpcWire.decodeFrames(out.toByteArray());
        GrpcWire.Frame ok = GrpcWire.decodeFrames(noDescription.toByteArray()).get(0);

        assertThat(frames).extracting(GrpcWire.Frame::type)
                .containsExactly(GrpcWire.HEADERS, GrpcWire.MESSAGE, GrpcWire.TRAILERS);
        assertThat(frames.get(0).headers().get(TEXT)).isEqualTo("h");
        assertThat(frames.get(1).message().toArray()).containsExactly(5, 6, 7);
        assertThat(frames.get(1).message().stream().readAllBytes()).containsExactly(5, 6, 7);
        assertThat(frames.get(2).status().getCode()).isEqualTo(Status.Code.NOT_FOUND);
        assertThat(frames.get(2).status().getDescription()).isEqualTo("nö 😈 %");
        assertThat(frames.get(2).trailers().get(BINARY)).containsExactly(1);
        assertThat(ok.status().getCode()).isEqualTo(Status.Code.OK);
        assertThat(ok.status().getDescription()).isNull();
    }

    /** What a unary response and a stream item are built with: the same bytes as the frames written one by one. */
    @Test
    void shouldJoinFramesAroundAMessageAsTheStreamWritesThem() {
        Metadata headers = new Metadata();
        headers.put(TEXT, "h");
        byte[] message = new byte[1024 * 1024 + 3];
        new java.util.Random(7).nextBytes(message);
        ByteArrayOutputStream before = new ByteArrayOutputStream();
        GrpcWire.writeHeaders(before, headers);
        ByteArrayOutputStream after = new ByteArrayOutputStream();
        GrpcWire.writeTrailers(after, Status.OK, new Metadata());
        ByteArrayOutputStream written = new ByteArrayOutputStream();
        GrpcWire.writeHeaders(written, headers);
        GrpcWire.writeMessage(written, message);
        GrpcWire.writeTrailers(written, Status.OK, new Metadata());

        byte[] joined = GrpcWire.frames(before.toByteArray(), message, after.toByteArray());
        byte[] noMessage = GrpcWire.frames(before.toByteArray(), null, after.toByteArray());
        byte[] messageOnly = GrpcWire.frames(new byte[0], new byte[0], new byte[0]);

        assertThat(joined).isEqualTo(written.toByteArray());
        assertThat(GrpcWire.decodeFrames(joined).get(1).message().toArray()).isEqualTo(message);
        assertThat(GrpcWire.decodeFrames(noMessage)).extracting(GrpcWire.Frame::type)
                .containsExactly(GrpcWire.HEADERS, GrpcWire.TRAILERS);
        assertThat(GrpcWire.decodeFrames(messageOnly)).singleElement()
                .satisfies(frame -> assertThat(frame.message().toArray()).isEmpty());
    }

    @Test
    void shouldRoundTripARequestWithALargeMessage() {
        Metadata headers = new Metadata();
        headers.put(TEXT, "h");
        byte[] message = new byte[1024 * 1024];
        new java.util.Random(9).nextBytes(message);

        GrpcWire.Request request = GrpcWire.decodeRequest(GrpcWire.encodeRequest(42, 7, "a:1", headers, message));

        assertThat(request.callId()).isEqualTo(42);
        assertThat(request.timeoutNs()).isEqualTo(7);
        assertThat(request.authority()).isEqualTo("a:1");
        assertThat(request.headers().get(TEXT)).isEqualTo("h");
        assertThat(request.message().toArray()).isEqualTo(message);
        assertThat(request.message().stream().readAllBytes()).isEqualTo(message);
    }

    @Test
    void shouldRejectMalformedBytes() {
        assertThatThrownBy(() -> GrpcWire.decodeRequest(new byte[] {2, 0}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("version 2");
        assertThatThrownBy(() -> GrpcWire.decodeFrames(new byte[] {GrpcWire.MESSAGE, 0, 0, 0, 9, 1}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("malformed");
        assertThatThrownBy(() -> GrpcWire.decodeFrames(new byte[] {77}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown frame type 77");
    }
}
