package io.homa.reactive;

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
 * an unloaded ping-pong (S1). Stopping early can never strand a datagram: Netty 4.2's epoll
 * transport is level-triggered (its {@code EpollMode} is fixed), so a socket that still holds
 * data is reported again by the loop's next epoll_wait; and a datagram queued after the short
 * call finds an empty queue, which Linux signals even to an edge-triggered waiter
 * ({@code RecvmmsgStrandingLoopbackTest}).
 *
 * <p>Only for recvmmsg reads (one buffer of {@code datagrams} slots of {@code datagramBytes}):
 * Netty reports each call's bytes as {@code received x datagramBytes} against
 * {@code datagrams x datagramBytes} attempted, so the two are equal exactly when every slot was
 * filled. A recvmsg read (one datagram per call, as with UDP GRO before Netty 4.2.19) fills its
 * buffer only by chance, and reads on until the socket is empty.
 */
final class RecvmmsgAllocator extends FixedRecvByteBufAllocator {
    /**
     * @param datagrams datagrams one recvmmsg call may return
     * @param datagramBytes bytes of each slot ({@code max-datagram-payload-size})
     */
    RecvmmsgAllocator(int datagrams, int datagramBytes) {
        super(datagrams * datagramBytes);
        respectMaybeMoreData(true);
    }

    @Override
    public Handle newHandle() {
        return new SlotsFilled((ExtendedHandle) super.newHandle());
    }

    /** Continues while the last call filled every slot; Netty's own budget and auto-read still apply. */
    static final class SlotsFilled extends RecvByteBufAllocator.DelegatingHandle implements RecvByteBufAllocator.ExtendedHandle {
        private final UncheckedBooleanSupplier lastCallFilledEverySlot = () -> lastBytesRead() == attemptedBytesRead();

        SlotsFilled(ExtendedHandle handle) {
            super(handle);
        }

        @Override
        public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
            // Netty's datagram channel passes a supplier that is always true: read until empty.
            return ((ExtendedHandle) delegate()).continueReading(lastCallFilledEverySlot);
        }

        @Override
        public boolean continueReading() {
            return continueReading(lastCallFilledEverySlot);
        }
    }
}
