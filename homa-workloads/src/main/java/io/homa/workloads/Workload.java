package io.homa.workloads;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.random.RandomGenerator;

/**
 * One of Homa's five benchmark message-length distributions (SIGCOMM 2018, Figure 1; the tables of
 * Linux Homa's {@code util/dist.cc}), held once in this module as {@code io/homa/workloads/w1.csv}
 * ... {@code w5.csv} (see the {@code README.md} beside them for their sources).
 *
 * <p>Each CSV has the header {@code length_bytes,cumulative_fraction} and one point per line,
 * sorted by length: a point {@code (L, F)} means a fraction {@code F} of all messages (counted by
 * number, not by bytes) is at most {@code L} bytes long; the last point has {@code F = 1}. The
 * distribution is discrete: {@link #sample(double)} returns the first {@code L} whose
 * {@code F >= u}. Lengths above a cap (default {@value #DEFAULT_CAP_BYTES} bytes, the largest
 * message the benchmarks send) are cut to the cap, and the points at the cap merge into one.
 *
 * <p>Immutable and thread-safe.
 */
public final class Workload {
    /** The cap {@link #load(String)} applies: the benchmarks' largest message, in bytes. */
    public static final int DEFAULT_CAP_BYTES = 1_000_000;

    /** The workloads there are, lower case. */
    public static final List<String> NAMES = List.of("w1", "w2", "w3", "w4", "w5");

    static final String HEADER = "length_bytes,cumulative_fraction";
    private static final double LAST_FRACTION_TOLERANCE = 1e-9;

    private final String name;
    private final int[] lengthsBytes;
    private final double[] cumulativeFractions;
    private final int sourcePointCount;

    private Workload(String name, int[] lengthsBytes, double[] cumulativeFractions, int sourcePointCount) {
        this.name = name;
        this.lengthsBytes = lengthsBytes;
        this.cumulativeFractions = cumulativeFractions;
        this.sourcePointCount = sourcePointCount;
    }

    /**
     * A workload capped at {@value #DEFAULT_CAP_BYTES} bytes.
     *
     * @param name w1..w5, any case
     * @throws IllegalArgumentException naming the workloads there are, for another name
     */
    public static Workload load(String name) {
        return load(name, DEFAULT_CAP_BYTES);
    }

    /**
     * A workload with its lengths capped at {@code capBytes}.
     *
     * @param name w1..w5, any case
     * @param capBytes the largest length sampled, at least 1
     * @throws IllegalArgumentException for an unknown name or a cap below 1
     */
    public static Workload load(String name, int capBytes) {
        String key = checkName(name);
        String resource = key + ".csv";
        InputStream in = Workload.class.getResourceAsStream(resource);
        if (in == null) {
            throw new IllegalStateException("class path resource io/homa/workloads/" + resource + " is missing");
        }
        try (Reader reader = new InputStreamReader(in, StandardCharsets.UTF_8)) {
            return parse(key, reader, capBytes);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read io/homa/workloads/" + resource, e);
        }
    }

    /**
     * The workload name in lower case.
     *
     * @throws IllegalArgumentException "workload must be one of w1, w2, w3, w4, w5, was 'NAME'"
     */
    public static String checkName(String name) {
        String key = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
        if (!NAMES.contains(key)) {
            throw new IllegalArgumentException("workload must be one of " + String.join(", ", NAMES)
                    + ", was '" + name + "'");
        }
        return key;
    }

