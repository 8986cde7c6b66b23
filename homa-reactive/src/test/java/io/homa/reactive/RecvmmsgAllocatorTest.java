package io.homa.reactive;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

class RecvmmsgAllocatorTest {
    private static final int SLOTS = 16;
    private static final int SLOT_BYTES = 1_000;

    private static RecvByteBufAllocator.ExtendedHandle handle() {
        RecvmmsgAllocator allocator = new RecvmmsgAllocator(SLOTS, SLOT_BYTES);
        allocator.maxMessagesPerRead(1 << 16);
        RecvByteBufAllocator.ExtendedHandle handle = (RecvByteBufAllocator.ExtendedHandle) allocator.newHandle();
        handle.reset(new EmbeddedChannel().config());
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
    void shouldKeepNettysReadBudget() {
        RecvmmsgAllocator allocator = new RecvmmsgAllocator(SLOTS, SLOT_BYTES);
        allocator.maxMessagesPerRead(2 * SLOTS);
        RecvByteBufAllocator.ExtendedHandle handle = (RecvByteBufAllocator.ExtendedHandle) allocator.newHandle();
        handle.reset(new EmbeddedChannel().config());
        call(handle, SLOTS);
        assertThat(handle.continueReading(() -> true)).isTrue();
        call(handle, SLOTS);

        assertThat(handle.continueReading(() -> true)).isFalse();
    }
}
