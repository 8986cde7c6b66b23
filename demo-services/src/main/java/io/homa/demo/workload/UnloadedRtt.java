package io.homa.demo.workload;

import io.homa.workloads.Workload;
import java.util.Arrays;
import java.util.Locale;
import java.util.TreeSet;

/**
 * Round-trip time of an RPC on an idle system, as a function of its length: the baseline for
 * slowdown (Homa paper: slowdown = RTT under load / RTT of a message of the same length on an
 * otherwise idle network). Built from a few measured probe lengths; between two probes the RTT is
 * interpolated linearly, below the smallest probe the smallest probe's RTT is used, above the
 * largest the largest's.
 *
 * <p>Immutable and thread-safe.
 */
public final class UnloadedRtt {
    private final int[] lengthsBytes;
    private final long[] rttNs;

    /**
     * @param lengthsBytes probe lengths, strictly increasing, at least one
     * @param rttNs the unloaded RTT of each probe length in ns, each > 0
     */
    public UnloadedRtt(int[] lengthsBytes, long[] rttNs) {
        if (lengthsBytes.length == 0 || lengthsBytes.length != rttNs.length) {
            throw new IllegalArgumentException("need one RTT per probe length and at least one probe, got "
                    + lengthsBytes.length + " lengths and " + rttNs.length + " RTTs");
        }
        for (int i = 0; i < lengthsBytes.length; i++) {
            if (i > 0 && lengthsBytes[i] <= lengthsBytes[i - 1]) {
                throw new IllegalArgumentException("probe lengths must be strictly increasing: " + Arrays.toString(lengthsBytes));
            }
            if (rttNs[i] <= 0) {
                throw new IllegalArgumentException("probe RTTs must be > 0 ns: " + Arrays.toString(rttNs));
            }
        }
        this.lengthsBytes = lengthsBytes.clone();
        this.rttNs = rttNs.clone();
    }

    /**
     * The probe lengths for a distribution: its smallest length and its deciles (the 0.1, 0.2 ...
     * 1.0 quantiles), without duplicates, ascending.
     */
    public static int[] probeLengths(Workload distribution) {
        TreeSet<Integer> lengths = new TreeSet<>();
        lengths.add(distribution.minLengthBytes());
        for (int decile = 1; decile <= 10; decile++) {
            lengths.add(distribution.quantileBytes(decile / 10.0));
        }
        return lengths.stream().mapToInt(Integer::intValue).toArray();
    }

    /** The unloaded RTT in ns for a message of {@code lengthBytes}, interpolated between probes. */
    public double rttNs(int lengthBytes) {
        int index = Arrays.binarySearch(lengthsBytes, lengthBytes);
        if (index >= 0) {
            return rttNs[index];
        }
        int above = -index - 1;
        if (above == 0) {
            return rttNs[0];
        }
        if (above == lengthsBytes.length) {
            return rttNs[lengthsBytes.length - 1];
        }
        int below = above - 1;
        double t = (double) (lengthBytes - lengthsBytes[below]) / (lengthsBytes[above] - lengthsBytes[below]);
        return rttNs[below] + t * (rttNs[above] - rttNs[below]);
    }

    /** Slowdown of an RPC: its RTT divided by the unloaded RTT of its length. */
    public double slowdown(int lengthBytes, long rttNs) {
        return rttNs / rttNs(lengthBytes);
    }

    /** Number of probes. */
    public int probeCount() {
        return lengthsBytes.length;
    }

    /** Length of probe {@code index}. */
    public int probeLengthBytes(int index) {
        return lengthsBytes[index];
    }

    /** Measured RTT of probe {@code index} in ns. */
    public long probeRttNs(int index) {
        return rttNs[index];
    }

    /** The probes as text, one line each ({@code length bytes  RTT µs}), each ending with a newline. */
    public String format() {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < lengthsBytes.length; i++) {
            text.append(String.format(Locale.ROOT, "  %,9d bytes  %10.1f µs%n", lengthsBytes[i], rttNs[i] / 1000.0));
        }
        return text.toString();
    }
}
