package io.homa.engine;

import java.util.Arrays;

/**
 * Sorted, disjoint byte ranges {@code [start, end)} of one message that have arrived: the
 * receiver's record for out-of-order reassembly and for finding gaps to RESEND.
 */
final class RangeSet {
    private int[] starts = new int[4];
    private int[] ends = new int[4];
    private int size;
    private long coveredBytes;

    /**
     * Adds {@code [start, end)}, merging with neighbours it overlaps or touches.
     *
     * @return the number of bytes that were not covered before (0 for a pure duplicate)
     */
    int add(int start, int end) {
        if (start >= end) {
            return 0;
        }
        int first = firstEndingAtOrAfter(start);
        int last = first;
        int mergedStart = start;
        int mergedEnd = end;
        long overlapped = 0;
        while (last < size && starts[last] <= end) {
            mergedStart = Math.min(mergedStart, starts[last]);
            mergedEnd = Math.max(mergedEnd, ends[last]);
            overlapped += ends[last] - starts[last];
            last++;
        }
        int added = (int) ((mergedEnd - mergedStart) - overlapped);
        int merging = last - first;
        if (merging == 0) {
            insertAt(first, mergedStart, mergedEnd);
        } else {
            starts[first] = mergedStart;
            ends[first] = mergedEnd;
            int removed = merging - 1;
            if (removed > 0) {
                System.arraycopy(starts, last, starts, first + 1, size - last);
                System.arraycopy(ends, last, ends, first + 1, size - last);
                size -= removed;
            }
        }
        coveredBytes += added;
        return added;
    }

    /** Index of the first range that ends after {@code offset}, so may hold it or lie beyond it; {@link #size()} if none. */
    int firstEndingAfter(int offset) {
        return offset == Integer.MAX_VALUE ? size : firstEndingAtOrAfter(offset + 1);
    }

    /** Index of the first range whose end is at or after {@code offset} (binary search). */
    private int firstEndingAtOrAfter(int offset) {
        int low = 0;
        int high = size;
        while (low < high) {
            int mid = (low + high) >>> 1;
            if (ends[mid] < offset) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        return low;
    }

    private void insertAt(int index, int start, int end) {
        if (size == starts.length) {
            starts = Arrays.copyOf(starts, size * 2);
            ends = Arrays.copyOf(ends, size * 2);
        }
        System.arraycopy(starts, index, starts, index + 1, size - index);
        System.arraycopy(ends, index, ends, index + 1, size - index);
        starts[index] = start;
        ends[index] = end;
        size++;
    }

    /** Total bytes covered. */
    long coveredBytes() {
        return coveredBytes;
    }

    /** Number of disjoint ranges. */
    int size() {
        return size;
    }

    int start(int index) {
        return starts[index];
    }

    int end(int index) {
        return ends[index];
    }
}
