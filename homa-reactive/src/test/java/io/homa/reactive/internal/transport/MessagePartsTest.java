package io.homa.reactive.internal.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.MessageBytes;
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

    private static byte[] joined(byte[][] parts) {
        return MessageBytes.join(parts);
    }

    @Test
    void keepsTheArrayOfAWrappedArray() {
        ByteBuf buffer = Unpooled.wrappedBuffer(BODY);
        byte[][] parts = MessageParts.of(buffer);
        assertThat(parts).hasNumberOfRows(1);
        assertThat(parts[0]).isSameAs(BODY);
        buffer.release();
        assertThat(joined(parts)).isEqualTo(BODY).as("the array outlives the buffer");
    }

    @Test
    void keepsTheArrayOfARetainedWrappedArray() {
        ByteBuf buffer = Unpooled.wrappedBuffer(BODY);
        buffer.retain(); // a handler answering with the request's own payload
        assertThat(MessageParts.of(buffer)[0]).isSameAs(BODY);
        buffer.release(2);
    }

    @Test
    void keepsBothArraysOfAWrappedHeadAndBody() {
        ByteBuf buffer = Unpooled.wrappedBuffer(HEAD, BODY);
        assertThat(buffer).isInstanceOf(CompositeByteBuf.class);
        byte[][] parts = MessageParts.of(buffer);
        assertThat(parts).hasNumberOfRows(2);
        assertThat(parts[0]).isSameAs(HEAD);
        assertThat(parts[1]).isSameAs(BODY);
        assertThat(new String(joined(parts), StandardCharsets.US_ASCII)).isEqualTo("head-the body");
        buffer.release();
    }

    @Test
    void keepsEveryArrayOfAWrappedList() {
        // A received message arrives as a composite of the engine's chunks; a handler answering
        // with it (an echo) sends the same arrays.
        byte[][] chunks = {HEAD, BODY, HEAD, new byte[0], BODY};
        ByteBuf buffer = Unpooled.wrappedBuffer(chunks);
        byte[][] parts = MessageParts.of(buffer);
        assertThat(parts).hasNumberOfRows(4);
        assertThat(parts[0]).isSameAs(HEAD);
        assertThat(parts[1]).isSameAs(BODY);
        assertThat(parts[2]).isSameAs(HEAD);
        assertThat(parts[3]).isSameAs(BODY);
        assertThat(new String(joined(parts), StandardCharsets.US_ASCII)).isEqualTo("head-the bodyhead-the body");
        buffer.release();
    }

    @Test
    void keepsADuplicateOfAWrappedArray() {
        ByteBuf buffer = Unpooled.wrappedBuffer(BODY);
        assertThat(MessageParts.of(buffer.duplicate())[0]).isSameAs(BODY);
        buffer.release();
    }

    @Test
    void copiesWhatIsNotAWholeArray() {
        ByteBuf read = Unpooled.wrappedBuffer(BODY);
        read.skipBytes(4);
        byte[][] partly = MessageParts.of(read);
        assertThat(partly).hasNumberOfRows(1);
        assertThat(partly[0]).isNotSameAs(BODY).isEqualTo("body".getBytes(StandardCharsets.US_ASCII));

        ByteBuf slice = Unpooled.wrappedBuffer(BODY).slice(0, 3);
        assertThat(MessageParts.of(slice)[0]).isNotSameAs(BODY).isEqualTo("the".getBytes(StandardCharsets.US_ASCII));

        ByteBuf readComposite = Unpooled.wrappedBuffer(HEAD, BODY, HEAD);
        readComposite.skipBytes(1);
        byte[][] joined = MessageParts.of(readComposite);
        assertThat(joined).hasNumberOfRows(1);
        assertThat(new String(joined[0], StandardCharsets.US_ASCII)).isEqualTo("ead-the bodyhead-");

        ByteBuf nested = Unpooled.wrappedBuffer(Unpooled.wrappedBuffer(HEAD, BODY), Unpooled.wrappedBuffer(HEAD));
        byte[][] flat = MessageParts.of(nested);
        assertThat(new String(joined(flat), StandardCharsets.US_ASCII)).isEqualTo("head-the bodyhead-");
    }

    @Test
    void copiesPooledAndDirectBuffers() {
        ByteBufAllocator pooled = PooledByteBufAllocator.DEFAULT;
        ByteBuf heap = pooled.heapBuffer(BODY.length, BODY.length).writeBytes(BODY);
        ByteBuf direct = pooled.directBuffer(BODY.length).writeBytes(BODY);
        try {
            byte[][] fromHeap = MessageParts.of(heap);
            assertThat(fromHeap).hasNumberOfRows(1);
            assertThat(fromHeap[0]).isEqualTo(BODY).isNotSameAs(heap.array());
            assertThat(MessageParts.of(direct)[0]).isEqualTo(BODY);
            CompositeByteBuf mixed = Unpooled.compositeBuffer().addComponents(true,
                    Unpooled.wrappedBuffer(HEAD), heap.retain());
            byte[][] fromMixed = MessageParts.of(mixed);
            assertThat(fromMixed).as("a pooled part is copied with the rest").hasNumberOfRows(1);
            assertThat(new String(fromMixed[0], StandardCharsets.US_ASCII)).isEqualTo("head-the body");
            mixed.release();
        } finally {
            heap.release();
            direct.release();
        }
    }
}
