package io.homa.engine.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PacketTypeTest {

    /** Type codes as listed in the draft's "Common Header" section. */
    private static final Map<PacketType, Integer> DRAFT_CODES = Map.of(
            PacketType.DATA, 16,
            PacketType.GRANT, 17,
            PacketType.RESEND, 18,
            PacketType.RPC_UNKNOWN, 19,
            PacketType.BUSY, 20,
            PacketType.CUTOFFS, 21,
            PacketType.NEED_ACK, 23,
            PacketType.ACK, 24);

    @Test
    void shouldDefineExactlyTheDraftsEightTypes() {
        assertThat(PacketType.values()).containsExactlyInAnyOrderElementsOf(DRAFT_CODES.keySet());
    }

    @Test
    void shouldUseDraftTypeCodes() {
        for (PacketType type : PacketType.values()) {
            assertThat(type.code()).as("code of %s", type).isEqualTo(DRAFT_CODES.get(type));
        }
    }

    @Test
    void shouldLookUpEveryTypeByItsCode() {
        DRAFT_CODES.forEach((type, code) -> assertThat(PacketType.fromCode(code)).isSameAs(type));
    }

    @Test
    void shouldReturnNullForEveryOtherByteValue() {
        Set<Integer> known = Set.copyOf(DRAFT_CODES.values());
        for (int code = 0; code <= 0xFF; code++) {
            if (!known.contains(code)) {
                assertThat(PacketType.fromCode(code)).as("fromCode(%d)", code).isNull();
            }
        }
    }

    @Test
    void shouldReturnNullForCode22WhichTheDraftLeavesUnused() {
        // 0x16 is FREEZE in the Linux module, a debugging packet the draft does not define.
        assertThat(PacketType.fromCode(22)).isNull();
        assertThat(PacketType.fromCode(0x16)).isNull();
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, -16, 256, 0x110, Integer.MIN_VALUE, Integer.MAX_VALUE})
    void shouldReturnNullForCodesOutsideOneByte(int code) {
        assertThat(PacketType.fromCode(code)).isNull();
    }
}
