package io.homa.reactive.internal.transport;

import io.homa.reactive.NanoClock;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelConfig;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;

/**
 * Receive buffers for recvmmsg(2) reads on Netty's epoll transport that stop reading when one call
 * returned fewer datagrams than it had room for, instead of issuing one more call that finds the
 * socket empty.
 *
 * <p>Netty's epoll datagram channel reads until a call returns nothing. A recvmmsg that returned
 * fewer datagrams than its slots stopped because the next receive would have blocked: the socket
 * was empty at that moment. Only a call that filled every slot is likely to leave more. That saves
 * one system call per wake-up: half the receive calls of a loop that wakes for one datagram, as in
 * an unloaded ping-pong. Stopping early can never strand a datagram: Netty 4.2's epoll
 * transport is level-triggered (its {@code EpollMode} is fixed), so a socket that still holds
 * data is reported again by the loop's next epoll_wait; and a datagram queued after the short
 * call finds an empty queue, which Linux signals even to an edge-triggered waiter
 * ({@code RecvmmsgStrandingLoopbackTest}).
 *
 * <p>For recvmmsg reads (one buffer of {@code datagrams} slots of {@code datagramBytes}), Netty
 * reports each call's bytes as {@code received x datagramBytes} against
 * {@code datagrams x datagramBytes} attempted, so the two are equal exactly when every slot was
 * filled. Built with one slot, for recvmsg reads (one datagram, or one coalesced run, per call:
 * UDP GRO), a call fills its buffer only by chance, so a dense read goes on
 * until the socket is empty; only the sparse rule below applies.
 *
 * <p><b>Sparse traffic reads with recvmsg.</b> Netty's recvmmsg asks the socket for
 * {@code IP_RECVORIGDSTADDR} (a getsockopt) before every call, and the kernel tries a second
 * receive that finds nothing; a recvmsg does neither. So a wake-up that follows a read of at most
 * one datagram by at least {@link #DENSE_NS} (an unloaded ping-pong: one datagram per wake-up)
 * reads one datagram with one recvmsg and stops; level-triggered epoll reports the socket again
 * at once if more was queued, and that wake-up, coming sooner than {@link #DENSE_NS}, reads with
 * recvmmsg as above. A read of more than one datagram means load: the next read uses recvmmsg
 * however long the loop then spent on what it read. Netty's channel chooses recvmsg itself when
 * the buffer holds one slot.
 */
final class RecvmmsgAllocator extends FixedRecvByteBufAllocator {
    /**
     * @param datagrams datagrams one recvmmsg call may return
     * @param datagramBytes bytes of each slot ({@code max-datagram-payload-size})
     */
    RecvmmsgAllocator(int datagrams, int datagramBytes) {
        super(datagrams * datagramBytes);
        respectMaybeMoreData(true);
        this.datagramBytes = datagramBytes;
        this.recvmsg = datagrams == 1;
    }

    /** A wake-up this soon after the previous read began, ns, reads with recvmmsg: traffic is dense. */
    static final long DENSE_NS = 50_000;

    private final int datagramBytes;
    /** One slot: every call is a recvmsg. */
    private final boolean recvmsg;

    @Override
    public Handle newHandle() {
        return newHandle(NanoClock.system());
    }

    /** A handle that reads the time from {@code clock}, ns (tests). */
    SlotsFilled newHandle(NanoClock clock) {
        return new SlotsFilled((ExtendedHandle) super.newHandle(), datagramBytes, recvmsg, clock);
    }

    /**
     * Continues while the last call filled every slot; Netty's own budget and auto-read still
     * apply. A read of sparse traffic is one recvmsg of one slot.
     */
    static final class SlotsFilled extends RecvByteBufAllocator.DelegatingHandle implements RecvByteBufAllocator.ExtendedHandle {
        private final UncheckedBooleanSupplier lastCallFilledEverySlot = () -> lastBytesRead() == attemptedBytesRead();
        /** Whether a dense read may go on: for recvmsg, until a call finds the socket empty. */
        private final UncheckedBooleanSupplier mayHaveMore;
        private final int datagramBytes;
        private final NanoClock clock;
        /** When the previous read began, ns; far in the past at first. */
        private long lastReadNs;
        /** Datagrams the current read has taken so far. */
        private int datagramsRead;
        /** This read is one recvmsg of one datagram. */
        private boolean single;

        SlotsFilled(ExtendedHandle handle, int datagramBytes, boolean recvmsg, NanoClock clock) {
            super(handle);
            this.mayHaveMore = recvmsg ? UncheckedBooleanSupplier.TRUE_SUPPLIER : lastCallFilledEverySlot;
            this.datagramBytes = datagramBytes;
            this.clock = clock;
            this.lastReadNs = clock.nanoTime() - 2 * DENSE_NS;
        }

        @Override
        public void reset(ChannelConfig config) {
            super.reset(config);
            long nowNs = clock.nanoTime();
            single = datagramsRead <= 1 && nowNs - lastReadNs >= DENSE_NS;
            lastReadNs = nowNs;
            datagramsRead = 0;
        }

        @Override
        public void incMessagesRead(int numMessages) {
            super.incMessagesRead(numMessages);
            datagramsRead += numMessages;
        }

        /** Whether this read is a single recvmsg (sparse traffic). */
        boolean single() {
            return single;
        }

        @Override
        public ByteBuf allocate(ByteBufAllocator alloc) {
            return single ? alloc.ioBuffer(datagramBytes) : super.allocate(alloc);
        }

        @Override
        public int guess() {
            return single ? datagramBytes : super.guess();
        }

        @Override
        public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
            // Netty's datagram channel passes a supplier that is always true: read until empty.
            return !single && ((ExtendedHandle) delegate()).continueReading(mayHaveMore);
        }

        @Override
        public boolean continueReading() {
            return continueReading(mayHaveMore);
        }
    }
}
