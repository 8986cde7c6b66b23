package io.homa.reactive.internal.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;
import org.jspecify.annotations.Nullable;

/**
 * How a {@link ByteBuf} reaches the engine as a message: its bytes as the arrays that hold them,
 * never joined ({@link io.homa.engine.MessageBytes}, {@link io.homa.engine.HomaEngine#sendRequest(long,
 * java.net.InetSocketAddress, io.homa.engine.SendOptions)}). The engine copies message bytes once, into packets; this
 * is how a buffer gets there without a copy before that.
 */
final class MessageParts {
    /** More components than this are copied into one array rather than kept. */
    static final int MAX_KEPT_PARTS = 4096;

    private MessageParts() {}

    /**
     * The readable bytes of {@code buffer}, which is not released. Arrays are kept without a copy
     * where the bytes are exactly whole arrays of unpooled heap buffers: a buffer of
     * {@code Unpooled.wrappedBuffer(array)}, a duplicate of one, or a composite of such components
     * (as {@code Unpooled.wrappedBuffer(head, body)} makes, and as a received message arrives, one
     * component per chunk of the engine's, {@link ReceivedMessage}). Such an array is never handed
     * to anyone else when the buffer is released (a received chunk is kept from its pool), so the
     * engine may read it until the RPC ends. Anything else (pooled,
     * direct, partly read, a nested composite, over {@value #MAX_KEPT_PARTS} components) is copied
     * into one array.
     *
     * @return the message's bytes in order (at least one array)
     */
    static byte[][] of(ByteBuf buffer) {
        byte[] whole = wholeArray(buffer);
        if (whole != null) {
            return new byte[][] {whole};
        }
        if (buffer instanceof CompositeByteBuf composite && composite.numComponents() <= MAX_KEPT_PARTS
                && composite.readerIndex() == 0 && composite.writerIndex() == composite.capacity()) {
            byte[][] parts = wholeArrays(composite);
            if (parts != null) {
                return parts;
            }
        }
        return new byte[][] {ByteBufUtil.getBytes(buffer)};
    }

    /** The arrays of a composite's components, if each is a whole array and they are all its bytes. */
    private static byte @Nullable [][] wholeArrays(CompositeByteBuf composite) {
        byte[][] parts = new byte[composite.numComponents()][];
        long lengthBytes = 0;
        for (int i = 0; i < parts.length; i++) {
            byte[] part = wholeArray(composite.component(i));
            if (part == null) {
                return null;
            }
            parts[i] = part;
            lengthBytes += part.length;
        }
        return parts.length > 0 && lengthBytes == composite.capacity() ? parts : null;
    }

    /** The array {@code buffer}'s readable bytes are, whole, if it is an unpooled heap buffer's or a derived view's of one. */
    private static byte @Nullable [] wholeArray(ByteBuf buffer) {
        ByteBuf root = buffer.unwrap() != null ? buffer.unwrap() : buffer;
        boolean received = root instanceof ReceivedMessage.Chunk;
        if ((root.getClass() != UnpooledHeapByteBuf.class && !received) || !buffer.hasArray()) {
            return null;
        }
        byte[] array = buffer.array();
        boolean whole = buffer.arrayOffset() + buffer.readerIndex() == 0 && buffer.readableBytes() == array.length;
        if (whole && received) {
            // the engine reads it until the RPC ends: it must not go back to the pool on release
            ((ReceivedMessage.Chunk) root).keep();
        }
        return whole ? array : null;
    }
}
