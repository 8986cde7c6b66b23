package io.homa.engine;

import java.util.ConcurrentModificationException;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * A hash map from {@code long} keys (rpcids) to non-null values, without boxing: lookups on the
 * packet path allocate nothing (a {@code HashMap<Long, V>} allocates a {@code Long} per lookup
 * of an rpcid outside the small-value cache, unless the JIT happens to eliminate it). Open
 * addressing with linear probing and backward-shift deletion; the table doubles at half full
 * and never shrinks. Not thread-safe.
 *
 * @param <V> the value type
 */
final class LongMap<V> {
    private static final int MIN_CAPACITY = 8;

    private long[] keys;
    /** {@code null} marks a free slot, so every key (0 included) is allowed. */
    private Object[] values;
    private int mask;
    /** {@code 64 - log2(capacity)}: the hash's top bits index the table. */
    private int shift;
    private int size;
    private int modifications;

    LongMap() {
        keys = new long[MIN_CAPACITY];
        values = new Object[MIN_CAPACITY];
        mask = MIN_CAPACITY - 1;
        shift = 64 - Integer.numberOfTrailingZeros(MIN_CAPACITY);
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** The value for {@code key}, or {@code null}. */
    @SuppressWarnings("unchecked")
    V get(long key) {
        for (int i = slot(key); ; i = (i + 1) & mask) {
            Object value = values[i];
            if (value == null) {
                return null;
            }
            if (keys[i] == key) {
                return (V) value;
            }
        }
    }

    /**
     * Maps {@code key} to {@code value}.
     *
     * @return the previous value, or {@code null}
     * @throws NullPointerException if {@code value} is null
     */
    @SuppressWarnings("unchecked")
    V put(long key, V value) {
        if (value == null) {
            throw new NullPointerException("value must not be null (key " + key + ")");
        }
        int i = slot(key);
        for (; values[i] != null; i = (i + 1) & mask) {
            if (keys[i] == key) {
                V previous = (V) values[i];
                values[i] = value;
                return previous;
            }
        }
        keys[i] = key;
        values[i] = value;
        size++;
        modifications++;
        if (2 * size > mask + 1) {
            resize(2 * (mask + 1));
        }
        return null;
    }

    /**
     * Removes the mapping of {@code key}.
     *
     * @return the removed value, or {@code null} if there was none
     */
    @SuppressWarnings("unchecked")
    V remove(long key) {
        int i = slot(key);
        for (; ; i = (i + 1) & mask) {
            Object value = values[i];
            if (value == null) {
                return null;
            }
            if (keys[i] == key) {
                size--;
                modifications++;
                shiftBack(i);
                return (V) value;
            }
        }
    }

    void clear() {
        java.util.Arrays.fill(values, null);
        size = 0;
        modifications++;
    }

    /**
     * The values, in no particular order; a live view. Its iterator fails with
     * {@link ConcurrentModificationException} if the map changes during the iteration (collect
     * first, change after).
     */
    Iterable<V> values() {
        return ValueIterator::new;
    }

    /** Frees slot {@code hole} and moves later entries of its probe run back so lookups still find them. */
    private void shiftBack(int hole) {
        int i = hole;
        while (true) {
            i = (i + 1) & mask;
            Object value = values[i];
            if (value == null) {
                break;
            }
            int home = slot(keys[i]);
            // The entry may move into the hole unless its home lies cyclically in (hole, i].
            boolean homeAfterHole = hole <= i ? hole < home && home <= i : hole < home || home <= i;
            if (!homeAfterHole) {
                keys[hole] = keys[i];
                values[hole] = value;
                hole = i;
            }
        }
        values[hole] = null;
    }

    private int slot(long key) {
        // Fibonacci hashing: rpcids are even and sequential; the product's top bits mix them all.
        return (int) ((key * 0x9E3779B97F4A7C15L) >>> shift);
    }

    private void resize(int capacity) {
        long[] oldKeys = keys;
        Object[] oldValues = values;
        keys = new long[capacity];
        values = new Object[capacity];
        mask = capacity - 1;
        shift = 64 - Integer.numberOfTrailingZeros(capacity);
        for (int j = 0; j < oldValues.length; j++) {
            if (oldValues[j] != null) {
                int i = slot(oldKeys[j]);
                while (values[i] != null) {
                    i = (i + 1) & mask;
                }
                keys[i] = oldKeys[j];
                values[i] = oldValues[j];
            }
        }
    }

    private final class ValueIterator implements Iterator<V> {
        private final int expectedModifications = modifications;
        private int next = advance(0);

        private int advance(int from) {
            int i = from;
            while (i < values.length && values[i] == null) {
                i++;
            }
            return i;
        }

        @Override
        public boolean hasNext() {
            check();
            return next < values.length;
        }

        @Override
        @SuppressWarnings("unchecked")
        public V next() {
            check();
            if (next >= values.length) {
                throw new NoSuchElementException();
            }
            V value = (V) values[next];
            next = advance(next + 1);
            return value;
        }

        private void check() {
            if (modifications != expectedModifications) {
                throw new ConcurrentModificationException("LongMap changed during iteration");
            }
        }
    }
}
