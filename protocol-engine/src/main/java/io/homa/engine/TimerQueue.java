package io.homa.engine;

import java.util.Arrays;

/**
 * The engine's deadlines: a binary min-heap of {@link TimerEntry}s, one slot per RPC or peer that
 * has something to do later (the idea of quinn-proto's {@code TimerTable} and Linux Homa's per-RPC
 * checks in {@code homa_timer.c}, without visiting every RPC on every tick). {@link #earliestNs()}
 * is the earliest real deadline; {@link #pollDue} hands out only entries that are due.
 *
 * <p>Deadlines are lazy in one direction: {@link #armAtOrBefore} only ever moves an armed entry's
 * deadline earlier. When an RPC's real deadline moves later (a packet arrived from its peer), the
 * heap is not touched; the entry fires at the old deadline, its owner finds nothing due yet and
 * arms it again at the new one. A packet therefore costs no heap operation, and an entry fires at
 * most once per deadline it was armed at.
 *
 * <p>Times compare as {@code a - b < 0}, so any clock origin works. Adding, moving earlier and
 * removing cost O(log n); the heap array grows by doubling and never allocates otherwise.
 */
final class TimerQueue {
    private TimerEntry[] heap = new TimerEntry[16];
    private int size;

    /** Entries armed. */
    int size() {
        return size;
    }

    /** The earliest deadline armed, or {@link Long#MAX_VALUE} if none. */
    long earliestNs() {
        return size == 0 ? Long.MAX_VALUE : heap[0].timerDeadlineNs;
    }

    /**
     * Arms {@code entry} at {@code deadlineNs}, or moves its deadline earlier if it is armed later.
     * An entry already armed at or before {@code deadlineNs} keeps its deadline.
     */
    void armAtOrBefore(TimerEntry entry, long deadlineNs) {
        int index = entry.timerIndex;
        if (index < 0) {
            if (size == heap.length) {
                heap = Arrays.copyOf(heap, size * 2);
            }
            entry.timerDeadlineNs = deadlineNs;
            heap[size] = entry;
            entry.timerIndex = size;
            size++;
            siftUp(size - 1);
        } else if (deadlineNs - entry.timerDeadlineNs < 0) {
            entry.timerDeadlineNs = deadlineNs;
            siftUp(index);
        }
    }

    /** Disarms {@code entry}; nothing happens if it is not armed. */
    void cancel(TimerEntry entry) {
        int index = entry.timerIndex;
        if (index < 0) {
            return;
        }
        removeAt(index);
    }

    /**
     * Removes and returns the entry with the earliest deadline if that deadline is at or before
     * {@code nowNs}; otherwise returns null and changes nothing. The entry is disarmed: its owner
     * arms it again if it still has something to do.
     */
    TimerEntry pollDue(long nowNs) {
        if (size == 0 || nowNs - heap[0].timerDeadlineNs < 0) {
            return null;
        }
        TimerEntry due = heap[0];
        removeAt(0);
        return due;
    }

    /** Disarms every entry. */
    void clear() {
        for (int i = 0; i < size; i++) {
            heap[i].timerIndex = -1;
            heap[i] = null;
        }
        size = 0;
    }

    private void removeAt(int index) {
        TimerEntry removed = heap[index];
        removed.timerIndex = -1;
        size--;
        if (index == size) {
            heap[size] = null;
            return;
        }
        TimerEntry last = heap[size];
        heap[size] = null;
        heap[index] = last;
        last.timerIndex = index;
        if (index > 0 && last.timerDeadlineNs - heap[(index - 1) >>> 1].timerDeadlineNs < 0) {
            siftUp(index);
        } else {
            siftDown(index);
        }
    }

    private void siftUp(int index) {
        TimerEntry entry = heap[index];
        while (index > 0) {
            int parent = (index - 1) >>> 1;
            TimerEntry above = heap[parent];
            if (entry.timerDeadlineNs - above.timerDeadlineNs >= 0) {
                break;
            }
            heap[index] = above;
            above.timerIndex = index;
            index = parent;
        }
        heap[index] = entry;
        entry.timerIndex = index;
    }

    private void siftDown(int index) {
        TimerEntry entry = heap[index];
        int half = size >>> 1;
        while (index < half) {
            int child = 2 * index + 1;
            int right = child + 1;
            if (right < size && heap[right].timerDeadlineNs - heap[child].timerDeadlineNs < 0) {
                child = right;
            }
            TimerEntry below = heap[child];
            if (below.timerDeadlineNs - entry.timerDeadlineNs >= 0) {
                break;
            }
            heap[index] = below;
            below.timerIndex = index;
            index = child;
        }
        heap[index] = entry;
        entry.timerIndex = index;
    }
}
