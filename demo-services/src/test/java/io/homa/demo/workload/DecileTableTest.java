package io.homa.demo.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Percentage.withPercentage;

import java.util.List;
import org.junit.jupiter.api.Test;

class DecileTableTest {

    /** Unloaded RTT = 1000 ns per byte at every length, so slowdown = rtt / (1000 * length). */
    private static final UnloadedRtt ONE_US_PER_BYTE = new UnloadedRtt(new int[] {1, 1000}, new long[] {1000, 1_000_000});

    @Test
    void shouldCutRpcsIntoTenthsByLengthRank() {
        RpcLog log = new RpcLog();
        for (int length = 100; length >= 1; length--) { // out of order on purpose
            log.add(length, 1000L * length);
        }

        List<DecileTable.Row> rows = DecileTable.compute(log.sortedByLength(), ONE_US_PER_BYTE);

        assertThat(rows).hasSize(10);
        DecileTable.Row first = rows.get(0);
        assertThat(first.decile()).isEqualTo(1);
        assertThat(first.minLengthBytes()).isEqualTo(1);
        assertThat(first.maxLengthBytes()).isEqualTo(10);
        assertThat(first.count()).isEqualTo(10);
        assertThat(first.rttP50Us()).isCloseTo(5.0, withPercentage(0.1));
        assertThat(first.rttP99Us()).isCloseTo(10.0, withPercentage(0.1));
        assertThat(first.rttP999Us()).isCloseTo(10.0, withPercentage(0.1));
        assertThat(first.slowdownP50()).isCloseTo(1.0, withPercentage(0.1));
        DecileTable.Row last = rows.get(9);
        assertThat(last.minLengthBytes()).isEqualTo(91);
        assertThat(last.maxLengthBytes()).isEqualTo(100);
        assertThat(last.rttP50Us()).isCloseTo(95.0, withPercentage(0.1));
        assertThat(last.rttP99Us()).isCloseTo(100.0, withPercentage(0.1));
    }

    @Test
    void shouldGiveEachDecileATenthOfTheRpcsEvenWhenLengthsRepeat() {
        RpcLog log = new RpcLog();
        for (int i = 0; i < 700; i++) {
            log.add(8, 8_000 + i); // slowdown 1.0 .. 1.087
        }
        for (int i = 0; i < 300; i++) {
            log.add(1000, 3_000_000); // slowdown 3
        }

        List<DecileTable.Row> rows = DecileTable.compute(log.sortedByLength(), ONE_US_PER_BYTE);

        assertThat(rows).hasSize(10).allSatisfy(row -> assertThat(row.count()).isEqualTo(100));
        assertThat(rows.subList(0, 7)).allSatisfy(row -> {
            assertThat(row.minLengthBytes()).isEqualTo(8);
            assertThat(row.maxLengthBytes()).isEqualTo(8);
        });
        assertThat(rows.subList(7, 10)).allSatisfy(row -> {
            assertThat(row.minLengthBytes()).isEqualTo(1000);
            assertThat(row.slowdownP50()).isCloseTo(3.0, withPercentage(0.1));
            assertThat(row.rttP999Us()).isCloseTo(3000.0, withPercentage(0.1));
        });
        // Within a run of equal lengths, records keep their order: here the RTTs were added rising.
        assertThat(rows.get(0).rttP99Us()).isLessThan(rows.get(6).rttP50Us());
    }

    @Test
    void shouldComputeTailPercentilesFromTheWholeDecile() {
        RpcLog log = new RpcLog();
        for (int i = 0; i < 990; i++) {
            log.add(50, 1_000);
        }
        for (int i = 0; i < 10; i++) {
            log.add(50, 1_000_000); // the slowest 1%
        }

        List<DecileTable.Row> rows = DecileTable.compute(log.sortedByLength(), ONE_US_PER_BYTE);

        // Added last, the ten slow RPCs all land in the last decile: 10% of it.
        DecileTable.Row last = rows.get(9);
        assertThat(last.rttP50Us()).isCloseTo(1.0, withPercentage(0.1));
        assertThat(last.rttP99Us()).isCloseTo(1000.0, withPercentage(0.1));
        assertThat(last.slowdownP99()).isCloseTo(1_000_000 / 50_000.0, withPercentage(0.1));
        assertThat(rows.get(0).rttP999Us()).isCloseTo(1.0, withPercentage(0.1));
    }

    @Test
    void shouldLeaveOutEmptyDecilesWhenThereAreFewerThanTenRpcs() {
        RpcLog log = new RpcLog();
        for (int length = 1; length <= 5; length++) {
            log.add(length, 1000);
        }

        List<DecileTable.Row> rows = DecileTable.compute(log.sortedByLength(), ONE_US_PER_BYTE);

        assertThat(rows).hasSize(5);
        assertThat(rows).extracting(DecileTable.Row::count).containsOnly(1);
        assertThat(rows).extracting(DecileTable.Row::minLengthBytes).containsExactly(1, 2, 3, 4, 5);
        assertThat(DecileTable.compute(new RpcLog().sortedByLength(), ONE_US_PER_BYTE)).isEmpty();
    }

    @Test
    void shouldFormatOneLinePerRowUnderAHeader() {
        RpcLog log = new RpcLog();
        for (int i = 0; i < 20; i++) {
            log.add(8 + i, 25_000);
        }

        String text = DecileTable.format(DecileTable.compute(log.sortedByLength(), ONE_US_PER_BYTE));

        assertThat(text.lines()).hasSize(11);
        assertThat(text.lines().findFirst().orElseThrow()).contains("Decile", "Length (bytes)", "p99.9 µs", "Slowdown p99");
        assertThat(text.lines().skip(1).findFirst().orElseThrow()).contains("8..9", "25.0");
    }

    @Test
    void shouldKeepCompletionOrderWithinEqualLengthsSoDecilesAreNotSortedByRtt() {
        RpcLog log = new RpcLog();
        for (int i = 0; i < 100; i++) {
            log.add(8, i % 2 == 0 ? 1_000 : 9_000); // alternating fast and slow
        }

        List<DecileTable.Row> rows = DecileTable.compute(log.sortedByLength(), ONE_US_PER_BYTE);

        // Each decile gets five fast and five slow RPCs, not the ten fastest or slowest.
        assertThat(rows).hasSize(10).allSatisfy(row -> {
            assertThat(row.rttP50Us()).isCloseTo(1.0, withPercentage(0.1));
            assertThat(row.rttP99Us()).isCloseTo(9.0, withPercentage(0.1));
        });
    }

    @Test
    void shouldSortByLengthAndKeepEachRttWithItsLength() {
        RpcLog log = new RpcLog();
        log.add(300, 3);
        log.add(100, 1);
        log.add(200, 2);
        log.add(100, 4);

        RpcLog.Sorted sorted = log.sortedByLength();

        assertThat(sorted.lengthsBytes()).containsExactly(100, 100, 200, 300);
        assertThat(sorted.rttsNs()).containsExactly(1, 4, 2, 3);
    }
}
