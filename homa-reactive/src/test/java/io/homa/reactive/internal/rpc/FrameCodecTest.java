package io.homa.reactive.internal.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.JsonPayloadCodec;
import io.homa.reactive.rpc.PayloadCodec;
import java.io.ByteArrayOutputStream;
import java.util.List;
import org.junit.jupiter.api.Test;

class FrameCodecTest {

    @Test
    void shouldRoundTripFrames() {
        List<byte[]> frames = List.of(new byte[] {}, new byte[] {1}, new byte[] {2, 3});

        byte[] encoded = FrameCodec.encodeFrames(frames);

        assertThat(encoded).containsExactly(0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 2, 2, 3);
        assertThat(FrameCodec.decodeFrames(encoded)).containsExactly(new byte[] {}, new byte[] {1}, new byte[] {2, 3});
        assertThat(FrameCodec.decodeFrames(FrameCodec.encodeFrames(List.of()))).isEmpty();
    }

    @Test
    void shouldRejectMalformedFrames() {
        assertThatThrownBy(() -> FrameCodec.decodeFrames(new byte[] {0, 0, 0, 1, 0, 0, 0, 5, 1}))
                .isInstanceOf(HomaException.class)
                .hasMessage("malformed frames: frame 0 needs 5 bytes but only 1 remain");
        assertThatThrownBy(() -> FrameCodec.decodeFrames(new byte[] {0, 0, 0, 0, 9}))
                .hasMessage("malformed frames: 1 bytes follow the last frame");
        assertThatThrownBy(() -> FrameCodec.decodeFrames(new byte[] {0x7F, 0, 0, 0}))
                .hasMessageContaining("exceeds what 4 bytes can hold");
    }

    @Test
    void shouldFrameItemsInPartsWithoutCopyingThem() {
        PayloadCodec codec = new JsonPayloadCodec();
        byte[] raw = {7, 8, 9};
        FrameCodec.Item rawItem = FrameCodec.Item.encode(codec, raw);
        FrameCodec.Item text = FrameCodec.Item.encode(codec, "hi");

        byte[][] parts = FrameCodec.frameParts(List.of(rawItem, text));

        // the raw array itself is one of the parts: nothing was copied to frame it
        assertThat(java.util.Arrays.stream(parts).anyMatch(part -> part == raw)).isTrue();
        ByteArrayOutputStream joined = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            joined.writeBytes(part);
        }
        byte[] payload = joined.toByteArray();
        assertThat(payload).isEqualTo(FrameCodec.encodeFrames(List.of(codec.encode(raw), codec.encode("hi"))));
        assertThat(rawItem.frameBytes()).isEqualTo(4 + codec.encode(raw).length);
        FrameCodec.Frames frames = FrameCodec.frames(payload);
        assertThat(frames.size()).isEqualTo(2);
        assertThat(FrameCodec.frames(FrameCodec.encodeFrames(List.of(codec.encode(raw), codec.encode(new byte[0])))).decodeItems(
                codec, byte[].class, HomaStatus.INTERNAL, "s.m")).containsExactly(raw, new byte[0]);
        assertThat(FrameCodec.frames(FrameCodec.encodeFrames(List.of(codec.encode("hi")))).decodeItems(
                codec, String.class, HomaStatus.INTERNAL, "s.m")).containsExactly("hi");
        assertThat(FrameCodec.frames(new byte[0]).isEmpty()).isTrue();
        assertThat(FrameCodec.frames(FrameCodec.encodeFrames(List.of())).isEmpty()).isTrue();
    }

    @Test
    void shouldRejectMalformedFramesReadInPlace() {
        assertThatThrownBy(() -> FrameCodec.frames(new byte[] {0, 0, 0, 1, 0, 0, 0, 5, 1}))
                .isInstanceOf(HomaException.class)
                .hasMessage("malformed frames: frame 0 needs 5 bytes but only 1 remain");
        assertThatThrownBy(() -> FrameCodec.frames(new byte[] {0, 0, 0, 0, 9}))
                .hasMessage("malformed frames: 1 bytes follow the last frame");
        assertThatThrownBy(() -> FrameCodec.frames(new byte[] {0x7F, 0, 0, 0}))
                .hasMessageContaining("exceeds what 4 bytes can hold");
        assertThatThrownBy(() -> FrameCodec.frames(new byte[] {0, 0, 0, 1, (byte) 0xFF, 0, 0, 0}))
                .hasMessageContaining("frame 0 needs");
    }

    @Test
    void shouldNameTheStreamWhenAnItemDoesNotDecode() {
        byte[] payload = FrameCodec.encodeFrames(List.of("{".getBytes(java.nio.charset.StandardCharsets.UTF_8)));

        assertThatThrownBy(() -> FrameCodec.frames(payload).decodeItems(new JsonPayloadCodec(), String.class,
                HomaStatus.INVALID_ARGUMENT, "kv.scan"))
                .isInstanceOfSatisfying(HomaException.class,
                        e -> assertThat(e.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT))
                .hasMessageContaining("cannot decode an item of kv.scan");
    }
}
