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

/** DATA packets: draft figure "Format of DATA packets" plus this project's flags byte at 49. */
class DataHeaderTest {
    private static final long SEED = 0x5EED_DA7AL;
    private static final int ITERATIONS = 2_000;

    /** The packet written by {@link #writeDistinctive}, by hand from the draft's figure. */
    private static final byte[] DISTINCTIVE = bytes(
            // common header
            0x12, 0x34,                                     // source port @0
            0xAB, 0xCD,                                     // destination port @2
            0x00, 0x00, 0x2B, 0xC0,                         // offset @4 = 11200
            0x00, 0x00, 0x00,                               // reserved @8
            0x10,                                           // type @11 = DATA (16)
            0xE0,                                           // doff @12 = 14 words << 4
            0x00,                                           // reserved @13
            0x00, 0x00,                                     // reserved @14
            0x00, 0x00,                                     // checksum @16
            0x00, 0x00,                                     // urgent pointer @18
            0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x09, // rpcid @20, S = 1 (from server)
            // DATA
            0x00, 0x10, 0x00, 0x00,                         // message length @28 = 1 MiB
            0x00, 0x00, 0xEA, 0x60,                         // incoming @32 = 60000
            0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, // ack rpcid @36
            0x43, 0x21,                                     // ack server port @44
            0x0A, 0x0B,                                     // cutoff version @46
            0x01,                                           // retrans @48
            0x01,                                           // flags @49 = INCAST
            0x2E, 0xE0,                                     // incast head @50 = 12000
            0x00, 0x00, 0x2B, 0xC0                          // offset @52 = 11200
    );

    private static void writeDistinctive(DataHeader data) {
        data.writeCommon(PacketType.DATA, 0x1234, 0xABCD, 0x0102030405060708L | HomaHeader.FROM_SERVER_BIT)
                .segmentOffset(0x00002BC0)
                .doff(DataHeader.DOFF);
        data.messageLength(0x00100000)
                .incoming(60_000)
                .ackRpcId(0x1112131415161718L)
                .ackServerPort(0x4321)
                .cutoffVersion(0x0A0B)
                .retransmitted(true)
                .flags(DataHeader.FLAG_INCAST)
                .incastHeadBytes(12_000)
                .dataOffset(11_200);
    }

    @Test
    void shouldHaveDraftLengthsAndConstants() {
        assertThat(DataHeader.HEADER_LENGTH).isEqualTo(56);
        assertThat(DataHeader.DOFF).isEqualTo(0xE0);
        assertThat(DataHeader.FLAG_INCAST).isEqualTo(0x01);
        assertThat(DataHeader.MESSAGE_LENGTH_OFFSET).isEqualTo(28);
        assertThat(DataHeader.INCOMING_OFFSET).isEqualTo(32);
        assertThat(DataHeader.ACK_RPC_ID_OFFSET).isEqualTo(36);
        assertThat(DataHeader.ACK_SERVER_PORT_OFFSET).isEqualTo(44);
        assertThat(DataHeader.CUTOFF_VERSION_OFFSET).isEqualTo(46);
        assertThat(DataHeader.INCAST_HEAD_OFFSET).isEqualTo(50);
        assertThat(DataHeader.RETRANS_OFFSET).isEqualTo(48);
        assertThat(DataHeader.FLAGS_OFFSET).isEqualTo(49);
        assertThat(DataHeader.DATA_OFFSET_OFFSET).isEqualTo(52);
    }

    @Test
    void shouldEncodeDataHeaderAsInDraftFigure() {
        ByteBuffer buffer = ByteBuffer.allocate(56);
        DataHeader data = new DataHeader();
        data.wrap(buffer, 0);

        writeDistinctive(data);

        assertBytes(buffer.array(), DISTINCTIVE);
    }

