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
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** CUTOFFS packets: draft figure "Format of CUTOFFS packets". */
class CutoffsHeaderTest {
    private static final long SEED = 0x5EED_C0FFL;
    private static final int ITERATIONS = 2_000;

    /** Non-increasing cutoffs used by {@link #writeDistinctive}. */
    private static final int[] CUTOFFS = {
        0x00100000, 0x00020000, 0x00008000, 0x00002000, 0x00000800, 0x00000200, 0x00000080, 0x00000010};

    /** The packet written by {@link #writeDistinctive}, by hand from the draft's figure. */
    private static final byte[] DISTINCTIVE = bytes(
            // common header
            0x12, 0x34,                                     // source port @0
            0xAB, 0xCD,                                     // destination port @2
            0x00, 0x00, 0x00, 0x00,                         // offset @4 (DATA only)
            0x00, 0x00, 0x00,                               // reserved @8
            0x15,                                           // type @11 = CUTOFFS (21)
            0x00,                                           // doff @12
            0x00,                                           // reserved @13
            0x00, 0x00,                                     // reserved @14
            0x00, 0x00,                                     // checksum @16
            0x00, 0x00,                                     // urgent pointer @18
            0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x09, // rpcid @20, S = 1
            // CUTOFFS
            0x00, 0x10, 0x00, 0x00,                         // cutoffs[0] @28
            0x00, 0x02, 0x00, 0x00,                         // cutoffs[1] @32
            0x00, 0x00, 0x80, 0x00,                         // cutoffs[2] @36
            0x00, 0x00, 0x20, 0x00,                         // cutoffs[3] @40
            0x00, 0x00, 0x08, 0x00,                         // cutoffs[4] @44
            0x00, 0x00, 0x02, 0x00,                         // cutoffs[5] @48
            0x00, 0x00, 0x00, 0x80,                         // cutoffs[6] @52
            0x00, 0x00, 0x00, 0x10,                         // cutoffs[7] @56
            0xBE, 0xEF                                      // cutoff version @60
    );

    private static void writeDistinctive(CutoffsHeader cutoffs) {
        cutoffs.writeCommon(PacketType.CUTOFFS, 0x1234, 0xABCD, 0x0102030405060708L | HomaHeader.FROM_SERVER_BIT);
        for (int i = 0; i < CUTOFFS.length; i++) {
            cutoffs.cutoff(i, CUTOFFS[i]);
        }
        cutoffs.cutoffVersion(0xBEEF);
    }

    @Test
    void shouldHaveDraftLengthAndOffsets() {
        assertThat(CutoffsHeader.HEADER_LENGTH).isEqualTo(62);
        assertThat(CutoffsHeader.CUTOFFS_OFFSET).isEqualTo(28);
        assertThat(CutoffsHeader.NUM_PRIORITIES).isEqualTo(8);
        assertThat(CutoffsHeader.CUTOFF_VERSION_OFFSET).isEqualTo(60);
    }

    @Test
    void shouldEncodeCutoffsHeaderAsInDraftFigure() {
        ByteBuffer buffer = ByteBuffer.allocate(62);
        CutoffsHeader cutoffs = new CutoffsHeader();
        cutoffs.wrap(buffer, 0);

        writeDistinctive(cutoffs);

        assertBytes(buffer.array(), DISTINCTIVE);
    }

    @Test
    void shouldDecodeCutoffsHeaderFromDraftBytes() {
        byte[] packet = bytes(
                0xFF, 0xFF,                                     // source port @0 = 65535
                0x00, 0x50,                                     // destination port @2 = 80
                0x00, 0x00, 0x00, 0x00,                         // offset @4
                0x00, 0x00, 0x00,                               // reserved @8
                0x15,                                           // type @11 = CUTOFFS
                0x00,                                           // doff @12
                0x00,                                           // reserved @13
                0x00, 0x00,                                     // reserved @14
                0x00, 0x00,                                     // checksum @16
                0x00, 0x00,                                     // urgent pointer @18
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0xD2, // rpcid @20 = 1234, S = 0
                0x7F, 0xFF, 0xFF, 0xFF,                         // cutoffs[0] @28 = Integer.MAX_VALUE
                0x00, 0x01, 0x00, 0x00,                         // cutoffs[1] @32 = 65536
                0x00, 0x00, 0x40, 0x00,                         // cutoffs[2] @36 = 16384
                0x00, 0x00, 0x10, 0x00,                         // cutoffs[3] @40 = 4096
                0x00, 0x00, 0x04, 0x00,                         // cutoffs[4] @44 = 1024
                0x00, 0x00, 0x01, 0x00,                         // cutoffs[5] @48 = 256
                0x00, 0x00, 0x00, 0x40,                         // cutoffs[6] @52 = 64
                0x00, 0x00, 0x00, 0x00,                         // cutoffs[7] @56 = 0
                0xFF, 0xFF                                      // cutoff version @60 = 65535
        );
        CutoffsHeader cutoffs = new CutoffsHeader();
        cutoffs.wrap(ByteBuffer.wrap(packet), 0);

        assertThat(cutoffs.sourcePort()).isEqualTo(0xFFFF);
        assertThat(cutoffs.destPort()).isEqualTo(80);
        assertThat(cutoffs.type()).isEqualTo(PacketType.CUTOFFS);
        assertThat(cutoffs.rpcId()).isEqualTo(1234L);
        assertThat(cutoffs.fromServer()).isFalse();
        int[] read = new int[8];
        for (int i = 0; i < 8; i++) {
            read[i] = cutoffs.cutoff(i);
        }
        assertThat(read).containsExactly(Integer.MAX_VALUE, 65_536, 16_384, 4_096, 1_024, 256, 64, 0);
        assertThat(cutoffs.cutoffVersion()).isEqualTo(0xFFFF);
    }

