package io.homa.engine;

import java.util.Arrays;

/**
 * The sender's SRPT order (draft "Sender-side SRPT"): messages with new bytes to send in a
 * binary min-heap on (bytes never sent, creation order). A message's key only shrinks while it
 * is the head (it sends); any other message whose key changes is taken out and put back. Unlike
 * {@link java.util.PriorityQueue}, its slots can be read by index, so that the search for the
 * oldest message (the FIFO share of the bandwidth) allocates no iterator: the send path allocates
 * nothing per packet. The array grows by doubling and never allocates otherwise.
 */
final class SendQueue {
    private OutboundMessage[] heap = new OutboundMessage[16];
    private int size;

    int size() {
        return size;
    }

    /** The message in slot {@code index}, 0 being the SRPT head; slots past 0 are in no particular order. */
    OutboundMessage get(int index) {
        return heap[index];
    }

    /** The SRPT head, or null when empty. */
    OutboundMessage peek() {
        return size == 0 ? null : heap[0];
    }

    void add(OutboundMessage message) {
        if (size == heap.length) {
            heap = Arrays.copyOf(heap, size * 2);
        }
        heap[size] = message;
        size++;
        siftUp(size - 1);
    }

    /** Removes the SRPT head. */
    void poll() {
        removeAt(0);
    }

    /** Removes the message in slot {@code index}. */
    void removeAt(int index) {
        size--;
        OutboundMessage last = heap[size];
        heap[size] = null;
        if (index == size) {
            return;
        }
        heap[index] = last;
        if (index > 0 && before(last, heap[(index - 1) >>> 1])) {
            siftUp(index);
        } else {
            siftDown(index);
        }
    }

    void clear() {
        Arrays.fill(heap, 0, size, null);
        size = 0;
    }

    private static boolean before(OutboundMessage a, OutboundMessage b) {
        int aBytes = a.remainingBytes();
        int bBytes = b.remainingBytes();
        return aBytes < bBytes || aBytes == bBytes && a.sequence < b.sequence;
    }

    private void siftUp(int index) {
        OutboundMessage message = heap[index];
        while (index > 0) {
            int parent = (index - 1) >>> 1;
            if (!before(message, heap[parent])) {
                break;
            }
            heap[index] = heap[parent];
            index = parent;
        }
        heap[index] = message;
    }

    private void siftDown(int index) {
        OutboundMessage message = heap[index];
        int half = size >>> 1;
        while (index < half) {
            int child = 2 * index + 1;
            int right = child + 1;
            if (right < size && before(heap[right], heap[child])) {
                child = right;
            }
            if (!before(heap[child], message)) {
                break;
            }
            heap[index] = heap[child];
            index = child;
        }
        heap[index] = message;
    }
}
