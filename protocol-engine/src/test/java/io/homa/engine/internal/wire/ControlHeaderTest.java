package io.homa.engine.internal.wire;

import static io.homa.engine.internal.wire.WireBytes.assertBytes;
import static io.homa.engine.internal.wire.WireBytes.assertUntouchedOutside;
import static io.homa.engine.internal.wire.WireBytes.bytes;
import static io.homa.engine.internal.wire.WireBytes.canaryBuffer;
import static io.homa.engine.internal.wire.WireBytes.place;
import static io.homa.engine.internal.wire.WireBytes.slice;
import static io.homa.engine.internal.wire.WireBytes.zero;
import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.wire.PacketType;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** RPC_UNKNOWN, BUSY and NEED_ACK: packets that are only a common header (draft, those sections). */
class ControlHeaderTest {
    private static final long SEED = 0x5EED_C7A1L;
    private static final int ITERATIONS = 2_000;

    /**
     * Each control type with its packet as written by {@link #writeDistinctive}, by hand from the draft's
     * common-header figure. RPC_UNKNOWN is sent here by a client (S = 0); BUSY and NEED_ACK are sent by
     * servers (S = 1).
     */
    static Stream<Arguments> controlPackets() {
        return Stream.of(
                Arguments.of(PacketType.RPC_UNKNOWN, 0x0102030405060708L, bytes(
                        0x12, 0x34,                                     // source port @0
                        0xAB, 0xCD,                                     // destination port @2
                        0x00, 0x00, 0x00, 0x00,                         // offset @4
                        0x00, 0x00, 0x00,                               // reserved @8
                        0x13,                                           // type @11 = RPC_UNKNOWN (19)
                        0x00,                                           // doff @12
                        0x00,                                           // reserved @13
                        0x00, 0x00,                                     // reserved @14
                        0x00, 0x00,                                     // checksum @16
                        0x00, 0x00,                                     // urgent pointer @18
                        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08  // rpcid @20, S = 0
                )),
                Arguments.of(PacketType.BUSY, 0x0102030405060709L, bytes(
                        0x12, 0x34,                                     // source port @0
                        0xAB, 0xCD,                                     // destination port @2
                        0x00, 0x00, 0x00, 0x00,                         // offset @4
                        0x00, 0x00, 0x00,                               // reserved @8
                        0x14,                                           // type @11 = BUSY (20)
                        0x00,                                           // doff @12
                        0x00,                                           // reserved @13
                        0x00, 0x00,                                     // reserved @14
                        0x00, 0x00,                                     // checksum @16
                        0x00, 0x00,                                     // urgent pointer @18
                        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x09  // rpcid @20, S = 1
                )),
                Arguments.of(PacketType.NEED_ACK, 0x0102030405060709L, bytes(
                        0x12, 0x34,                                     // source port @0
                        0xAB, 0xCD,                                     // destination port @2
                        0x00, 0x00, 0x00, 0x00,                         // offset @4
                        0x00, 0x00, 0x00,                               // reserved @8
                        0x17,                                           // type @11 = NEED_ACK (23)
                        0x00,                                           // doff @12
                        0x00,                                           // reserved @13
                        0x00, 0x00,                                     // reserved @14
                        0x00, 0x00,                                     // checksum @16
                        0x00, 0x00,                                     // urgent pointer @18
                        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x09  // rpcid @20, S = 1
                )));
    }

    private static void writeDistinctive(ControlHeader header, PacketType type, long rpcIdWithSBit) {
        header.writeCommon(type, 0x1234, 0xABCD, rpcIdWithSBit);
    }