    @Test
    void shouldRoundTripRandomCutoffsHeaders() {
        Random random = new Random(SEED);
        CutoffsHeader writer = new CutoffsHeader();
        CutoffsHeader reader = new CutoffsHeader();
        for (int i = 0; i < ITERATIONS; i++) {
            int at = random.nextInt(64);
            ByteBuffer buffer = canaryBuffer(at + 62 + random.nextInt(16), random.nextBoolean());
            Fields expected = Fields.random(random);
            writer.wrap(buffer, at);
            expected.writeTo(writer);

            reader.wrap(buffer, at);
            assertThat(Fields.readFrom(reader)).as("seed %d iteration %d", SEED, i).isEqualTo(expected);
            assertUntouchedOutside(buffer, at, 62);
        }
    }

    @Test
    void shouldEncodeAndDecodeAtNonZeroOffsetWithoutTouchingOtherBytes() {
        ByteBuffer buffer = canaryBuffer(160, false);
        zero(buffer, 71, 62);
        buffer.position(1).limit(140);
        CutoffsHeader cutoffs = new CutoffsHeader();
        cutoffs.wrap(buffer, 71);

        writeDistinctive(cutoffs);

        assertBytes(slice(buffer, 71, 62), DISTINCTIVE);
        assertUntouchedOutside(buffer, 71, 62);
        assertThat(buffer.position()).isEqualTo(1);
        assertThat(buffer.limit()).isEqualTo(140);

        ByteBuffer other = canaryBuffer(100, true);
        place(other, 17, DISTINCTIVE);
        CutoffsHeader reader = new CutoffsHeader();
        reader.wrap(other, 17);
        assertThat(reader.sourcePort()).isEqualTo(0x1234);
        assertThat(reader.destPort()).isEqualTo(0xABCD);
        assertThat(reader.type()).isEqualTo(PacketType.CUTOFFS);
        assertThat(reader.rpcId()).isEqualTo(0x0102030405060709L);
        for (int i = 0; i < 8; i++) {
            assertThat(reader.cutoff(i)).as("cutoff %d", i).isEqualTo(CUTOFFS[i]);
        }
        assertThat(reader.cutoffVersion()).isEqualTo(0xBEEF);
        assertUntouchedOutside(other, 17, 62);
    }

    /** All CUTOFFS fields, as written and as read back. */
    private record Fields(int sourcePort, int destPort, long clientRpcId, boolean fromServer, PacketType type,
            int[] cutoffs, int cutoffVersion) {

        static Fields random(Random random) {
            int[] cutoffs = new int[8];
            for (int i = 0; i < cutoffs.length; i++) {
                cutoffs[i] = random.nextInt(Integer.MAX_VALUE);
            }
            return new Fields(random.nextInt(0x10000), random.nextInt(0x10000), random.nextLong() & ~1L,
                    random.nextBoolean(), PacketType.CUTOFFS, cutoffs, random.nextInt(0x10000));
        }

        void writeTo(CutoffsHeader header) {
            header.writeCommon(type, sourcePort, destPort, clientRpcId | (fromServer ? 1L : 0L));
            for (int i = 0; i < cutoffs.length; i++) {
                header.cutoff(i, cutoffs[i]);
            }
            header.cutoffVersion(cutoffVersion);
        }

        static Fields readFrom(CutoffsHeader header) {
            int[] cutoffs = new int[8];
            for (int i = 0; i < cutoffs.length; i++) {
                cutoffs[i] = header.cutoff(i);
            }
            return new Fields(header.sourcePort(), header.destPort(), header.clientRpcId(), header.fromServer(),
                    header.type(), cutoffs, header.cutoffVersion());
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Fields that && sourcePort == that.sourcePort && destPort == that.destPort
                    && clientRpcId == that.clientRpcId && fromServer == that.fromServer && type == that.type
                    && Arrays.equals(cutoffs, that.cutoffs) && cutoffVersion == that.cutoffVersion;
        }

        @Override
        public int hashCode() {
            return 31 * Arrays.hashCode(cutoffs) + Long.hashCode(clientRpcId);
        }

        @Override
        public String toString() {
            return "Fields[sourcePort=" + sourcePort + ", destPort=" + destPort + ", clientRpcId=" + clientRpcId
                    + ", fromServer=" + fromServer + ", type=" + type + ", cutoffs=" + Arrays.toString(cutoffs)
                    + ", cutoffVersion=" + cutoffVersion + "]";
        }
    }
}