    @Test
    void shouldDecodeDataHeaderFromDraftBytes() {
        byte[] packet = bytes(
                0xFF, 0xFF,                                     // source port @0 = 65535
                0xFF, 0xFE,                                     // destination port @2 = 65534
                0x00, 0x0F, 0x42, 0x40,                         // offset @4 = 1000000
                0x00, 0x00, 0x00,                               // reserved @8
                0x10,                                           // type @11 = DATA
                0xE0,                                           // doff @12
                0x00,                                           // reserved @13
                0x00, 0x00,                                     // reserved @14
                0x00, 0x00,                                     // checksum @16
                0x00, 0x00,                                     // urgent pointer @18
                0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x11, // rpcid @20, S = 1
                0x00, 0x10, 0x00, 0x00,                         // message length @28 = 1 MiB
                0x00, 0x00, 0xEA, 0x60,                         // incoming @32 = 60000
                0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, // ack rpcid @36
                0xFF, 0xFF,                                     // ack server port @44 = 65535
                0xFF, 0xFF,                                     // cutoff version @46 = 65535
                0x01,                                           // retrans @48
                0x01,                                           // flags @49 = INCAST
                0x2E, 0xE0,                                     // incast head @50 = 12000
                0x00, 0x0F, 0x42, 0x40,                         // offset @52 = 1000000
                0x68, 0x69                                      // message data @56 ("hi")
        );
        DataHeader data = new DataHeader();
        data.wrap(ByteBuffer.wrap(packet), 0);

        assertThat(data.sourcePort()).isEqualTo(0xFFFF);
        assertThat(data.destPort()).isEqualTo(0xFFFE);
        assertThat(data.segmentOffset()).isEqualTo(1_000_000);
        assertThat(data.type()).isEqualTo(PacketType.DATA);
        assertThat(data.doff()).isEqualTo(0xE0);
        assertThat(data.rpcId()).isEqualTo(0xFEDCBA9876543211L);
        assertThat(data.fromServer()).isTrue();
        assertThat(data.clientRpcId()).isEqualTo(0xFEDCBA9876543210L);
        assertThat(data.messageLength()).isEqualTo(1_048_576);
        assertThat(data.incoming()).isEqualTo(60_000);
        assertThat(data.ackRpcId()).isEqualTo(0x8000000000000002L);
        assertThat(data.ackServerPort()).isEqualTo(0xFFFF);
        assertThat(data.cutoffVersion()).isEqualTo(0xFFFF);
        assertThat(data.retransmitted()).isTrue();
        assertThat(data.flags()).isEqualTo(0x01);
        assertThat(data.flags() & DataHeader.FLAG_INCAST).isNotZero();
        assertThat(data.incastHeadBytes()).isEqualTo(12_000);
        assertThat(data.dataOffset()).isEqualTo(1_000_000);
    }

    @Test
    void shouldDecodeClientDataWithoutIncastAndAnyNonZeroRetransByte() {
        byte[] packet = bytes(
                0x00, 0x01,                                     // source port @0
                0x00, 0x02,                                     // destination port @2
                0x00, 0x00, 0x00, 0x00,                         // offset @4
                0x00, 0x00, 0x00,                               // reserved @8
                0x10,                                           // type @11 = DATA
                0xE0,                                           // doff @12
                0x00,                                           // reserved @13
                0x00, 0x00,                                     // reserved @14
                0x00, 0x00,                                     // checksum @16
                0x00, 0x00,                                     // urgent pointer @18
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, // rpcid @20 = 2, S = 0
                0x00, 0x00, 0x00, 0x01,                         // message length @28 = 1
                0x00, 0x00, 0x00, 0x01,                         // incoming @32 = 1
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // ack rpcid @36 = 0 (none)
                0x00, 0x00,                                     // ack server port @44
                0x00, 0x00,                                     // cutoff version @46 = 0
                0x80,                                           // retrans @48: non-zero
                0xFE,                                           // flags @49: all bits but INCAST
                0x00, 0x00,                                     // incast head @50 = 0 (none)
                0x00, 0x00, 0x00, 0x00                          // offset @52 = 0
        );
        DataHeader data = new DataHeader();
        data.wrap(ByteBuffer.wrap(packet), 0);

        assertThat(data.rpcId()).isEqualTo(2L);
        assertThat(data.fromServer()).isFalse();
        assertThat(data.clientRpcId()).isEqualTo(2L);
        assertThat(data.messageLength()).isEqualTo(1);
        assertThat(data.ackRpcId()).isZero();
        assertThat(data.cutoffVersion()).isZero();
        assertThat(data.retransmitted()).isTrue();
        assertThat(data.flags()).isEqualTo(0xFE);
        assertThat(data.flags() & DataHeader.FLAG_INCAST).isZero();
        assertThat(data.incastHeadBytes()).isZero();

        packet[48] = 0x00; // retrans @48 = 0
        assertThat(data.retransmitted()).isFalse();
    }

    @Test
    void shouldEncodeRetransFalseAsZeroByte() {
        ByteBuffer buffer = ByteBuffer.allocate(56);
        buffer.put(48, (byte) 0x7F);
        DataHeader data = new DataHeader();
        data.wrap(buffer, 0);

        data.retransmitted(false);

        assertThat(buffer.get(48)).isZero();
    }

