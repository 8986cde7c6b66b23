package io.homa.reactive.internal.transport;

import io.homa.engine.ChunkPool;
import io.homa.engine.MessageBytes;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledHeapByteBuf;

/**
 * A message the engine delivered, as the {@link ByteBuf} its receiver gets: its chunks, never
 * joined (one component each), and each full-size chunk given back to the engine's
 * {@link ChunkPool} when the buffer is released, so that the next message is reassembled in
 * memory that is warm and needs no zeroing. Released as any buffer: by whoever consumes it.
 */
final class ReceivedMessage {
    private ReceivedMessage() {}

    /**
     * The message whose bytes are {@code parts}, in order.
     *
     * @param parts the engine's chunks of one delivered message, now owned by the result
     * @param pool where its full-size chunks go back when the result is released
     */
    static ByteBuf of(byte[][] parts, ChunkPool pool) {
        if (parts.length == 1) {
            return component(parts[0], pool);
        }
        ByteBuf[] components = new ByteBuf[parts.length];
        for (int i = 0; i < parts.length; i++) {
            components[i] = component(parts[i], pool);
        }
        return Unpooled.wrappedBuffer(components.length, components);
    }

    /**
     * The message whose bytes are {@code parts}, as one array; the chunks it was copied from go
     * back to {@code pool}.
     */
    static byte[] joined(byte[][] parts, ChunkPool pool) {
        byte[] joined = MessageBytes.join(parts);
        for (byte[] part : parts) {
            if (part != joined) {
                pool.give(part);
            }
        }
        return joined;
    }

    private static ByteBuf component(byte[] part, ChunkPool pool) {
        return part.length == ChunkPool.CHUNK_BYTES ? new Chunk(part, pool) : Unpooled.wrappedBuffer(part);
    }

    /**
     * One full-size chunk, back to the pool when released unless its array was handed on
     * ({@link #keep()}): then it is left to the garbage collector.
     */
    static final class Chunk extends UnpooledHeapByteBuf {
        private final ChunkPool pool;
        private volatile boolean kept;

        Chunk(byte[] array, ChunkPool pool) {
            super(UnpooledByteBufAllocator.DEFAULT, array, array.length);
            this.pool = pool;
        }

        /** The array goes on beyond this buffer's life (a message sent on from it): never recycle it. */
        void keep() {
            kept = true;
        }

        @Override
        protected void freeArray(byte[] array) {
            if (!kept) {
                pool.give(array);
            }
        }
    }
}
