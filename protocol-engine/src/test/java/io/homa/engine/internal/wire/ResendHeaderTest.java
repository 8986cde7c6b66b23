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
import org.junit.jupiter.api.Test;

/** RESEND packets: draft figure "Format of RESEND packets". */
class ResendHeaderTest {
    private static final long SEED = 0x5EED_2E5EL;
    private static final int ITERATIONS = 2_000;

    /** The packet written by {@link #writeDistinctive}, by hand from the draft's figure. */
    private static final byte[] DISTINCTIVE = bytes(
            // common header
            0x12, 0x34,                                     // source port @0
            0xAB, 0xCD,                                     // destination port @2
            0x00, 0x00, 0x00, 0x00,                         // offset @4 (DATA only)
            0x00, 0x00, 0x00,                               // reserved @8
            0x12,                                           // type @11 = RESEND (18)
            0x00,                                           // doff @12
            0x00,                                           // reserved @13
            0x00, 0x00,                                     // reserved @14
            0x00, 0x00,                                     // checksum @16
            0x00, 0x00,                                     // urgent pointer @18
            0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // rpcid @20, S = 0 (client asks for response bytes)
            // RESEND
            0x00, 0x00, 0x2B, 0xC0,                         // offset @28 = 11200
            0x00, 0x00, 0x05, 0x78,                         // length @32 = 1400
            0x06                                            // priority @36
    );

    private static void writeDistinctive(ResendHeader resend) {
        resend.writeCommon(PacketType.RESEND, 0x1234, 0xABCD, 0x0102030405060708L);
        resend.resendOffset(11_200).length(1_400).priority(6);
    }

    @Test
    void shouldHaveDraftLengthAndOffsets() {
        assertThat(ResendHeader.HEADER_LENGTH).isEqualTo(37);
        assertThat(ResendHeader.RESEND_OFFSET_OFFSET).isEqualTo(28);
        assertThat(ResendHeader.LENGTH_OFFSET).isEqualTo(32);
        assertThat(ResendHeader.PRIORITY_OFFSET).isEqualTo(36);
    }

    @Test
    void shouldEncodeResendHeaderAsInDraftFigure() {
        ByteBuffer buffer = ByteBuffer.allocate(37);
        ResendHeader resend = new ResendHeader();
        resend.wrap(buffer, 0);

        writeDistinctive(resend);

        assertBytes(buffer.array(), DISTINCTIVE);
    }

    @Test
    void shouldDecodeResendHeaderFromDraftBytes() {
        byte[] packet = bytes(
                0xFF, 0xFF,                                     // source port @0 = 65535
                0xFF, 0xFF,                                     // destination port @2 = 65535
                0x00, 0x00, 0x00, 0x00,                         // offset @4
                0x00, 0x00, 0x00,                               // reserved @8
                0x12,                                           // type @11 = RESEND
                0x00,                                           // doff @12
                0x00,                                           // reserved @13
                0x00, 0x00,                                     // reserved @14
                0x00, 0x00,                                     // checksum @16
                0x00, 0x00,                                     // urgent pointer @18
                0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, // rpcid @20, S = 1 (server asks for request bytes)
                0x00, 0x10, 0x00, 0x00,                         // offset @28 = 1 MiB
                0xFF, 0xFF, 0xFF, 0xFF,                         // length @32 = -1 as int
                0x07                                            // priority @36 = 7 (highest)
        );
        ResendHeader resend = new ResendHeader();
        resend.wrap(ByteBuffer.wrap(packet), 0);

        assertThat(resend.sourcePort()).isEqualTo(0xFFFF);
        assertThat(resend.destPort()).isEqualTo(0xFFFF);
        assertThat(resend.type()).isEqualTo(PacketType.RESEND);
        assertThat(resend.rpcId()).isEqualTo(0x8000000000000001L);
        assertThat(resend.fromServer()).isTrue();
        assertThat(resend.clientRpcId()).isEqualTo(0x8000000000000000L);
        assertThat(resend.resendOffset()).isEqualTo(0x00100000);
        assertThat(resend.length()).isEqualTo(-1);
        assertThat(resend.priority()).isEqualTo(7);
    }

    @Test
    void shouldRoundTripRandomResendHeaders() {
        Random random = new Random(SEED);
        ResendHeader writer = new ResendHeader();
        ResendHeader reader = new ResendHeader();
        for (int i = 0; i < ITERATIONS; i++) {
            int at = random.nextInt(64);
            ByteBuffer buffer = canaryBuffer(at + 37 + random.nextInt(16), random.nextBoolean());
            Fields expected = Fields.random(random);
            writer.wrap(buffer, at);
            expected.writeTo(writer);

            reader.wrap(buffer, at);
            assertThat(Fields.readFrom(reader)).as("seed %d iteration %d", SEED, i).isEqualTo(expected);
            assertUntouchedOutside(buffer, at, 37);
        }
    }

    @Test
    void shouldEncodeAndDecodeAtNonZeroOffsetWithoutTouchingOtherBytes() {
        ByteBuffer buffer = canaryBuffer(128, true);
        zero(buffer, 51, 37);
        buffer.position(60).limit(120);
        ResendHeader resend = new ResendHeader();
        resend.wrap(buffer, 51);

        writeDistinctive(resend);

        assertBytes(slice(buffer, 51, 37), DISTINCTIVE);
        assertUntouchedOutside(buffer, 51, 37);
        assertThat(buffer.position()).isEqualTo(60);
        assertThat(buffer.limit()).isEqualTo(120);

        ByteBuffer other = canaryBuffer(100, false);
        place(other, 9, DISTINCTIVE);
        ResendHeader reader = new ResendHeader();
        reader.wrap(other, 9);
        assertThat(reader.sourcePort()).isEqualTo(0x1234);
        assertThat(reader.destPort()).isEqualTo(0xABCD);
        assertThat(reader.type()).isEqualTo(PacketType.RESEND);
        assertThat(reader.rpcId()).isEqualTo(0x0102030405060708L);
        assertThat(reader.fromServer()).isFalse();
        assertThat(reader.resendOffset()).isEqualTo(11_200);
        assertThat(reader.length()).isEqualTo(1_400);
        assertThat(reader.priority()).isEqualTo(6);
        assertUntouchedOutside(other, 9, 37);
    }

    /** All RESEND fields, as written and as read back. */
    private record Fields(int sourcePort, int destPort, long clientRpcId, boolean fromServer, PacketType type,
            int resendOffset, int length, int priority) {

        static Fields random(Random random) {
            return new Fields(random.nextInt(0x10000), random.nextInt(0x10000), random.nextLong() & ~1L,
                    random.nextBoolean(), PacketType.RESEND, random.nextInt(), random.nextInt(), random.nextInt(8));
        }

        void writeTo(ResendHeader resend) {
            resend.writeCommon(type, sourcePort, destPort, clientRpcId | (fromServer ? 1L : 0L));
            resend.resendOffset(resendOffset).length(length).priority(priority);
        }

        static Fields readFrom(ResendHeader resend) {
            return new Fields(resend.sourcePort(), resend.destPort(), resend.clientRpcId(), resend.fromServer(),
                    resend.type(), resend.resendOffset(), resend.length(), resend.priority());
        }
    }
}
