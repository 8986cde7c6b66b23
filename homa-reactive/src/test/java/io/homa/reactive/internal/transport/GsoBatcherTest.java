package io.homa.reactive.internal.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.unix.SegmentedDatagramPacket;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class GsoBatcherTest {
    private static final int FULL = 1_472;
    private static final InetSocketAddress A = new InetSocketAddress("127.0.0.1", 4000);
    private static final InetSocketAddress B = new InetSocketAddress("127.0.0.1", 4001);

    private record Written(DatagramPacket datagram, int priority) {}

    private final List<Written> written = new ArrayList<>();

    @AfterEach
    void release() {
        written.forEach(w -> w.datagram().release());
    }

    private GsoBatcher batcher(int maxBatchBytes) {
        return new GsoBatcher(UnpooledByteBufAllocator.DEFAULT, (d, p) -> written.add(new Written(d, p)), FULL, maxBatchBytes);
    }

    /** A packet of {@code length} bytes, every byte {@code fill}, with the buffer's position moved to 3. */
    private static ByteBuffer packet(int length, int fill) {
        ByteBuffer buffer = ByteBuffer.allocate(length + 3);
        buffer.position(3);
        byte[] bytes = new byte[length];
        Arrays.fill(bytes, (byte) fill);
        buffer.put(bytes).position(3);
        return buffer;
    }

    @Test
    void shouldJoinEqualPacketsForOnePeerIntoOneSegmentedSendWithAShorterLastSegment() {
        GsoBatcher batcher = batcher(GsoBatcher.MAX_BATCH_BYTES);
        ByteBuffer first = packet(FULL, 1);
        batcher.add(A, first, 3);
        assertThat(first.position()).as("the engine's buffer is left as it was").isEqualTo(3);
        batcher.add(A, packet(FULL, 2), 3);
        batcher.add(A, packet(100, 3), 3);
        batcher.finish();

        assertThat(written).hasSize(1);
        assertThat(written.get(0).datagram()).isInstanceOf(SegmentedDatagramPacket.class);
        SegmentedDatagramPacket send = (SegmentedDatagramPacket) written.get(0).datagram();
        assertThat(send.segmentSize()).isEqualTo(FULL);
        assertThat(send.recipient()).isEqualTo(A);
        assertThat(written.get(0).priority()).isEqualTo(3);
        byte[] content = ByteBufUtil.getBytes(send.content());
        assertThat(content).hasSize(2 * FULL + 100);
        assertThat(content[0]).isEqualTo((byte) 1);
        assertThat(content[FULL]).isEqualTo((byte) 2);
        assertThat(content[2 * FULL + 99]).isEqualTo((byte) 3);
        assertThat(batcher.segmentedSends()).isEqualTo(1);
        assertThat(batcher.segmentedPackets()).isEqualTo(3);
    }

    @Test
    void shouldEndABatchAtAnotherPeerPriorityLongerPacketOrAfterAShortOneAndKeepTheOrder() {
        GsoBatcher batcher = batcher(GsoBatcher.MAX_BATCH_BYTES);
        batcher.add(A, packet(FULL, 1), 2);
        batcher.add(B, packet(FULL, 2), 2); // another peer
        batcher.add(B, packet(FULL, 3), 7); // another priority
        batcher.add(B, packet(60, 4), 7); // shorter: joins, ends the batch
        batcher.add(B, packet(60, 5), 7); // same length as the short one, but the batch has ended
        batcher.add(B, packet(FULL, 6), 7); // longer than the segment size
        batcher.finish();

        assertThat(written).extracting(w -> w.datagram().content().getByte(0))
                .containsExactly((byte) 1, (byte) 2, (byte) 3, (byte) 5, (byte) 6);
        assertThat(written).extracting(w -> w.datagram().recipient()).containsExactly(A, B, B, B, B);
        assertThat(written).extracting(Written::priority).containsExactly(2, 2, 7, 7, 7);
        assertThat(written.get(2).datagram()).isInstanceOf(SegmentedDatagramPacket.class);
        assertThat(written.get(2).datagram().content().readableBytes()).isEqualTo(FULL + 60);
        assertThat(written).filteredOn(w -> w.datagram() instanceof SegmentedDatagramPacket).hasSize(1);
    }

    @Test
    void shouldCapABatchAtItsByteLimitAndAtSixtyFourSegments() {
        GsoBatcher bytesCapped = batcher(5 * FULL + 10);
        for (int i = 0; i < 12; i++) {
            bytesCapped.add(A, packet(FULL, i), 0);
        }
        bytesCapped.finish();
        assertThat(written).extracting(w -> w.datagram().content().readableBytes())
                .containsExactly(5 * FULL, 5 * FULL, 2 * FULL);
        written.forEach(w -> w.datagram().release());
        written.clear();

        GsoBatcher small = new GsoBatcher(UnpooledByteBufAllocator.DEFAULT, (d, p) -> written.add(new Written(d, p)), 100,
                GsoBatcher.MAX_BATCH_BYTES);
        for (int i = 0; i < 130; i++) {
            small.add(A, packet(100, i), 0);
        }
        small.finish();
        assertThat(written).extracting(w -> w.datagram().content().readableBytes() / 100).containsExactly(64, 64, 2);
    }

    @Test
    void shouldLendTheMemoryOfAPacketAtTheEndOfItsBatchAndBatchAsAdd() {
        GsoBatcher batcher = batcher(GsoBatcher.MAX_BATCH_BYTES);
        for (int i = 0; i < 3; i++) {
            ByteBuffer lent = batcher.claim(A, i < 2 ? FULL : 100, 2);
            assertThat(lent.remaining()).isGreaterThanOrEqualTo(i < 2 ? FULL : 100);
            assertThat(lent.order()).isEqualTo(java.nio.ByteOrder.BIG_ENDIAN);
            int length = i < 2 ? FULL : 100;
            for (int j = 0; j < length; j++) {
                lent.put(lent.position() + j, (byte) (i + 1));
            }
            batcher.commit();
        }
        batcher.add(B, packet(100, 9), 2); // another peer ends the batch
        batcher.finish();

        assertThat(written).hasSize(2);
        SegmentedDatagramPacket send = (SegmentedDatagramPacket) written.get(0).datagram();
        assertThat(send.segmentSize()).isEqualTo(FULL);
        byte[] bytes = ByteBufUtil.getBytes(send.content());
        assertThat(bytes).hasSize(2 * FULL + 100);
        assertThat(bytes[0]).isEqualTo((byte) 1);
        assertThat(bytes[FULL]).isEqualTo((byte) 2);
        assertThat(bytes[2 * FULL + 99]).isEqualTo((byte) 3);
        assertThat(written.get(1).datagram().recipient()).isEqualTo(B);
        assertThat(batcher.segmentedPackets()).isEqualTo(3);
        org.assertj.core.api.Assertions.assertThatThrownBy(batcher::commit).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void shouldJoinEachPeersPacketsWhenAPassAlternatesBetweenPeersKeepingEachPeersOrder() {
        GsoBatcher batcher = batcher(GsoBatcher.MAX_BATCH_BYTES);
        for (int i = 0; i < 6; i++) {
            batcher.add(i % 2 == 0 ? A : B, packet(100, i), 0); // a fan-out's requests, round-robin
        }
        batcher.add(A, packet(100, 6), 5); // another priority: A's next batch
        batcher.add(A, packet(100, 7), 0); // may not join A's first batch, behind the packet at 5
        batcher.finish();

        assertThat(written).extracting(w -> w.datagram().recipient()).containsExactly(A, B, A, A);
        assertThat(written).extracting(w -> w.datagram().content().readableBytes() / 100).containsExactly(3, 3, 1, 1);
        assertThat(ByteBufUtil.getBytes(written.get(0).datagram().content())).startsWith((byte) 0)
                .contains((byte) 2, (byte) 4).doesNotContain((byte) 1, (byte) 6, (byte) 7);
        assertThat(ByteBufUtil.getBytes(written.get(1).datagram().content())).contains((byte) 1, (byte) 3, (byte) 5);
        assertThat(written.get(2).priority()).isEqualTo(5);
        assertThat(ByteBufUtil.getBytes(written.get(3).datagram().content())).containsOnly((byte) 7);
        written.forEach(w -> w.datagram().release());
        written.clear();

        // More peers than open batches: the oldest batch leaves to make room, the rest at finish.
        int peers = GsoBatcher.MAX_OPEN_BATCHES + 1;
        for (int round = 0; round < 2; round++) {
            for (int p = 0; p < peers; p++) {
                batcher.add(new InetSocketAddress("127.0.0.1", 5000 + p), packet(100, p), 0);
            }
        }
        batcher.finish();
        int[] packetsTo = new int[peers];
        for (Written w : written) {
            packetsTo[w.datagram().recipient().getPort() - 5000] += w.datagram().content().readableBytes() / 100;
        }
        assertThat(packetsTo).containsOnly(2);
    }

    @Test
    void shouldSendEveryPacketAsItsOwnDatagramWhenOffOrDisabled() {
        GsoBatcher off = batcher(0);
        assertThat(off.enabled()).isFalse();
        off.add(A, packet(FULL, 1), 0);
        off.add(A, packet(FULL, 2), 0);
        off.finish();
        assertThat(written).hasSize(2).allSatisfy(w -> {
            assertThat(w.datagram()).isNotInstanceOf(SegmentedDatagramPacket.class);
            assertThat(w.datagram().content().capacity()).isEqualTo(FULL);
        });

        GsoBatcher on = batcher(GsoBatcher.MAX_BATCH_BYTES);
        on.add(A, packet(FULL, 3), 0);
        on.disable();
        on.add(A, packet(FULL, 4), 0);
        on.finish();
        assertThat(written).hasSize(4);
        assertThat(on.segmentedSends()).isZero();
    }

    @Test
    void shouldSizeTheLongestSendByThePacersQueueAllowance() {
        assertThat(GsoBatcher.maxBatchBytes(10_000, 50_000)).isEqualTo(62_500);
        assertThat(GsoBatcher.maxBatchBytes(1_000, 50_000)).isEqualTo(6_250);
        assertThat(GsoBatcher.maxBatchBytes(100_000, 50_000)).isEqualTo(GsoBatcher.MAX_BATCH_BYTES);
        assertThat(GsoBatcher.maxBatchBytes(0, 50_000)).as("no pacer").isEqualTo(GsoBatcher.MAX_BATCH_BYTES);
    }

    @Test
    void shouldSendAPacketLongerThanHalfASendAloneAndJoinShorterOnes() {
        // Loopback: 64 KB packets, sends of at most 62,500 bytes (10 Gbit/s x 50 us).
        int loopbackFull = GsoBatcher.MAX_BATCH_BYTES;
        GsoBatcher batcher = new GsoBatcher(UnpooledByteBufAllocator.DEFAULT,
                (d, p) -> written.add(new Written(d, p)), loopbackFull, 62_500);
        assertThat(batcher.enabled()).isTrue();
        batcher.add(A, packet(loopbackFull, 1), 0);
        batcher.add(A, packet(loopbackFull, 2), 0);
        batcher.add(A, packet(31_251, 3), 0);
        for (int i = 0; i < 7; i++) {
            batcher.add(A, packet(10_100, 4 + i), 0);
        }
        batcher.finish();

        assertThat(written).extracting(w -> w.datagram().content().readableBytes())
                .containsExactly(loopbackFull, loopbackFull, 31_251, 6 * 10_100, 10_100);
        assertThat(written).extracting(w -> w.datagram() instanceof SegmentedDatagramPacket)
                .containsExactly(false, false, false, true, false);
        assertThat(written.get(0).datagram().content().capacity()).as("a lone packet's buffer is its own length")
                .isEqualTo(loopbackFull);
        assertThat(((SegmentedDatagramPacket) written.get(3).datagram()).segmentSize()).isEqualTo(10_100);
        assertThat(batcher.segmentedPackets()).isEqualTo(6);
    }
}
