package io.homa.engine;

import java.util.Arrays;

/**
 * Inbound messages in SRPT order: fewest bytes remaining first, then the older (lower
 * {@link InboundMessage#sequence}) first. A sorted array with binary search: adding and removing
 * cost O(log n) comparisons plus an array shift, and allocate nothing once the array has grown to
 * the number of messages (a {@code TreeSet} allocates an entry per add, once per received packet
 * on the grant path).
 *
 * <p>The array holds the order reversed, the message with the fewest bytes remaining last: packets
 * arrive mostly for the shortest messages (those granted to) and a message only moves towards the
 * front of the order as its bytes arrive, so the shift on taking it out and putting it back moves
 * the few references behind it in the array rather than all the longer messages waiting.
 *
 * <p>Set semantics as with a {@code TreeSet} under the same order: a message's key (its
 * remaining bytes) must not change while it is held, so callers remove it before receiving
 * bytes into it and add it back after.
 */
final class InboundOrder {
    /** {@code messages[size - 1 - i]} is the message at index {@code i} of the SRPT order. */
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
        if (index < 0 || index >= size) {
            throw new IndexOutOfBoundsException("index " + index + ", size " + size);
        }
        return messages[size - 1 - index];
    }

    /** Adds the message unless one with the same key is held; returns whether it was added. */
    boolean add(InboundMessage message) {
        return insert(message) >= 0;
    }

    /**
     * Adds the message unless one with the same key is held.
     *
     * @return the index the message took in order (0 = fewest bytes remaining), or -1 if one with
     *     the same key is held
     */
    int insert(InboundMessage message) {
        int slot = search(message);
        if (slot >= 0) {
            return -1;
        }
        int at = -slot - 1;
        if (size == messages.length) {
            messages = Arrays.copyOf(messages, size * 2);
        }
        System.arraycopy(messages, at, messages, at + 1, size - at);
        messages[at] = message;
        size++;
        return size - 1 - at;
    }

    /** Removes the message with the same key as {@code message}; returns whether there was one. */
    boolean remove(InboundMessage message) {
        return delete(message) >= 0;
    }

    /**
     * Removes the message with the same key as {@code message}.
     *
     * @return the index it had in order (0 = fewest bytes remaining), or -1 if none was held
     */
    int delete(InboundMessage message) {
        int slot = search(message);
        if (slot < 0) {
            return -1;
        }
        int index = size - 1 - slot;
        size--;
        System.arraycopy(messages, slot + 1, messages, slot, size - slot);
        messages[size] = null;
        return index;
    }

    void clear() {
        Arrays.fill(messages, 0, size, null);
        size = 0;
    }

    /**
     * Array slot of the message with {@code key}'s key, or {@code -(insertion slot) - 1}; the array
     * descends, most bytes remaining first.
     */
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
            if (order > 0) {
                low = mid + 1; // the probe comes later in SRPT order, so earlier in the array
            } else if (order < 0) {
                high = mid - 1;
            } else {
                return mid;
            }
        }
        return -(low + 1);
    }
}
