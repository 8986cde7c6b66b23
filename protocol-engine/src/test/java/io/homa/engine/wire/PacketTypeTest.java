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

    /** The RTT extension's codes: clear of the draft's and of Linux Homa's (up to 25, BOGUS). */
    private static final Map<PacketType, Integer> EXTENSION_CODES = Map.of(
            PacketType.RTT_PROBE, 0x20,
            PacketType.RTT_RESPS, 0x21);

    private static Map<PacketType, Integer> allCodes() {
        Map<PacketType, Integer> all = new java.util.HashMap<>(DRAFT_CODES);
        all.putAll(EXTENSION_CODES);
        return all;
    }

    @Test
    void shouldDefineTheDraftsEightTypesAndTheRttExtension() {
        assertThat(PacketType.values()).containsExactlyInAnyOrderElementsOf(allCodes().keySet());
    }

    @Test
    void shouldUseDraftTypeCodes() {
        for (PacketType type : PacketType.values()) {
            assertThat(type.code()).as("code of %s", type).isEqualTo(allCodes().get(type));
        }
    }

    @Test
    void shouldKeepExtensionCodesClearOfTheDraftsAndLinuxHomas() {
        EXTENSION_CODES.values().forEach(code -> assertThat(code < 16 || code > 25).as("code %d", code).isTrue());
    }

    @Test
    void shouldLookUpEveryTypeByItsCode() {
        allCodes().forEach((type, code) -> assertThat(PacketType.fromCode(code)).isSameAs(type));
    }

    @Test
    void shouldReturnNullForEveryOtherByteValue() {
        Set<Integer> known = Set.copyOf(allCodes().values());
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
