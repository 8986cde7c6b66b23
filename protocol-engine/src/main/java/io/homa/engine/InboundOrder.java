package io.homa.engine;

import java.util.Arrays;

/**
 * Inbound messages in SRPT order: fewest bytes remaining first, then the older (lower
 * {@link InboundMessage#sequence}) first. A sorted array with binary search: adding and removing
 * cost O(log n) comparisons plus an O(n) array shift, and allocate nothing once the array has
 * grown to the number of messages (a {@code TreeSet} allocates an entry per add, once per
 * received packet on the grant path).
 *
 * <p>Set semantics as with a {@code TreeSet} under the same order: a message's key (its
 * remaining bytes) must not change while it is held, so callers remove it before receiving
 * bytes into it and add it back after.
 */
final class InboundOrder {
    private InboundMessage[] messages = new InboundMessage[8];
    private int size;

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** The message at {@code index} in order, 0 = fewest bytes remaining. */
    InboundMessage get(int index) {
        if (index >= size) {
            throw new IndexOutOfBoundsException("index " + index + ", size " + size);
        }
        return messages[index];
    }

    /** Adds the message unless one with the same key is held; returns whether it was added. */
    boolean add(InboundMessage message) {
        int index = search(message);
        if (index >= 0) {
            return false;
        }
        int at = -index - 1;
        if (size == messages.length) {
            messages = Arrays.copyOf(messages, size * 2);
        }
        System.arraycopy(messages, at, messages, at + 1, size - at);
        messages[at] = message;
        size++;
        return true;
    }

    /** Removes the message with the same key as {@code message}; returns whether there was one. */
    boolean remove(InboundMessage message) {
        int index = search(message);
        if (index < 0) {
            return false;
        }
        size--;
        System.arraycopy(messages, index + 1, messages, index, size - index);
        messages[size] = null;
        return true;
    }

    void clear() {
        Arrays.fill(messages, 0, size, null);
        size = 0;
    }

    /** Index of the message with {@code key}'s key, or {@code -(insertion point) - 1}. */
    private int search(InboundMessage key) {
        long remaining = key.remainingBytes();
        long sequence = key.sequence;
        int low = 0;
        int high = size - 1;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            InboundMessage probe = messages[mid];
            int order = Long.compare(probe.remainingBytes(), remaining);
            if (order == 0) {
                order = Long.compare(probe.sequence, sequence);
            }
            if (order < 0) {
                low = mid + 1;
            } else if (order > 0) {
                high = mid - 1;
            } else {
                return mid;
            }
        }
        return -(low + 1);
    }
}
