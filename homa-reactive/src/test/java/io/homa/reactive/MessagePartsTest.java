package io.homa.reactive;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class MessagePartsTest {
    private static final byte[] HEAD = "head-".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] BODY = "the body".getBytes(StandardCharsets.US_ASCII);

    private static byte[] joined(MessageParts parts) {
        byte[] all = new byte[(int) parts.lengthBytes()];
        System.arraycopy(parts.head(), 0, all, 0, parts.head().length);
        System.arraycopy(parts.body(), 0, all, parts.head().length, parts.body().length);
        return all;
    }

    @Test
    void keepsTheArrayOfAWrappedArray() {
        ByteBuf buffer = Unpooled.wrappedBuffer(BODY);
        MessageParts parts = MessageParts.of(buffer);
        assertThat(parts.head()).isSameAs(BODY);
        assertThat(parts.body()).isEmpty();
        buffer.release();
        assertThat(joined(parts)).isEqualTo(BODY).as("the array outlives the buffer");
    }

    @Test
    void keepsTheArrayOfARetainedWrappedArray() {
        ByteBuf buffer = Unpooled.wrappedBuffer(BODY);
        buffer.retain(); // a handler answering with the request's own payload
        assertThat(MessageParts.of(buffer).head()).isSameAs(BODY);
        buffer.release(2);
    }

    @Test
    void keepsBothArraysOfAWrappedHeadAndBody() {
        ByteBuf buffer = Unpooled.wrappedBuffer(HEAD, BODY);
        assertThat(buffer).isInstanceOf(CompositeByteBuf.class);
        MessageParts parts = MessageParts.of(buffer);
        assertThat(parts.head()).isSameAs(HEAD);
        assertThat(parts.body()).isSameAs(BODY);
        assertThat(new String(joined(parts), StandardCharsets.US_ASCII)).isEqualTo("head-the body");
        buffer.release();
    }

    @Test
    void keepsADuplicateOfAWrappedArray() {
        ByteBuf buffer = Unpooled.wrappedBuffer(BODY);
        assertThat(MessageParts.of(buffer.duplicate()).head()).isSameAs(BODY);
        buffer.release();
    }

    @Test
    void copiesWhatIsNotAWholeArray() {
        ByteBuf read = Unpooled.wrappedBuffer(BODY);
        read.skipBytes(4);
        MessageParts partly = MessageParts.of(read);
        assertThat(partly.head()).isNotSameAs(BODY).isEqualTo("body".getBytes(StandardCharsets.US_ASCII));
        assertThat(partly.body()).isEmpty();

        ByteBuf slice = Unpooled.wrappedBuffer(BODY).slice(0, 3);
        assertThat(MessageParts.of(slice).head()).isNotSameAs(BODY).isEqualTo("the".getBytes(StandardCharsets.US_ASCII));

        ByteBuf three = Unpooled.wrappedBuffer(HEAD, BODY, HEAD);
        MessageParts joined = MessageParts.of(three);
        assertThat(new String(joined.head(), StandardCharsets.US_ASCII)).isEqualTo("head-the bodyhead-");
        assertThat(joined.body()).isEmpty();
    }

    @Test
    void copiesPooledAndDirectBuffers() {
        ByteBufAllocator pooled = PooledByteBufAllocator.DEFAULT;
        ByteBuf heap = pooled.heapBuffer(BODY.length, BODY.length).writeBytes(BODY);
        ByteBuf direct = pooled.directBuffer(BODY.length).writeBytes(BODY);
        try {
            MessageParts fromHeap = MessageParts.of(heap);
            assertThat(fromHeap.head()).isEqualTo(BODY).isNotSameAs(heap.array());
            assertThat(MessageParts.of(direct).head()).isEqualTo(BODY);
            CompositeByteBuf mixed = Unpooled.compositeBuffer().addComponents(true,
                    Unpooled.wrappedBuffer(HEAD), heap.retain());
            MessageParts fromMixed = MessageParts.of(mixed);
            assertThat(fromMixed.body()).as("a pooled part is copied with the rest").isEmpty();
            assertThat(new String(fromMixed.head(), StandardCharsets.US_ASCII)).isEqualTo("head-the body");
            mixed.release();
        } finally {
            heap.release();
            direct.release();
        }
    }
}
