package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ChunkPoolTest {
    private static final int CHUNK = ChunkPool.CHUNK_BYTES;
    private final Peer peer = new Peer(new InetSocketAddress("198.18.0.2", 4000), 0);

    @Test
    void shouldHandBackAChunkGivenBackAndKeepAtMostItsCapacity() {
        ChunkPool pool = new ChunkPool(2);
        byte[] first = new byte[CHUNK];
        byte[] second = new byte[CHUNK];

        assertThat(pool.give(first)).isTrue();
        assertThat(pool.give(second)).isTrue();
        assertThat(pool.give(new byte[CHUNK])).as("full").isFalse();
        assertThat(pool.size()).isEqualTo(2);

        assertThat(pool.take()).isSameAs(second);
        assertThat(pool.take()).isSameAs(first);
        assertThat(pool.size()).isZero();
        byte[] fresh = pool.take();
        assertThat(fresh).hasSize(CHUNK).isNotSameAs(first).isNotSameAs(second);
    }

    @Test
    void shouldIgnoreArraysOfAnotherLength() {
        ChunkPool pool = new ChunkPool(4);

        assertThat(pool.give(new byte[CHUNK - 1])).isFalse();
        assertThat(pool.give(new byte[0])).isFalse();
        assertThat(pool.size()).isZero();
    }

    @Test
    void shouldRejectANegativeCapacity() {
        assertThatThrownBy(() -> new ChunkPool(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("capacity");
    }

    @Test
    void shouldReassembleAMessageInDirtyReusedChunksWithOnlyItsOwnBytes() {
        ChunkPool pool = new ChunkPool(8);
        // A message of 0xEE bytes was delivered and its full chunks given back.
        for (int i = 0; i < 3; i++) {
            byte[] dirty = new byte[CHUNK];
            Arrays.fill(dirty, (byte) 0xEE);
            pool.give(dirty);
        }
        // The next one, 2.5 chunks long, arrives as 1,400-byte packets in reverse order; its last
        // chunk is short (a new array), its full ones come from the pool.
        int lengthBytes = 2 * CHUNK + CHUNK / 2;
        byte[] sent = new byte[lengthBytes];
        for (int i = 0; i < lengthBytes; i++) {
            sent[i] = (byte) (i * 31 + 7);
        }
        InboundMessage message = new InboundMessage(lengthBytes, lengthBytes, peer, 100);
        int packetBytes = 1_400;
        int packets = (lengthBytes + packetBytes - 1) / packetBytes;
        for (int p = packets - 1; p >= 0; p--) {
            int offset = p * packetBytes;
            int length = Math.min(packetBytes, lengthBytes - offset);
            ByteBuffer packet = ByteBuffer.wrap(sent, offset, length).slice();
            assertThat(message.complete()).isFalse();
            assertThat(message.agreesWithReceived(packet, 0, offset, length)).isTrue();
            message.received.add(offset, offset + length);
            message.write(packet, 0, offset, length, pool);
        }

        assertThat(message.complete()).isTrue();
        assertThat(pool.size()).as("two full chunks taken from the pool").isEqualTo(1);
        byte[][] parts = message.parts();
        assertThat(parts).hasNumberOfRows(3);
        assertThat(parts[2]).hasSize(CHUNK / 2);
        byte[] delivered = new byte[lengthBytes];
        int at = 0;
        for (byte[] part : parts) {
            System.arraycopy(part, 0, delivered, at, part.length);
            at += part.length;
        }
        assertThat(delivered).isEqualTo(sent);
    }

    @Test
    void shouldFindAForgedOverlapInAReusedChunk() {
        ChunkPool pool = new ChunkPool(1);
        byte[] dirty = new byte[CHUNK];
        Arrays.fill(dirty, (byte) 0x55);
        pool.give(dirty);
        InboundMessage message = new InboundMessage(CHUNK, CHUNK, peer, 100);
        byte[] first = new byte[1_000];
        message.received.add(0, first.length);
        message.write(ByteBuffer.wrap(first), 0, 0, first.length, pool);

        // A retransmission of [0, 1000) that differs in one byte is forged.
        byte[] forged = new byte[1_000];
        forged[999] = 1;
        assertThat(message.agreesWithReceived(ByteBuffer.wrap(forged), 0, 0, forged.length)).isFalse();
        // Bytes [1000, 2000) never arrived: the chunk's stale 0x55s there are not compared.
        assertThat(message.agreesWithReceived(ByteBuffer.wrap(new byte[1_000]), 0, 1_000, 1_000)).isTrue();
        // The chunk's old bytes, sent again over [0, 1000), disagree with what arrived there.
        byte[] stale = new byte[1_000];
        Arrays.fill(stale, (byte) 0x55);
        assertThat(message.agreesWithReceived(ByteBuffer.wrap(stale), 0, 0, 1_000)).isFalse();
    }
}