    /**
     * Parses a CSV as described above.
     *
     * @throws IllegalStateException naming the line of a malformed CSV (bad header, fields, lengths
     *     not increasing, fractions outside (0, 1] or decreasing, last fraction not 1)
     */
    public static Workload parse(String name, Reader reader, int capBytes) throws IOException {
        if (capBytes < 1) {
            throw new IllegalArgumentException("capBytes must be >= 1, was " + capBytes);
        }
        BufferedReader lines = new BufferedReader(reader);
        String header = lines.readLine();
        if (header == null || !header.trim().equals(HEADER)) {
            throw new IllegalStateException(name + ": line 1 must be '" + HEADER + "', was '" + header + "'");
        }
        int[] lengths = new int[64];
        double[] fractions = new double[64];
        int count = 0;
        int sourcePoints = 0;
        long previousLength = 0;
        double previousFraction = 0;
        int lineNumber = 1;
        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
            lineNumber++;
            if (line.isBlank()) {
                continue;
            }
            String[] fields = line.split(",", -1);
            if (fields.length != 2) {
                throw new IllegalStateException(name + ": line " + lineNumber + " must have 2 fields, was '" + line + "'");
            }
            long length;
            double fraction;
            try {
                length = Long.parseLong(fields[0].trim());
                fraction = Double.parseDouble(fields[1].trim());
            } catch (NumberFormatException e) {
                throw new IllegalStateException(name + ": line " + lineNumber + " is not numeric: '" + line + "'", e);
            }
            if (length <= previousLength) {
                throw new IllegalStateException(name + ": line " + lineNumber
                        + ": lengths must be positive and strictly increasing, got " + length + " after " + previousLength);
            }
            if (!(fraction > 0 && fraction <= 1 + LAST_FRACTION_TOLERANCE) || fraction < previousFraction) {
                throw new IllegalStateException(name + ": line " + lineNumber
                        + ": cumulative fractions must be in (0, 1] and non-decreasing, got " + fraction
                        + " after " + previousFraction);
            }
            previousLength = length;
            previousFraction = fraction;
            sourcePoints++;
            int capped = (int) Math.min(length, capBytes);
            if (count > 0 && lengths[count - 1] == capped) {
                fractions[count - 1] = fraction; // merge into the point at the cap
                continue;
            }
            if (count == lengths.length) {
                lengths = Arrays.copyOf(lengths, count * 2);
                fractions = Arrays.copyOf(fractions, count * 2);
            }
            lengths[count] = capped;
            fractions[count] = fraction;
            count++;
        }
        if (count == 0) {
            throw new IllegalStateException(name + ": no points after the header");
        }
        if (Math.abs(fractions[count - 1] - 1.0) > LAST_FRACTION_TOLERANCE) {
            throw new IllegalStateException(name + ": the last cumulative fraction must be 1, was " + fractions[count - 1]);
        }
        fractions[count - 1] = 1.0;
        return new Workload(name, Arrays.copyOf(lengths, count), Arrays.copyOf(fractions, count), sourcePoints);
    }

    /** The workload's name, lower case (w1..w5), or the name given to {@link #parse}. */
    public String name() {
        return name;
    }

    /**
     * The length in bytes at cumulative fraction {@code u}: the first point whose fraction is at
     * least {@code u}.
     *
     * @param u in [0, 1]
     * @throws IllegalArgumentException for {@code u} outside [0, 1] (or NaN)
     */
    public int sample(double u) {
        if (!(u >= 0 && u <= 1)) {
            throw new IllegalArgumentException("u must be in [0, 1], was " + u);
        }
        int low = 0;
        int high = cumulativeFractions.length - 1; // the last fraction is 1 >= u
        while (low < high) {
            int mid = (low + high) >>> 1;
            if (cumulativeFractions[mid] >= u) {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        return lengthsBytes[low];
    }

    /** A length in bytes drawn with {@code random.nextDouble()}. */
    public int sample(RandomGenerator random) {
        return sample(random.nextDouble());
    }

    /** The length in bytes at quantile {@code q} (the same as {@link #sample(double)}). */
    public int quantileBytes(double q) {
        return sample(q);
    }

    /** Points after capping (points at the cap merged into one). */
    public int pointCount() {
        return lengthsBytes.length;
    }

    /** Points in the CSV. */
    public int sourcePointCount() {
        return sourcePointCount;
    }

    /** The length in bytes of point {@code index}, 0..{@link #pointCount()}-1. */
    public int lengthBytes(int index) {
        return lengthsBytes[index];
    }

    /** The cumulative fraction of point {@code index}. */
    public double cumulativeFraction(int index) {
        return cumulativeFractions[index];
    }

    public int minLengthBytes() {
        return lengthsBytes[0];
    }

    public int maxLengthBytes() {
        return lengthsBytes[lengthsBytes.length - 1];
    }

    /** The mean length in bytes, after capping. */
    public double meanLengthBytes() {
        double mean = 0;
        double previous = 0;
        for (int i = 0; i < lengthsBytes.length; i++) {
            mean += (cumulativeFractions[i] - previous) * lengthsBytes[i];
            previous = cumulativeFractions[i];
        }
        return mean;
    }

    @Override
    public String toString() {
        return "Workload{" + name + ", " + pointCount() + " points, " + minLengthBytes() + ".." + maxLengthBytes() + " B}";
    }
}
