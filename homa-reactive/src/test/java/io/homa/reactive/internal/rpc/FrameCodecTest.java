package io.homa.reactive.internal.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.reactive.HomaException;
import java.util.List;
import org.junit.jupiter.api.Test;

class FrameCodecTest {

    private static byte[] bytes(int... values) {
        byte[] out = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = (byte) values[i];
        }
        return out;
    }

    @Test
    void shouldRoundTripFrames() {
        List<byte[]> frames = List.of(bytes(), bytes(1), bytes(2, 3));

        byte[] encoded = FrameCodec.encodeFrames(frames);

        assertThat(encoded).containsExactly(0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 2, 2, 3);
        assertThat(FrameCodec.decodeFrames(encoded)).containsExactly(bytes(), bytes(1), bytes(2, 3));
        assertThat(FrameCodec.decodeFrames(FrameCodec.encodeFrames(List.of()))).isEmpty();
    }

    @Test
    void shouldRejectMalformedFrames() {
        assertThatThrownBy(() -> FrameCodec.decodeFrames(bytes(0, 0, 0, 1, 0, 0, 0, 5, 1)))
                .isInstanceOf(HomaException.class)
                .hasMessage("malformed frames: frame 0 needs 5 bytes but only 1 remain");
        assertThatThrownBy(() -> FrameCodec.decodeFrames(bytes(0, 0, 0, 0, 9)))
                .hasMessage("malformed frames: 1 bytes follow the last frame");
        assertThatThrownBy(() -> FrameCodec.decodeFrames(bytes(0x7F, 0, 0, 0)))
                .hasMessageContaining("exceeds what 4 bytes can hold");
    }
}
