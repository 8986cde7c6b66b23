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
    private int recorded;
    private int sinceRecompute;
    private int[] cutoffs;
    private int version;
    private int unscheduledLevels = 1;

    UnscheduledCutoffs(int priorityLevels, int unscheduledBytes) {
        this.priorityLevels = priorityLevels;
        this.unscheduledBytes = unscheduledBytes;
    }

    /** Records a new inbound message; recomputes now and then. */
    void record(int lengthBytes) {
        recentLengths[recorded % WINDOW] = lengthBytes;
        recorded++;
        if (++sinceRecompute >= RECOMPUTE_EVERY) {
            sinceRecompute = 0;
            int[] lengths = Arrays.copyOf(recentLengths, Math.min(recorded, WINDOW));
            int[] computed = compute(lengths, priorityLevels, unscheduledBytes);
            if (cutoffs == null || !Arrays.equals(cutoffs, computed)) {
                cutoffs = computed;
                version = version == 65535 ? 1 : version + 1;
                unscheduledLevels = unscheduledLevels(computed, priorityLevels);
            }
        }
    }

    /** Current cutoffs (8 entries), or null before the first computation. */
    int[] cutoffs() {
        return cutoffs;
    }

    /** Current version; 0 before the first computation (senders then use the highest level). */
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
        long totalBytes = 0;
        long unscheduledTotal = 0;
        for (int length : sorted) {
            totalBytes += length;
            unscheduledTotal += Math.min(length, unscheduledBytes);
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
        for (int i = 0; i < sorted.length && level > lowest; i++) {
            accumulated += Math.min(sorted[i], unscheduledBytes);
            boolean lastOfLength = i + 1 == sorted.length || sorted[i + 1] != sorted[i];
            if (lastOfLength && accumulated >= perLevel * (priorityLevels - level)) {
                cutoffs[level] = sorted[i];
                level--;
            }
        }
        for (; level > lowest; level--) {
            cutoffs[level] = sorted.length == 0 ? Integer.MAX_VALUE : sorted[sorted.length - 1];
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
