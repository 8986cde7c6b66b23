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

/** GRANT packets: draft figure "Format of GRANT packets". */
class GrantHeaderTest {
    private static final long SEED = 0x5EED_6AA7L;
    private static final int ITERATIONS = 2_000;

    /** The packet written by {@link #writeDistinctive}, by hand from the draft's figure. */
    private static final byte[] DISTINCTIVE = bytes(
            // common header
            0x12, 0x34,                                     // source port @0
            0xAB, 0xCD,                                     // destination port @2
            0x00, 0x00, 0x00, 0x00,                         // offset @4 (DATA only)
            0x00, 0x00, 0x00,                               // reserved @8
            0x11,                                           // type @11 = GRANT (17)
            0x00,                                           // doff @12
            0x00,                                           // reserved @13
            0x00, 0x00,                                     // reserved @14
            0x00, 0x00,                                     // checksum @16
            0x00, 0x00,                                     // urgent pointer @18
            0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x09, // rpcid @20, S = 1 (server grants a request)
            // GRANT
            0x00, 0x01, 0x86, 0xA0,                         // offset @28 = 100000
            0x05,                                           // priority @32
            0x01                                            // resend all @33
    );

    private static void writeDistinctive(GrantHeader grant) {
        grant.writeCommon(PacketType.GRANT, 0x1234, 0xABCD, 0x0102030405060708L | HomaHeader.FROM_SERVER_BIT);
        grant.grantOffset(100_000).priority(5).resendAll(true);
    }

    @Test
    void shouldHaveDraftLengthAndOffsets() {
        assertThat(GrantHeader.HEADER_LENGTH).isEqualTo(34);
        assertThat(GrantHeader.GRANT_OFFSET_OFFSET).isEqualTo(28);
        assertThat(GrantHeader.PRIORITY_OFFSET).isEqualTo(32);
        assertThat(GrantHeader.RESEND_ALL_OFFSET).isEqualTo(33);
    }

    @Test
    void shouldEncodeGrantHeaderAsInDraftFigure() {
        ByteBuffer buffer = ByteBuffer.allocate(34);
        GrantHeader grant = new GrantHeader();
        grant.wrap(buffer, 0);

        writeDistinctive(grant);

        assertBytes(buffer.array(), DISTINCTIVE);
    }

    @Test
    void shouldEncodeResendAllFalseAsZeroByte() {
        ByteBuffer buffer = ByteBuffer.allocate(34);
        buffer.put(33, (byte) 0x7F);
        GrantHeader grant = new GrantHeader();
        grant.wrap(buffer, 0);

        grant.resendAll(false);

        assertThat(buffer.get(33)).isZero();
    }

    @Test
    void shouldDecodeGrantHeaderFromDraftBytes() {
        byte[] packet = bytes(
                0xFF, 0xFF,                                     // source port @0 = 65535
                0xC0, 0x00,                                     // destination port @2 = 49152
                0x00, 0x00, 0x00, 0x00,                         // offset @4
                0x00, 0x00, 0x00,                               // reserved @8
                0x11,                                           // type @11 = GRANT
                0x00,                                           // doff @12
                0x00,                                           // reserved @13
                0x00, 0x00,                                     // reserved @14
                0x00, 0x00,                                     // checksum @16
                0x00, 0x00,                                     // urgent pointer @18
                0x00, 0x00, 0x01, 0x8F, 0x00, 0x00, 0x00, 0x10, // rpcid @20, S = 0 (client grants a response)
                0x7F, 0xFF, 0xFF, 0xFF,                         // offset @28 = Integer.MAX_VALUE
                0x07,                                           // priority @32 = 7 (highest)
                0xFF                                            // resend all @33: non-zero
        );
        GrantHeader grant = new GrantHeader();
        grant.wrap(ByteBuffer.wrap(packet), 0);

        assertThat(grant.sourcePort()).isEqualTo(0xFFFF);
        assertThat(grant.destPort()).isEqualTo(0xC000);
        assertThat(grant.type()).isEqualTo(PacketType.GRANT);
        assertThat(grant.rpcId()).isEqualTo(0x0000018F00000010L);
        assertThat(grant.fromServer()).isFalse();
        assertThat(grant.clientRpcId()).isEqualTo(0x0000018F00000010L);
        assertThat(grant.grantOffset()).isEqualTo(Integer.MAX_VALUE);
        assertThat(grant.priority()).isEqualTo(7);
        assertThat(grant.resendAll()).isTrue();

        packet[33] = 0x00; // resend all @33 = 0
        assertThat(grant.resendAll()).isFalse();
    }

