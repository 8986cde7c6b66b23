package io.homa.engine.internal.wire;

import static io.homa.engine.internal.wire.WireBytes.assertBytes;
import static io.homa.engine.internal.wire.WireBytes.bytes;
import static io.homa.engine.internal.wire.WireBytes.canaryBuffer;
import static io.homa.engine.internal.wire.WireBytes.slice;
import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.wire.PacketType;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The 28-byte common header (draft figure "Common header format"), through a concrete flyweight. */
class HomaHeaderTest {

    @Test
    void shouldPlaceCommonHeaderFieldsAtDraftOffsets() {
        assertThat(HomaHeader.COMMON_HEADER_LENGTH).isEqualTo(28);
        assertThat(HomaHeader.SOURCE_PORT_OFFSET).isEqualTo(0);
        assertThat(HomaHeader.DEST_PORT_OFFSET).isEqualTo(2);
        assertThat(HomaHeader.SEGMENT_OFFSET_OFFSET).isEqualTo(4);
        assertThat(HomaHeader.TYPE_OFFSET).isEqualTo(11);
        assertThat(HomaHeader.DOFF_OFFSET).isEqualTo(12);
        assertThat(HomaHeader.CHECKSUM_OFFSET).isEqualTo(16);
        assertThat(HomaHeader.URGENT_OFFSET).isEqualTo(18);
        assertThat(HomaHeader.RPC_ID_OFFSET).isEqualTo(20);
        assertThat(HomaHeader.FROM_SERVER_BIT).isEqualTo(1L);
    }

    @Test
    void shouldZeroReservedBytesWhenWritingCommonHeaderOverDirtyBytes() {
        ByteBuffer buffer = ByteBuffer.allocate(40);
        Arrays.fill(buffer.array(), (byte) 0xFF);
        ControlHeader header = new ControlHeader();
        header.wrap(buffer, 0);

        header.writeCommon(PacketType.BUSY, 0x1234, 0xABCD, 0x0102030405060709L);

        byte[] expected = bytes(
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
        );
        assertBytes(slice(buffer, 0, 28), expected);
        // writeCommon writes the common header only: the type-specific bytes after it are untouched.
        assertBytes(slice(buffer, 28, 12), bytes(0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                0xFF, 0xFF));
    }

    @Test
    void shouldWriteSegmentOffsetAndDoffAfterWriteCommon() {
        ByteBuffer buffer = ByteBuffer.allocate(28);
        ControlHeader header = new ControlHeader();
        header.wrap(buffer, 0);

        header.writeCommon(PacketType.DATA, 1, 2, 4L).segmentOffset(0x0A0B0C0D).doff(0xE0);

        assertBytes(slice(buffer, 4, 4), bytes(0x0A, 0x0B, 0x0C, 0x0D)); // offset @4
        assertThat(buffer.get(11)).isEqualTo((byte) 0x10);                // type @11 = DATA
        assertThat(buffer.get(12)).isEqualTo((byte) 0xE0);                // doff @12
        assertThat(header.segmentOffset()).isEqualTo(0x0A0B0C0D);
        assertThat(header.doff()).isEqualTo(0xE0);
    }

