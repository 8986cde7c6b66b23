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
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** ACK packets: draft figure "Format of ACK packets" (Num_Acks is 16 bits, as in homa_wire.h). */
class AckHeaderTest {
    private static final long SEED = 0x5EED_ACC0L;
    private static final int ITERATIONS = 2_000;

    /** The packet written by {@link #writeDistinctive}, by hand from the draft's figure. */
    private static final byte[] DISTINCTIVE = bytes(
            // common header
            0x12, 0x34,                                     // source port @0
            0xAB, 0xCD,                                     // destination port @2
            0x00, 0x00, 0x00, 0x00,                         // offset @4 (DATA only)
            0x00, 0x00, 0x00,                               // reserved @8
            0x18,                                           // type @11 = ACK (24)
            0x00,                                           // doff @12
            0x00,                                           // reserved @13
            0x00, 0x00,                                     // reserved @14
            0x00, 0x00,                                     // checksum @16
            0x00, 0x00,                                     // urgent pointer @18
            0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // rpcid @20, S = 0 (ACKs come from clients)
            // ACK
            0x00, 0x02,                                     // num acks @28 = 2
            0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, // acks[0] rpcid @30
            0x43, 0x21,                                     // acks[0] server port @38
            0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, // acks[1] rpcid @40
            0xFF, 0xFF                                      // acks[1] server port @48
    );

    private static void writeDistinctive(AckHeader ack) {
        ack.writeCommon(PacketType.ACK, 0x1234, 0xABCD, 0x0102030405060708L);
        ack.numAcks(2).ack(0, 0x1112131415161718L, 0x4321).ack(1, 0x2122232425262728L, 0xFFFF);
    }

    @Test
    void shouldHaveDraftLengthsAndOffsets() {
        assertThat(AckHeader.HEADER_LENGTH).isEqualTo(30);
        assertThat(AckHeader.NUM_ACKS_OFFSET).isEqualTo(28);
        assertThat(AckHeader.ACKS_OFFSET).isEqualTo(30);
        assertThat(AckHeader.ACK_LENGTH).isEqualTo(10);
        assertThat(AckHeader.packetLength(0)).isEqualTo(30);
        assertThat(AckHeader.packetLength(1)).isEqualTo(40);
        assertThat(AckHeader.packetLength(2)).isEqualTo(50);
        assertThat(AckHeader.packetLength(5)).isEqualTo(80);
    }

    @Test
    void shouldEncodeAckHeaderAsInDraftFigure() {
        ByteBuffer buffer = ByteBuffer.allocate(50);
        AckHeader ack = new AckHeader();
        ack.wrap(buffer, 0);

        writeDistinctive(ack);

        assertBytes(buffer.array(), DISTINCTIVE);
    }

    @Test
    void shouldEncodeAckWithoutListedAcksInThirtyBytes() {
        ByteBuffer buffer = ByteBuffer.allocate(30);
        AckHeader ack = new AckHeader();
        ack.wrap(buffer, 0);

        ack.writeCommon(PacketType.ACK, 0x1234, 0xABCD, 0x0102030405060708L);
        ack.numAcks(0);

        assertBytes(buffer.array(), bytes(
                0x12, 0x34,                                     // source port @0
                0xAB, 0xCD,                                     // destination port @2
                0x00, 0x00, 0x00, 0x00,                         // offset @4
                0x00, 0x00, 0x00,                               // reserved @8
                0x18,                                           // type @11 = ACK
                0x00,                                           // doff @12
                0x00,                                           // reserved @13
                0x00, 0x00,                                     // reserved @14
                0x00, 0x00,                                     // checksum @16
                0x00, 0x00,                                     // urgent pointer @18
                0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // rpcid @20
                0x00, 0x00                                      // num acks @28 = 0
        ));
    }

    @Test
    void shouldDecodeAckHeaderFromDraftBytes() {
        byte[] packet = bytes(
                0xFF, 0xFF,                                     // source port @0 = 65535
                0xFF, 0xFF,                                     // destination port @2 = 65535
                0x00, 0x00, 0x00, 0x00,                         // offset @4
                0x00, 0x00, 0x00,                               // reserved @8
                0x18,                                           // type @11 = ACK
                0x00,                                           // doff @12
                0x00,                                           // reserved @13
                0x00, 0x00,                                     // reserved @14
                0x00, 0x00,                                     // checksum @16
                0x00, 0x00,                                     // urgent pointer @18
                0xF0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0A, // rpcid @20, S = 0
                0x00, 0x03,                                     // num acks @28 = 3
                0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, // acks[0] rpcid @30
                0xFF, 0xFF,                                     // acks[0] server port @38 = 65535
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, // acks[1] rpcid @40
                0x00, 0x01,                                     // acks[1] server port @48 = 1
                0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE, // acks[2] rpcid @50
                0x80, 0x00                                      // acks[2] server port @58 = 32768
        );
        AckHeader ack = new AckHeader();
        ack.wrap(ByteBuffer.wrap(packet), 0);

        assertThat(ack.sourcePort()).isEqualTo(0xFFFF);
        assertThat(ack.destPort()).isEqualTo(0xFFFF);
        assertThat(ack.type()).isEqualTo(PacketType.ACK);
        assertThat(ack.rpcId()).isEqualTo(0xF00000000000000AL);
        assertThat(ack.fromServer()).isFalse();
        assertThat(ack.clientRpcId()).isEqualTo(0xF00000000000000AL);
        assertThat(ack.numAcks()).isEqualTo(3);
        assertThat(ack.ackRpcId(0)).isEqualTo(0x8000000000000002L);
        assertThat(ack.ackServerPort(0)).isEqualTo(0xFFFF);
        assertThat(ack.ackRpcId(1)).isEqualTo(4L);
        assertThat(ack.ackServerPort(1)).isEqualTo(1);
        assertThat(ack.ackRpcId(2)).isEqualTo(0x7FFFFFFFFFFFFFFEL);
        assertThat(ack.ackServerPort(2)).isEqualTo(0x8000);
    }