    @Test
    void shouldRoundTripRandomGrantHeaders() {
        Random random = new Random(SEED);
        GrantHeader writer = new GrantHeader();
        GrantHeader reader = new GrantHeader();
        for (int i = 0; i < ITERATIONS; i++) {
            int at = random.nextInt(64);
            ByteBuffer buffer = canaryBuffer(at + 34 + random.nextInt(16), random.nextBoolean());
            Fields expected = Fields.random(random);
            writer.wrap(buffer, at);
            expected.writeTo(writer);

            reader.wrap(buffer, at);
            assertThat(Fields.readFrom(reader)).as("seed %d iteration %d", SEED, i).isEqualTo(expected);
            assertUntouchedOutside(buffer, at, 34);
        }
    }

    @Test
    void shouldEncodeAndDecodeAtNonZeroOffsetWithoutTouchingOtherBytes() {
        ByteBuffer buffer = canaryBuffer(120, false);
        zero(buffer, 45, 34);
        buffer.position(2).limit(100);
        GrantHeader grant = new GrantHeader();
        grant.wrap(buffer, 45);

        writeDistinctive(grant);

        assertBytes(slice(buffer, 45, 34), DISTINCTIVE);
        assertUntouchedOutside(buffer, 45, 34);
        assertThat(buffer.position()).isEqualTo(2);
        assertThat(buffer.limit()).isEqualTo(100);

        ByteBuffer other = canaryBuffer(90, true);
        place(other, 33, DISTINCTIVE);
        GrantHeader reader = new GrantHeader();
        reader.wrap(other, 33);
        assertThat(reader.sourcePort()).isEqualTo(0x1234);
        assertThat(reader.destPort()).isEqualTo(0xABCD);
        assertThat(reader.type()).isEqualTo(PacketType.GRANT);
        assertThat(reader.rpcId()).isEqualTo(0x0102030405060709L);
        assertThat(reader.fromServer()).isTrue();
        assertThat(reader.grantOffset()).isEqualTo(100_000);
        assertThat(reader.priority()).isEqualTo(5);
        assertThat(reader.resendAll()).isTrue();
        assertUntouchedOutside(other, 33, 34);
    }

    /** All GRANT fields, as written and as read back. */
    private record Fields(int sourcePort, int destPort, long clientRpcId, boolean fromServer, PacketType type,
            int grantOffset, int priority, boolean resendAll) {

        static Fields random(Random random) {
            return new Fields(random.nextInt(0x10000), random.nextInt(0x10000), random.nextLong() & ~1L,
                    random.nextBoolean(), PacketType.GRANT, random.nextInt(), random.nextInt(8),
                    random.nextBoolean());
        }

        void writeTo(GrantHeader grant) {
            grant.writeCommon(type, sourcePort, destPort, clientRpcId | (fromServer ? 1L : 0L));
            grant.grantOffset(grantOffset).priority(priority).resendAll(resendAll);
        }

        static Fields readFrom(GrantHeader grant) {
            return new Fields(grant.sourcePort(), grant.destPort(), grant.clientRpcId(), grant.fromServer(),
                    grant.type(), grant.grantOffset(), grant.priority(), grant.resendAll());
        }
    }
}