    @Test
    void shouldBeOnlyTheCommonHeader() {
        assertThat(ControlHeader.HEADER_LENGTH).isEqualTo(28);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("controlPackets")
    void shouldEncodeControlHeaderAsInDraftFigure(PacketType type, long rpcIdWithSBit, byte[] expected) {
        ByteBuffer buffer = ByteBuffer.allocate(28);
        ControlHeader header = new ControlHeader();
        header.wrap(buffer, 0);

        writeDistinctive(header, type, rpcIdWithSBit);

        assertBytes(buffer.array(), expected);
    }

    @Test
    void shouldDecodeRpcUnknownFromDraftBytes() {
        ControlHeader header = decode(bytes(
                0xFF, 0xFF,                                     // source port @0 = 65535
                0x00, 0x07,                                     // destination port @2 = 7
                0x00, 0x00, 0x00, 0x00,                         // offset @4
                0x00, 0x00, 0x00,                               // reserved @8
                0x13,                                           // type @11 = RPC_UNKNOWN
                0x00,                                           // doff @12
                0x00,                                           // reserved @13
                0x00, 0x00,                                     // reserved @14
                0x00, 0x00,                                     // checksum @16
                0x00, 0x00,                                     // urgent pointer @18
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64  // rpcid @20 = 100, S = 0
        ));

        assertThat(header.sourcePort()).isEqualTo(0xFFFF);
        assertThat(header.destPort()).isEqualTo(7);
        assertThat(header.type()).isEqualTo(PacketType.RPC_UNKNOWN);
        assertThat(header.rpcId()).isEqualTo(100L);
        assertThat(header.fromServer()).isFalse();
        assertThat(header.clientRpcId()).isEqualTo(100L);
    }

    @Test
    void shouldDecodeBusyFromDraftBytes() {
        ControlHeader header = decode(bytes(
                0x00, 0x07,                                     // source port @0 = 7
                0xFF, 0xFF,                                     // destination port @2 = 65535
                0x00, 0x00, 0x00, 0x00,                         // offset @4
                0x00, 0x00, 0x00,                               // reserved @8
                0x14,                                           // type @11 = BUSY
                0x00,                                           // doff @12
                0x00,                                           // reserved @13
                0x00, 0x00,                                     // reserved @14
                0x00, 0x00,                                     // checksum @16
                0x00, 0x00,                                     // urgent pointer @18
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x65  // rpcid @20 = 101, S = 1
        ));

        assertThat(header.sourcePort()).isEqualTo(7);
        assertThat(header.destPort()).isEqualTo(0xFFFF);
        assertThat(header.type()).isEqualTo(PacketType.BUSY);
        assertThat(header.rpcId()).isEqualTo(101L);
        assertThat(header.fromServer()).isTrue();
        assertThat(header.clientRpcId()).isEqualTo(100L);
    }

    @Test
    void shouldDecodeNeedAckFromDraftBytes() {
        ControlHeader header = decode(bytes(
                0xAB, 0xCD,                                     // source port @0
                0xFF, 0xFF,                                     // destination port @2 = 65535
                0x00, 0x00, 0x00, 0x00,                         // offset @4
                0x00, 0x00, 0x00,                               // reserved @8
                0x17,                                           // type @11 = NEED_ACK
                0x00,                                           // doff @12
                0x00,                                           // reserved @13
                0x00, 0x00,                                     // reserved @14
                0x00, 0x00,                                     // checksum @16
                0x00, 0x00,                                     // urgent pointer @18
                0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF  // rpcid @20, S = 1
        ));

        assertThat(header.sourcePort()).isEqualTo(0xABCD);
        assertThat(header.destPort()).isEqualTo(0xFFFF);
        assertThat(header.type()).isEqualTo(PacketType.NEED_ACK);
        assertThat(header.rpcId()).isEqualTo(-1L);
        assertThat(header.fromServer()).isTrue();
        assertThat(header.clientRpcId()).isEqualTo(0xFFFFFFFFFFFFFFFEL);
    }

    @Test
    void shouldRoundTripRandomControlHeaders() {
        PacketType[] types = {PacketType.RPC_UNKNOWN, PacketType.BUSY, PacketType.NEED_ACK};
        Random random = new Random(SEED);
        ControlHeader writer = new ControlHeader();
        ControlHeader reader = new ControlHeader();
        for (int i = 0; i < ITERATIONS; i++) {
            int at = random.nextInt(64);
            ByteBuffer buffer = canaryBuffer(at + 28 + random.nextInt(16), random.nextBoolean());
            Fields expected = new Fields(random.nextInt(0x10000), random.nextInt(0x10000), random.nextLong() & ~1L,
                    random.nextBoolean(), types[random.nextInt(types.length)]);
            writer.wrap(buffer, at);
            writer.writeCommon(expected.type(), expected.sourcePort(), expected.destPort(),
                    expected.clientRpcId() | (expected.fromServer() ? 1L : 0L));

            reader.wrap(buffer, at);
            Fields actual = new Fields(reader.sourcePort(), reader.destPort(), reader.clientRpcId(),
                    reader.fromServer(), reader.type());
            assertThat(actual).as("seed %d iteration %d", SEED, i).isEqualTo(expected);
            assertUntouchedOutside(buffer, at, 28);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("controlPackets")
    void shouldEncodeAndDecodeAtNonZeroOffsetWithoutTouchingOtherBytes(PacketType type, long rpcIdWithSBit,
            byte[] expected) {
        ByteBuffer buffer = canaryBuffer(80, false);
        zero(buffer, 29, 28);
        buffer.position(4).limit(70);
        ControlHeader header = new ControlHeader();
        header.wrap(buffer, 29);

        writeDistinctive(header, type, rpcIdWithSBit);

        assertBytes(slice(buffer, 29, 28), expected);
        assertUntouchedOutside(buffer, 29, 28);
        assertThat(buffer.position()).isEqualTo(4);
        assertThat(buffer.limit()).isEqualTo(70);

        ByteBuffer other = canaryBuffer(64, true);
        place(other, 31, expected);
        ControlHeader reader = new ControlHeader();
        reader.wrap(other, 31);
        assertThat(reader.sourcePort()).isEqualTo(0x1234);
        assertThat(reader.destPort()).isEqualTo(0xABCD);
        assertThat(reader.type()).isEqualTo(type);
        assertThat(reader.rpcId()).isEqualTo(rpcIdWithSBit);
        assertUntouchedOutside(other, 31, 28);
    }

    private static ControlHeader decode(byte[] packet) {
        ControlHeader header = new ControlHeader();
        header.wrap(ByteBuffer.wrap(packet), 0);
        return header;
    }

    /** All common-header fields a control packet carries. */
    private record Fields(int sourcePort, int destPort, long clientRpcId, boolean fromServer, PacketType type) {
    }
}