    @Test
    void shouldRoundTripRandomDataHeaders() {
        Random random = new Random(SEED);
        DataHeader writer = new DataHeader();
        DataHeader reader = new DataHeader();
        for (int i = 0; i < ITERATIONS; i++) {
            int at = random.nextInt(64);
            ByteBuffer buffer = canaryBuffer(at + 56 + random.nextInt(16), random.nextBoolean());
            Fields expected = Fields.random(random);
            writer.wrap(buffer, at);
            expected.writeTo(writer);

            reader.wrap(buffer, at);
            assertThat(Fields.readFrom(reader)).as("seed %d iteration %d", SEED, i).isEqualTo(expected);
            assertUntouchedOutside(buffer, at, 56);
        }
    }

    @Test
    void shouldEncodeAndDecodeAtNonZeroOffsetWithoutTouchingOtherBytes() {
        ByteBuffer buffer = canaryBuffer(200, false);
        zero(buffer, 37, 56);
        buffer.position(7).limit(150);
        DataHeader data = new DataHeader();
        data.wrap(buffer, 37);

        writeDistinctive(data);

        assertBytes(slice(buffer, 37, 56), DISTINCTIVE);
        assertUntouchedOutside(buffer, 37, 56);
        assertThat(buffer.position()).isEqualTo(7);
        assertThat(buffer.limit()).isEqualTo(150);

        ByteBuffer other = canaryBuffer(120, true);
        place(other, 61, DISTINCTIVE);
        DataHeader reader = new DataHeader();
        reader.wrap(other, 61);
        assertThat(reader.sourcePort()).isEqualTo(0x1234);
        assertThat(reader.destPort()).isEqualTo(0xABCD);
        assertThat(reader.rpcId()).isEqualTo(0x0102030405060709L);
        assertThat(reader.fromServer()).isTrue();
        assertThat(reader.clientRpcId()).isEqualTo(0x0102030405060708L);
        assertThat(reader.messageLength()).isEqualTo(0x00100000);
        assertThat(reader.incoming()).isEqualTo(60_000);
        assertThat(reader.ackRpcId()).isEqualTo(0x1112131415161718L);
        assertThat(reader.ackServerPort()).isEqualTo(0x4321);
        assertThat(reader.cutoffVersion()).isEqualTo(0x0A0B);
        assertThat(reader.retransmitted()).isTrue();
        assertThat(reader.flags()).isEqualTo(DataHeader.FLAG_INCAST);
        assertThat(reader.incastHeadBytes()).isEqualTo(12_000);
        assertThat(reader.dataOffset()).isEqualTo(11_200);
        assertUntouchedOutside(other, 61, 56);
    }

    /** All DATA fields, as written and as read back. */
    private record Fields(int sourcePort, int destPort, long clientRpcId, boolean fromServer, int segmentOffset,
            int doff, PacketType type, int messageLength, int incoming, long ackRpcId, int ackServerPort,
            int cutoffVersion, boolean retransmitted, int flags, int dataOffset) {

        static Fields random(Random random) {
            return new Fields(random.nextInt(0x10000), random.nextInt(0x10000), random.nextLong() & ~1L,
                    random.nextBoolean(), random.nextInt(), random.nextInt(0x100), PacketType.DATA,
                    random.nextInt(), random.nextInt(), random.nextLong(), random.nextInt(0x10000),
                    random.nextInt(0x10000), random.nextBoolean(), random.nextInt(0x100), random.nextInt());
        }

        void writeTo(DataHeader data) {
            data.writeCommon(type, sourcePort, destPort, clientRpcId | (fromServer ? 1L : 0L))
                    .segmentOffset(segmentOffset)
                    .doff(doff);
            data.messageLength(messageLength)
                    .incoming(incoming)
                    .ackRpcId(ackRpcId)
                    .ackServerPort(ackServerPort)
                    .cutoffVersion(cutoffVersion)
                    .retransmitted(retransmitted)
                    .flags(flags)
                    .dataOffset(dataOffset);
        }

        static Fields readFrom(DataHeader data) {
            return new Fields(data.sourcePort(), data.destPort(), data.clientRpcId(), data.fromServer(),
                    data.segmentOffset(), data.doff(), data.type(), data.messageLength(), data.incoming(),
                    data.ackRpcId(), data.ackServerPort(), data.cutoffVersion(), data.retransmitted(),
                    data.flags(), data.dataOffset());
        }
    }
}
