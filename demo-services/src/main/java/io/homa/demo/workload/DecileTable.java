package io.homa.demo.workload;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.HdrHistogram.DoubleHistogram;
import org.HdrHistogram.Histogram;

/**
 * The per-length latency table of a run, shaped like the output of Homa's {@code cp_node}: the
 * RPCs are sorted by length and cut into ten groups by rank, so each group holds a tenth of the
 * RPCs even when many have the same length (W1-W3 have long runs of identical lengths; within
 * such a run RPCs keep their completion order, so the cut does not sort them by RTT); for each
 * group, the length range, the RTT percentiles and the slowdown percentiles. Percentiles come
 * from HdrHistogram with 3 significant digits.
 */
public final class DecileTable {
    private static final int SIGNIFICANT_DIGITS = 3;

    private DecileTable() {}

    /**
     * One tenth of the RPCs by length rank.
     *
     * @param decile 1..10
     * @param minLengthBytes shortest request in the group
     * @param maxLengthBytes longest request in the group
     * @param count RPCs in the group
     * @param rttP50Us median RTT in µs
     * @param rttP99Us 99th percentile RTT in µs
     * @param rttP999Us 99.9th percentile RTT in µs
     * @param slowdownP50 median slowdown (RTT / unloaded RTT of the same length)
     * @param slowdownP99 99th percentile slowdown
     */
    public record Row(
            int decile,
            int minLengthBytes,
            int maxLengthBytes,
            int count,
            double rttP50Us,
            double rttP99Us,
            double rttP999Us,
            double slowdownP50,
            double slowdownP99) {}

    /**
     * Computes the table.
     *
     * @param rpcs the RPCs sorted by length ({@link RpcLog#sortedByLength()})
     * @param unloaded the unloaded RTT per length, for slowdown
     * @return up to ten rows, one per non-empty group (fewer than ten RPCs leave some groups empty),
     *     in order of length
     */
    public static List<Row> compute(RpcLog.Sorted rpcs, UnloadedRtt unloaded) {
        List<Row> rows = new ArrayList<>(10);
        long n = rpcs.size();
        int[] lengthsBytes = rpcs.lengthsBytes();
        long[] rttsNs = rpcs.rttsNs();
        for (int decile = 0; decile < 10; decile++) {
            int from = (int) (decile * n / 10);
            int to = (int) ((decile + 1) * n / 10);
            if (from == to) {
                continue;
            }
            Histogram rtt = new Histogram(SIGNIFICANT_DIGITS);
            DoubleHistogram slowdown = new DoubleHistogram(SIGNIFICANT_DIGITS);
            for (int i = from; i < to; i++) {
                rtt.recordValue(rttsNs[i]);
                slowdown.recordValue(unloaded.slowdown(lengthsBytes[i], rttsNs[i]));
            }
            rows.add(new Row(
                    decile + 1,
                    lengthsBytes[from],
                    lengthsBytes[to - 1],
                    to - from,
                    rtt.getValueAtPercentile(50) / 1000.0,
                    rtt.getValueAtPercentile(99) / 1000.0,
                    rtt.getValueAtPercentile(99.9) / 1000.0,
                    slowdown.getValueAtPercentile(50),
                    slowdown.getValueAtPercentile(99)));
        }
        return rows;
    }

    /** The rows as text: a header line, then one line per row, each ending with a newline. */
    public static String format(List<Row> rows) {
        StringBuilder text = new StringBuilder();
        text.append(String.format(Locale.ROOT, "%6s  %-19s %9s  %10s %10s %10s  %12s %12s%n",
                "Decile", "Length (bytes)", "RPCs", "RTT p50 µs", "p99 µs", "p99.9 µs", "Slowdown p50", "Slowdown p99"));
        for (Row row : rows) {
            text.append(String.format(Locale.ROOT, "%6d  %-19s %9d  %10.1f %10.1f %10.1f  %12.2f %12.2f%n",
                    row.decile(),
                    row.minLengthBytes() + ".." + row.maxLengthBytes(),
                    row.count(),
                    row.rttP50Us(),
                    row.rttP99Us(),
                    row.rttP999Us(),
                    row.slowdownP50(),
                    row.slowdownP99()));
        }
        return text.toString();
    }
}
