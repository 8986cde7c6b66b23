package io.homa.reactive.internal.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.reactive.HomaException;
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
}
