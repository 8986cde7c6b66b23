package io.homa.reactive.internal.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.ChunkPool;
import io.homa.engine.MessageBytes;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ReceivedMessageTest {
    private static byte[] chunk(int fill) {
        byte[] chunk = new byte[ChunkPool.CHUNK_BYTES];
        Arrays.fill(chunk, (byte) fill);
        return chunk;
    }

    @Test
    void readsThePartsInOrderAndGivesTheFullChunksBackOnRelease() {
        ChunkPool pool = new ChunkPool(8);
        byte[][] parts = {chunk(1), chunk(2), {3, 3, 3}};
        ByteBuf message = ReceivedMessage.of(parts, pool);
        assertThat(ByteBufUtil.getBytes(message)).isEqualTo(MessageBytes.join(parts));
        assertThat(pool.size()).isZero();
        message.release();
        assertThat(pool.size()).as("the two full chunks, not the short last one").isEqualTo(2);
    }

    @Test
    void aSingleFullChunkGoesBackToo() {
        ChunkPool pool = new ChunkPool(8);
        ByteBuf message = ReceivedMessage.of(new byte[][] {chunk(7)}, pool);
        message.retain();
        message.release();
        assertThat(pool.size()).as("still referenced").isZero();
        message.release();
        assertThat(pool.size()).isEqualTo(1);
    }

    @Test
    void chunksSentOnAreNeverRecycled() {
        // a handler answering with its request (an echo): the engine reads those arrays until the RPC ends
        ChunkPool pool = new ChunkPool(8);
        byte[][] parts = {chunk(1), chunk(2)};
        ByteBuf message = ReceivedMessage.of(parts, pool);
        byte[][] sent = MessageParts.of(message);
        message.release();
        assertThat(sent).hasNumberOfRows(2);
        assertThat(sent[0]).isSameAs(parts[0]);
        assertThat(sent[1]).isSameAs(parts[1]);
        assertThat(pool.size()).isZero();
    }

    @Test
    void aJoinedMessageGivesBackTheChunksItWasCopiedFrom() {
        ChunkPool pool = new ChunkPool(8);
        byte[][] parts = {chunk(1), chunk(2), {9}};
        byte[] joined = ReceivedMessage.joined(parts, pool);
        assertThat(joined).hasSize(2 * ChunkPool.CHUNK_BYTES + 1);
        assertThat(joined[0]).isEqualTo((byte) 1);
        assertThat(joined[ChunkPool.CHUNK_BYTES]).isEqualTo((byte) 2);
        assertThat(joined[2 * ChunkPool.CHUNK_BYTES]).isEqualTo((byte) 9);
        assertThat(pool.size()).isEqualTo(2);

        byte[] alone = chunk(4);
        assertThat(ReceivedMessage.joined(new byte[][] {alone}, pool)).isSameAs(alone);
        assertThat(pool.size()).as("the caller's own array is not given back").isEqualTo(2);
    }
}