    @Test
    void shouldDecodeNumAcksUnsigned() {
        ByteBuffer buffer = ByteBuffer.allocate(30);
        buffer.put(28, (byte) 0xFF).put(29, (byte) 0xFF); // num acks @28 = 65535
        AckHeader ack = new AckHeader();
        ack.wrap(buffer, 0);

        assertThat(ack.numAcks()).isEqualTo(0xFFFF);
    }

    @Test
    void shouldRoundTripRandomAckHeaders() {
        Random random = new Random(SEED);
        AckHeader writer = new AckHeader();
        AckHeader reader = new AckHeader();
        for (int i = 0; i < ITERATIONS; i++) {
            Fields expected = Fields.random(random);
            int length = AckHeader.packetLength(expected.acks().size());
            int at = random.nextInt(64);
            ByteBuffer buffer = canaryBuffer(at + length + random.nextInt(16), random.nextBoolean());
            writer.wrap(buffer, at);
            expected.writeTo(writer);

            reader.wrap(buffer, at);
            assertThat(Fields.readFrom(reader)).as("seed %d iteration %d", SEED, i).isEqualTo(expected);
            assertUntouchedOutside(buffer, at, length);
        }
    }

    @Test
    void shouldEncodeAndDecodeAtNonZeroOffsetWithoutTouchingOtherBytes() {
        ByteBuffer buffer = canaryBuffer(100, true);
        zero(buffer, 23, 50);
        buffer.position(30).limit(80);
        AckHeader ack = new AckHeader();
        ack.wrap(buffer, 23);

        writeDistinctive(ack);

        assertBytes(slice(buffer, 23, 50), DISTINCTIVE);
        assertUntouchedOutside(buffer, 23, 50);
        assertThat(buffer.position()).isEqualTo(30);
        assertThat(buffer.limit()).isEqualTo(80);

        ByteBuffer other = canaryBuffer(90, false);
        place(other, 13, DISTINCTIVE);
        AckHeader reader = new AckHeader();
        reader.wrap(other, 13);
        assertThat(reader.sourcePort()).isEqualTo(0x1234);
        assertThat(reader.destPort()).isEqualTo(0xABCD);
        assertThat(reader.type()).isEqualTo(PacketType.ACK);
        assertThat(reader.rpcId()).isEqualTo(0x0102030405060708L);
        assertThat(reader.numAcks()).isEqualTo(2);
        assertThat(reader.ackRpcId(0)).isEqualTo(0x1112131415161718L);
        assertThat(reader.ackServerPort(0)).isEqualTo(0x4321);
        assertThat(reader.ackRpcId(1)).isEqualTo(0x2122232425262728L);
        assertThat(reader.ackServerPort(1)).isEqualTo(0xFFFF);
        assertUntouchedOutside(other, 13, 50);
    }

    /** One listed ack. */
    private record Ack(long rpcId, int serverPort) {
    }

    /** All ACK fields, as written and as read back. */
    private record Fields(int sourcePort, int destPort, long clientRpcId, boolean fromServer, PacketType type,
            List<Ack> acks) {

        static Fields random(Random random) {
            int count = random.nextInt(9);
            List<Ack> acks = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                acks.add(new Ack(random.nextLong(), random.nextInt(0x10000)));
            }
            return new Fields(random.nextInt(0x10000), random.nextInt(0x10000), random.nextLong() & ~1L,
                    random.nextBoolean(), PacketType.ACK, List.copyOf(acks));
        }

        void writeTo(AckHeader ack) {
            ack.writeCommon(type, sourcePort, destPort, clientRpcId | (fromServer ? 1L : 0L));
            ack.numAcks(acks.size());
            for (int i = 0; i < acks.size(); i++) {
                ack.ack(i, acks.get(i).rpcId(), acks.get(i).serverPort());
            }
        }

        static Fields readFrom(AckHeader ack) {
            List<Ack> acks = new ArrayList<>();
            for (int i = 0; i < ack.numAcks(); i++) {
                acks.add(new Ack(ack.ackRpcId(i), ack.ackServerPort(i)));
            }
            return new Fields(ack.sourcePort(), ack.destPort(), ack.clientRpcId(), ack.fromServer(), ack.type(),
                    List.copyOf(acks));
        }
    }
}
