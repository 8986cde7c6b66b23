package io.homa.engine;

import java.util.Arrays;

/**
 * The receiver's unscheduled priority cutoffs (draft "Priorities", "CUTOFFS packets"): from the
 * lengths of recent inbound messages, the levels are split between unscheduled and scheduled bytes
 * by their shares (the highest for unscheduled, at least one each; the lowest unscheduled level
 * may also serve as the highest scheduled one), and the unscheduled cutoffs are chosen so that each
 * unscheduled level carries the same number of bytes, shorter messages on higher levels.
 */
final class UnscheduledCutoffs {
    /** Message lengths remembered for the statistics. */
    static final int WINDOW = 1024;
    /** New messages between two recomputations. */
    static final int RECOMPUTE_EVERY = 256;

    private final int priorityLevels;
    private final int unscheduledBytes;
    private final int[] recentLengths = new int[WINDOW];
    /** Where a recomputation sorts the window: no array per recomputation but the cutoffs. */
    private final int[] sortedLengths = new int[WINDOW];
    private int recorded;
    private int sinceRecompute;
    private int[] cutoffs;
    private int version;
    private int unscheduledLevels;
    /** Sums over the remembered lengths: all bytes, and those that arrive unscheduled. */
    private long windowBytes;
    private long windowUnscheduledBytes;

    /**
     * Starts with the default cutoffs (every unscheduled byte at the highest level in use, as
     * before any statistics) under {@code initialVersion}, so that a sender holding another
     * endpoint's cutoffs (a previous process on the same port) is corrected from its first packet.
     *
     * @param initialVersion 1..65535; see {@link #initialVersion(long)}
     */
    UnscheduledCutoffs(int priorityLevels, int unscheduledBytes, int initialVersion) {
        if (initialVersion < 1 || initialVersion > 65535) {
            throw new IllegalArgumentException("initialVersion must be between 1 and 65535, was " + initialVersion);
        }
        this.priorityLevels = priorityLevels;
        this.unscheduledBytes = unscheduledBytes;
        this.cutoffs = compute(new int[0], priorityLevels, unscheduledBytes);
        this.unscheduledLevels = unscheduledLevels(cutoffs, priorityLevels);
        this.version = initialVersion;
    }

    /**
     * A cutoff version (1..65535) derived from a value unique to this endpoint's run, such as its
     * clock-derived first rpcid: a restarted endpoint starts under another version than its
     * predecessor's with probability 65534/65535, so stale cutoffs are corrected.
     */
    static int initialVersion(long seed) {
        long mixed = seed * 0x9E3779B97F4A7C15L;
        mixed ^= mixed >>> 29;
        mixed *= 0xBF58476D1CE4E5B9L;
        mixed ^= mixed >>> 32;
        return (int) Long.remainderUnsigned(mixed, 65535) + 1;
    }

    /** Records a new inbound message; recomputes now and then. */
    void record(int lengthBytes) {
        if (recorded >= WINDOW) {
            int evicted = recentLengths[recorded % WINDOW];
            windowBytes -= evicted;
            windowUnscheduledBytes -= Math.min(evicted, unscheduledBytes);
        }
        windowBytes += lengthBytes;
        windowUnscheduledBytes += Math.min(lengthBytes, unscheduledBytes);
        recentLengths[recorded % WINDOW] = lengthBytes;
        recorded++;
        if (++sinceRecompute >= RECOMPUTE_EVERY) {
            sinceRecompute = 0;
            int count = Math.min(recorded, WINDOW);
            System.arraycopy(recentLengths, 0, sortedLengths, 0, count);
            Arrays.sort(sortedLengths, 0, count);
            int[] computed = fromSorted(sortedLengths, count, priorityLevels, unscheduledBytes);
            if (!Arrays.equals(cutoffs, computed)) {
                cutoffs = computed;
                version = version == 65535 ? 1 : version + 1;
                unscheduledLevels = unscheduledLevels(computed, priorityLevels);
            }
        }
    }

    /**
     * The unscheduled ratio (Lu and Zhang, "Leveraging Homa", section "Unscheduled ratio"): the
     * share of the bytes of recent inbound messages that arrive unscheduled, percent (0..100), or
     * -1 before any message.
     */
    int unscheduledPercent() {
        return windowBytes == 0 ? -1 : (int) (windowUnscheduledBytes * 100 / windowBytes);
    }

    /** Current cutoffs (8 entries; an immutable snapshot: a recomputation makes a new array). */
    int[] cutoffs() {
        return cutoffs;
    }

    /** Current version, 1..65535 (never 0: a sender that has no cutoffs from us says 0). */
    int version() {
        return version;
    }

    /** Levels for scheduled packets: {@code 0 .. scheduledLevels()-1}. */
    int scheduledLevels() {
        return priorityLevels - unscheduledLevels + 1;
    }

    /**
     * Cutoffs for a sample of message lengths.
     *
     * @return 8 non-increasing cutoffs: {@code Integer.MAX_VALUE} (every length) up to the lowest
     *     unscheduled level, then the largest length of each higher level, 0 above
     *     {@code priorityLevels - 1}
     */
    static int[] compute(int[] lengths, int priorityLevels, int unscheduledBytes) {
        int[] sorted = lengths.clone();
        Arrays.sort(sorted);
        return fromSorted(sorted, sorted.length, priorityLevels, unscheduledBytes);
    }

    /** {@link #compute} of the lengths {@code sorted[0, count)}, in ascending order. */
    private static int[] fromSorted(int[] sorted, int count, int priorityLevels, int unscheduledBytes) {
        long totalBytes = 0;
        long unscheduledTotal = 0;
        for (int i = 0; i < count; i++) {
            totalBytes += sorted[i];
            unscheduledTotal += Math.min(sorted[i], unscheduledBytes);
        }
        int levels = (int) Math.round((double) priorityLevels * unscheduledTotal / Math.max(1, totalBytes));
        levels = Math.max(1, Math.min(priorityLevels, levels));
        int[] cutoffs = new int[8];
        int lowest = priorityLevels - levels;
        for (int i = 0; i <= lowest; i++) {
            cutoffs[i] = Integer.MAX_VALUE;
        }
        // Walk lengths from the shortest, closing a level each time it holds its share of bytes.
        long perLevel = Math.max(1, unscheduledTotal / levels);
        long accumulated = 0;
        int level = priorityLevels - 1;
        for (int i = 0; i < count && level > lowest; i++) {
            accumulated += Math.min(sorted[i], unscheduledBytes);
            boolean lastOfLength = i + 1 == count || sorted[i + 1] != sorted[i];
            if (lastOfLength && accumulated >= perLevel * (priorityLevels - level)) {
                cutoffs[level] = sorted[i];
                level--;
            }
        }
        for (; level > lowest; level--) {
            cutoffs[level] = count == 0 ? Integer.MAX_VALUE : sorted[count - 1];
        }
        return cutoffs;
    }

    private static int unscheduledLevels(int[] cutoffs, int priorityLevels) {
        int lowest = 0;
        while (lowest + 1 < priorityLevels && cutoffs[lowest + 1] == Integer.MAX_VALUE) {
            lowest++;
        }
        return priorityLevels - lowest;
    }
}
