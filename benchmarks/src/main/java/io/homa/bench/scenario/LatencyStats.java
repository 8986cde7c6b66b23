package io.homa.bench.scenario;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;

/** Percentiles of a latency histogram recorded in nanoseconds, reported in microseconds. */
public final class LatencyStats {
    /** Highest latency a histogram tracks: 120 s. */
    public static final long HIGHEST_NS = 120_000_000_000L;
    /** Percentiles written as the distribution for charts. */
    static final double[] DISTRIBUTION_PERCENTILES = {0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 97, 98, 99, 99.5, 99.7,
            99.8, 99.9, 99.95, 99.99, 100};

    private LatencyStats() {}

    /** A new histogram for nanosecond latencies, 3 significant digits. */
    public static Histogram newHistogram() {
        return new Histogram(1, HIGHEST_NS, 3);
    }

    /** Records {@code ns}, clamped to the histogram's range. */
    public static void record(Histogram histogram, long ns) {
        histogram.recordValue(Math.max(1, Math.min(ns, HIGHEST_NS)));
    }

    static double us(double ns) {
        return Math.round(ns / 100.0) / 10.0;
    }

    /** {@code value} rounded to two decimals, as ratios and milliseconds are reported. */
    static double round2(double value) {
        return Math.round(value * 100) / 100.0;
    }

    /** count, mean, p50, p90, p99, p99.9, max (µs) under the given prefix. */
    public static Map<String, Object> summary(Histogram histogram, String prefix) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put(prefix + "count", histogram.getTotalCount());
        if (histogram.getTotalCount() == 0) {
            return out;
        }
        out.put(prefix + "mean_us", us(histogram.getMean()));
        out.put(prefix + "p50_us", us(histogram.getValueAtPercentile(50)));
        out.put(prefix + "p90_us", us(histogram.getValueAtPercentile(90)));
        out.put(prefix + "p99_us", us(histogram.getValueAtPercentile(99)));
        out.put(prefix + "p99.9_us", us(histogram.getValueAtPercentile(99.9)));
        out.put(prefix + "max_us", us(histogram.getMaxValue()));
        return out;
    }

    /** The distribution as a list of {@code [percentile, µs]} pairs. */
    public static List<double[]> distribution(Histogram histogram) {
        List<double[]> points = new ArrayList<>();
        if (histogram.getTotalCount() == 0) {
            return points;
        }
        for (double p : DISTRIBUTION_PERCENTILES) {
            points.add(new double[] {p, us(histogram.getValueAtPercentile(p))});
        }
        return points;
    }

    /** The {@code percentile} of an array (sorted in place), nearest rank; NaN when empty. */
    public static double percentile(double[] values, int count, double percentile) {
        if (count == 0) {
            return Double.NaN;
        }
        java.util.Arrays.sort(values, 0, count);
        int rank = (int) Math.ceil(percentile / 100.0 * count);
        return values[Math.max(0, Math.min(count - 1, rank - 1))];
    }
}