    @Test
    void shouldDecodeCommonHeaderFieldsUnsigned() {
        byte[] packet = bytes(
                0xFF, 0xFF,                                     // source port @0 = 65535
                0x80, 0x00,                                     // destination port @2 = 32768
                0xFF, 0xFF, 0xFF, 0xFE,                         // offset @4 = -2 as int
                0x00, 0x00, 0x00,                               // reserved @8
                0x18,                                           // type @11 = ACK (24)
                0xF0,                                           // doff @12
                0x00,                                           // reserved @13
                0x00, 0x00,                                     // reserved @14
                0xBE, 0xEF,                                     // checksum @16 (ignored)
                0xB9, 0x7D,                                     // urgent pointer @18 (ignored)
                0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10  // rpcid @20, S = 0
        );
        ControlHeader header = new ControlHeader();
        header.wrap(ByteBuffer.wrap(packet), 0);

        assertThat(header.sourcePort()).isEqualTo(0xFFFF);
        assertThat(header.destPort()).isEqualTo(0x8000);
        assertThat(header.segmentOffset()).isEqualTo(-2);
        assertThat(header.typeCode()).isEqualTo(24);
        assertThat(header.type()).isEqualTo(PacketType.ACK);
        assertThat(header.doff()).isEqualTo(0xF0);
        assertThat(header.rpcId()).isEqualTo(0xFEDCBA9876543210L);
        assertThat(header.fromServer()).isFalse();
        assertThat(header.clientRpcId()).isEqualTo(0xFEDCBA9876543210L);
    }

    @Test
    void shouldDecodeSBitAsFromServerAndClearItInClientRpcId() {
        ByteBuffer buffer = ByteBuffer.allocate(28);
        buffer.put(11, (byte) 0x10);
        // rpcid @20 = 0xFFFFFFFFFFFFFFFF: S = 1
        for (int i = 20; i < 28; i++) {
            buffer.put(i, (byte) 0xFF);
        }
        ControlHeader header = new ControlHeader();
        header.wrap(buffer, 0);

        assertThat(header.rpcId()).isEqualTo(-1L);
        assertThat(header.fromServer()).isTrue();
        assertThat(header.clientRpcId()).isEqualTo(0xFFFFFFFFFFFFFFFEL);
    }

    @Test
    void shouldDecodeUnknownTypeByteAsNullType() {
        ByteBuffer buffer = ByteBuffer.allocate(28);
        ControlHeader header = new ControlHeader();
        header.wrap(buffer, 0);

        buffer.put(11, (byte) 0x16); // type @11 = 22, FREEZE in Linux, not in the draft
        assertThat(header.typeCode()).isEqualTo(22);
        assertThat(header.type()).isNull();

        buffer.put(11, (byte) 0xFF); // type @11 = 255
        assertThat(header.typeCode()).isEqualTo(255);
        assertThat(header.type()).isNull();
    }

    @Test
    void shouldReadTheNewPacketAfterBeingWrappedAgain() {
        ByteBuffer first = ByteBuffer.allocate(28);
        ByteBuffer second = ByteBuffer.allocate(64);
        first.put(1, (byte) 0x01);  // source port @0 = 1
        second.put(30, (byte) 0x02); // source port @0 = 2, packet at index 29

        ControlHeader header = new ControlHeader();
        assertThat(header.wrap(first, 0)).isSameAs(header);
        assertThat(header.buffer()).isSameAs(first);
        assertThat(header.offset()).isZero();
        assertThat(header.sourcePort()).isEqualTo(1);

        header.wrap(second, 29);
        assertThat(header.buffer()).isSameAs(second);
        assertThat(header.offset()).isEqualTo(29);
        assertThat(header.sourcePort()).isEqualTo(2);
    }

    @Test
    void shouldWriteCommonHeaderAtOffsetWithoutMovingPositionOrLimit() {
        ByteBuffer buffer = canaryBuffer(100, false);
        buffer.position(3).limit(90);
        ControlHeader header = new ControlHeader();
        header.wrap(buffer, 50);

        header.writeCommon(PacketType.RPC_UNKNOWN, 0xFFFF, 0x0001, 0x8000000000000000L);

        WireBytes.assertUntouchedOutside(buffer, 50, 28);
        assertThat(buffer.position()).isEqualTo(3);
        assertThat(buffer.limit()).isEqualTo(90);
        assertThat(header.sourcePort()).isEqualTo(0xFFFF);
        assertThat(header.destPort()).isEqualTo(1);
        assertThat(header.type()).isEqualTo(PacketType.RPC_UNKNOWN);
        assertThat(header.rpcId()).isEqualTo(0x8000000000000000L);
    }
}
