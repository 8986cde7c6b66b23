package io.homa.reactive;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;
import org.jspecify.annotations.Nullable;

/**
 * A message as the engine sends it: {@code head} then {@code body}, kept as they are, never joined
 * ({@link io.homa.engine.HomaEngine#sendRequest(long, java.net.InetSocketAddress, byte[], byte[])}).
 * The engine copies message bytes once, into packets; this is how a buffer reaches it without a
 * copy before that.
 *
 * @param head the message's first bytes (may be empty)
 * @param body the rest (may be empty)
 */
record MessageParts(byte[] head, byte[] body) {
    static final byte[] NO_BYTES = new byte[0];

    /** The message's length in bytes. */
    long lengthBytes() {
        return (long) head.length + body.length;
    }

    /**
     * The readable bytes of {@code buffer}, which is not released. Arrays are kept without a copy
     * where the bytes are exactly one or two whole arrays of unpooled heap buffers (a buffer of
     * {@code Unpooled.wrappedBuffer(array)}, a slice or duplicate of one, or a composite of two such,
     * as {@code Unpooled.wrappedBuffer(head, body)} makes): such an array is never handed to anyone
     * else when the buffer is released, so the engine may read it until the RPC ends. Anything else
     * (pooled, direct, partly read, more parts) is copied into one array.
     */
    static MessageParts of(ByteBuf buffer) {
        byte[] whole = wholeArray(buffer);
        if (whole != null) {
            return new MessageParts(whole, NO_BYTES);
        }
        if (buffer instanceof CompositeByteBuf composite && composite.numComponents() == 2
                && composite.readerIndex() == 0 && composite.writerIndex() == composite.capacity()) {
            byte[] head = wholeArray(composite.component(0));
            byte[] body = wholeArray(composite.component(1));
            if (head != null && body != null && head.length + body.length == composite.capacity()) {
                return new MessageParts(head, body);
            }
        }
        return new MessageParts(ByteBufUtil.getBytes(buffer), NO_BYTES);
    }

    /** The array {@code buffer}'s readable bytes are, whole, if it is an unpooled heap buffer's or a derived view's of one. */
    private static byte @Nullable [] wholeArray(ByteBuf buffer) {
        ByteBuf root = buffer.unwrap() != null ? buffer.unwrap() : buffer;
        if (root.getClass() != UnpooledHeapByteBuf.class || !buffer.hasArray()) {
            return null;
        }
        byte[] array = buffer.array();
        boolean whole = buffer.arrayOffset() + buffer.readerIndex() == 0 && buffer.readableBytes() == array.length;
        return whole ? array : null;
    }
}
