package io.homa.reactive.internal.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.ChannelConfig;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

class RecvmmsgAllocatorTest {
    private static final int SLOTS = 16;
    private static final int SLOT_BYTES = 1_000;

    /** The clock the handles read, ns. */
    private long nowNs = 1_000_000_000L;

    /** A handle whose read has begun right after another one: dense traffic, a recvmmsg read. */
    private RecvmmsgAllocator.SlotsFilled handle() {
        return handle(1 << 16);
    }

    private RecvmmsgAllocator.SlotsFilled handle(int maxMessagesPerRead) {
        RecvmmsgAllocator allocator = new RecvmmsgAllocator(SLOTS, SLOT_BYTES);
        allocator.maxMessagesPerRead(maxMessagesPerRead);
        RecvmmsgAllocator.SlotsFilled handle = allocator.newHandle(() -> nowNs);
        ChannelConfig config = new EmbeddedChannel().config();
        handle.reset(config);
        nowNs += RecvmmsgAllocator.DENSE_NS - 1;
        handle.reset(config);
        assertThat(handle.single()).isFalse();
        return handle;
    }

    /** Records one recvmmsg call as Netty's epoll datagram channel reports it. */
    private static void call(RecvByteBufAllocator.ExtendedHandle handle, int datagrams) {
        handle.attemptedBytesRead(SLOTS * SLOT_BYTES);
        handle.lastBytesRead(datagrams * SLOT_BYTES);
        handle.incMessagesRead(datagrams);
    }

    @Test
    void shouldReadAgainOnlyAfterACallThatFilledEverySlot() {
        RecvByteBufAllocator.ExtendedHandle handle = handle();
        call(handle, SLOTS);
        // Netty's datagram channel asks with a supplier that always says "maybe more".
        assertThat(handle.continueReading(() -> true)).isTrue();
        call(handle, SLOTS);
        assertThat(handle.continueReading()).isTrue();

        call(handle, SLOTS - 1);
        assertThat(handle.continueReading(() -> true)).isFalse();
        assertThat(handle.continueReading()).isFalse();
    }

    @Test
    void shouldStopAfterOneDatagramAsAPingPongDelivers() {
        RecvByteBufAllocator.ExtendedHandle handle = handle();
        call(handle, 1);

        assertThat(handle.continueReading(() -> true)).isFalse();
    }

    @Test
    void shouldReadSparseTrafficWithOneRecvmsgOfOneSlotAndDenseTrafficWithRecvmmsg() {
        RecvmmsgAllocator allocator = new RecvmmsgAllocator(SLOTS, SLOT_BYTES);
        allocator.maxMessagesPerRead(1 << 16);
        RecvmmsgAllocator.SlotsFilled handle = allocator.newHandle(() -> nowNs);
        ChannelConfig config = new EmbeddedChannel().config();

        handle.reset(config); // the first read: nothing came just before it
        assertThat(handle.single()).isTrue();
        ByteBuf one = handle.allocate(UnpooledByteBufAllocator.DEFAULT);
        // Netty's epoll channel reads with recvmsg when the buffer holds one slot.
        assertThat(one.writableBytes()).isEqualTo(SLOT_BYTES);
        one.release();
        handle.attemptedBytesRead(SLOT_BYTES);
        handle.lastBytesRead(SLOT_BYTES);
        handle.incMessagesRead(1);
        assertThat(handle.continueReading(() -> true)).as("level-triggered epoll reports what is left").isFalse();

        nowNs += RecvmmsgAllocator.DENSE_NS - 1; // reported again at once: more was queued
        handle.reset(config);
        assertThat(handle.single()).isFalse();
        ByteBuf slots = handle.allocate(UnpooledByteBufAllocator.DEFAULT);
        assertThat(slots.writableBytes()).isEqualTo(SLOTS * SLOT_BYTES);
        slots.release();
        call(handle, SLOTS);
        assertThat(handle.continueReading(() -> true)).isTrue();

        nowNs += RecvmmsgAllocator.DENSE_NS; // that read took many: load, however long it lasted
        handle.reset(config);
        assertThat(handle.single()).isFalse();
        call(handle, 1);

        nowNs += RecvmmsgAllocator.DENSE_NS; // a ping-pong's next datagram, a round trip later
        handle.reset(config);
        assertThat(handle.single()).isTrue();
    }

    @Test
    void shouldReadWithRecvmsgUntilEmptyWhenDenseAndOnceWhenSparseWithOneSlot() {
        RecvmmsgAllocator allocator = new RecvmmsgAllocator(1, SLOT_BYTES); // recvmsg reads (GRO)
        allocator.maxMessagesPerRead(1 << 16);
        RecvmmsgAllocator.SlotsFilled handle = allocator.newHandle(() -> nowNs);
        ChannelConfig config = new EmbeddedChannel().config();

        handle.reset(config);
        assertThat(handle.single()).isTrue();
        handle.attemptedBytesRead(SLOT_BYTES);
        handle.lastBytesRead(100);
        handle.incMessagesRead(1);
        assertThat(handle.continueReading(() -> true)).as("sparse: one recvmsg per wake-up").isFalse();

        nowNs += RecvmmsgAllocator.DENSE_NS - 1;
        handle.reset(config);
        assertThat(handle.single()).isFalse();
        for (int i = 0; i < 3; i++) {
            handle.attemptedBytesRead(SLOT_BYTES);
            handle.lastBytesRead(100); // a datagram shorter than the buffer is no sign of an empty socket
            handle.incMessagesRead(1);
            assertThat(handle.continueReading(() -> true)).isTrue();
            assertThat(handle.continueReading()).isTrue();
        }
    }

    @Test
    void shouldKeepNettysReadBudget() {
        RecvmmsgAllocator.SlotsFilled handle = handle(2 * SLOTS);
        call(handle, SLOTS);
        assertThat(handle.continueReading(() -> true)).isTrue();
        call(handle, SLOTS);

        assertThat(handle.continueReading(() -> true)).isFalse();
    }
}
