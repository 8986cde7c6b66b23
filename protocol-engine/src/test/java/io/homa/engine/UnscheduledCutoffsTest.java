package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.workloads.Workload;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Cutoffs from the W1-W5 workloads give each unscheduled level about the same bytes; recomputing them costs no copy of the window. */
class UnscheduledCutoffsTest {
    private static final int UNSCHEDULED = 60_888;

    static int[] sample(String workload, int count, long seed) {
        Workload distribution = Workload.load(workload);
        Random random = new Random(seed);
        int[] lengths = new int[count];
        for (int i = 0; i < count; i++) {
            lengths[i] = distribution.sample(random);
        }
        return lengths;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"w1", "w2", "w3", "w4", "w5"})
    void shouldGiveEachUnscheduledLevelEqualBytes(String workload) throws Exception {
        int[] lengths = sample(workload, 50_000, 7);
        int[] cutoffs = UnscheduledCutoffs.compute(lengths, 8, UNSCHEDULED);

        // Non-increasing, level 0 takes every length.
        for (int i = 1; i < 8; i++) {
            assertThat(cutoffs[i]).isLessThanOrEqualTo(cutoffs[i - 1]);
        }
        assertThat(cutoffs[0]).isEqualTo(Integer.MAX_VALUE);
        int lowest = 0;
        while (lowest + 1 < 8 && cutoffs[lowest + 1] == Integer.MAX_VALUE) {
            lowest++;
        }
        int levels = 8 - lowest;
        long[] bytesPerLevel = new long[8];
        long total = 0;
        for (int length : lengths) {
            int level = 0;
            for (int i = 7; i >= 0; i--) {
                if (Integer.toUnsignedLong(cutoffs[i]) >= length) {
                    level = i;
                    break;
                }
            }
            long unscheduled = Math.min(length, UNSCHEDULED);
            bytesPerLevel[level] += unscheduled;
            total += unscheduled;
        }
        long share = total / levels;
        StringBuilder report = new StringBuilder(workload + ": " + levels + " unscheduled levels, cutoffs");
        for (int i = 7; i >= lowest; i--) {
            report.append(' ').append(cutoffs[i] == Integer.MAX_VALUE ? "max" : cutoffs[i]);
        }
        report.append(", unscheduled bytes per level");
        for (int i = 7; i >= lowest; i--) {
            report.append(' ').append(bytesPerLevel[i]);
        }
        System.out.println(report);
        for (int i = lowest; i < 8; i++) {
            // Discrete lengths (many messages of one length) make levels uneven; within 2.5x of
            // the ideal share each way, and shorter messages on higher levels.
            assertThat(bytesPerLevel[i]).as("%s level %d", workload, i).isBetween(share * 2 / 5, share * 5 / 2);
        }
    }

    @Test
    void shouldRecomputeFromItsWindowAsComputeDoesWithoutCopyingIt() {
        int[] lengths = sample("w3", 3 * UnscheduledCutoffs.WINDOW + UnscheduledCutoffs.RECOMPUTE_EVERY, 11);
        UnscheduledCutoffs cutoffs = new UnscheduledCutoffs(8, UNSCHEDULED, 1);
        com.sun.management.ThreadMXBean threads = ThreadAllocation.threadBean();
        long threadId = Thread.currentThread().getId();
        for (int length : lengths) { // warm-up: the JIT compiles record, sort and compute
            cutoffs.record(length);
        }
        long start = threads.getThreadAllocatedBytes(threadId);
        for (int length : lengths) {
            cutoffs.record(length);
        }
        long allocatedBytes = threads.getThreadAllocatedBytes(threadId) - start;
        // Only a recomputation whose cutoffs changed keeps a new 8-entry array; copying and sorting
        // the 1,024-length window into fresh arrays cost 8 KB a recomputation (32 B a message).
        assertThat((double) allocatedBytes / lengths.length).as("bytes allocated per recorded message").isLessThan(1.0);

        int[] window = Arrays.copyOfRange(lengths, lengths.length - UnscheduledCutoffs.WINDOW, lengths.length);
        assertThat(cutoffs.cutoffs()).isEqualTo(UnscheduledCutoffs.compute(window, 8, UNSCHEDULED));
    }

    @Test
    void shouldMeasureTheUnscheduledRatioOverTheWindow() {
        UnscheduledCutoffs cutoffs = new UnscheduledCutoffs(8, UNSCHEDULED, 1);
        assertThat(cutoffs.unscheduledPercent()).isEqualTo(-1);
        cutoffs.record(UNSCHEDULED / 2);
        assertThat(cutoffs.unscheduledPercent()).isEqualTo(100);
        cutoffs.record(3 * UNSCHEDULED + UNSCHEDULED / 2);
        // 1.5 windows of 4 arrive unscheduled.
        assertThat(cutoffs.unscheduledPercent()).isEqualTo(37);
        // Once the window has turned over, only the latest lengths count.
        for (int i = 0; i < UnscheduledCutoffs.WINDOW; i++) {
            cutoffs.record(4 * UNSCHEDULED);
        }
        assertThat(cutoffs.unscheduledPercent()).isEqualTo(25);
    }
}
