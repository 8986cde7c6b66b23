package io.homa.demo.workload;

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
 * One of the message-length distributions W1-W5 of the Homa paper (SIGCOMM 2018, Figure 1), read
 * from {@code workloads/<name>.csv} on the classpath (see {@code workloads/README.md} there).
 *
 * <p>The CSV is a discrete CDF: header {@code length_bytes,cumulative_fraction}, then points
 * {@code (L, F)} sorted by length, meaning a fraction {@code F} of messages (by count) is at most
 * {@code L} bytes long; the last {@code F} is 1. {@link #sample(double)} returns the first length
 * whose {@code F >= u}. Like Homa's {@code cp_node}, lengths above {@link #MAX_LENGTH_BYTES} are
 * capped to it (that merges the tail points of W2-W5 into one point at the cap); unlike
 * {@code cp_node}, neighbouring points are not merged otherwise, so the full-resolution table is
 * sampled.
 *
 * <p>Immutable and thread-safe; each caller brings its own random generator.
 */
public final class WorkloadDistribution {
    /** Cap on sampled lengths, as in Homa's {@code cp_node} (its maximum message size). */
    public static final int MAX_LENGTH_BYTES = 1_000_000;

    /** The workload names, lower case, in order. */
    public static final List<String> NAMES = List.of("w1", "w2", "w3", "w4", "w5");

    static final String HEADER = "length_bytes,cumulative_fraction";
    private static final double LAST_FRACTION_TOLERANCE = 1e-9;

    private final String name;
    private final int[] lengthsBytes;
    private final double[] cumulativeFractions;
    private final int sourcePointCount;

    private WorkloadDistribution(String name, int[] lengthsBytes, double[] cumulativeFractions, int sourcePointCount) {
        this.name = name;
        this.lengthsBytes = lengthsBytes;
        this.cumulativeFractions = cumulativeFractions;
        this.sourcePointCount = sourcePointCount;
    }

    /**
     * Loads a workload from the classpath, capped at {@link #MAX_LENGTH_BYTES}.
     *
     * @param name {@code w1} .. {@code w5}, case-insensitive
     * @throws IllegalArgumentException if the name is not one of {@link #NAMES}
     * @throws IllegalStateException if the resource is missing or malformed
     */
    public static WorkloadDistribution load(String name) {
        String key = checkName(name);
        String resource = "workloads/" + key + ".csv";
        InputStream in = WorkloadDistribution.class.getClassLoader().getResourceAsStream(resource);
        if (in == null) {
            throw new IllegalStateException("classpath resource " + resource + " is missing");
        }
        try (Reader reader = new InputStreamReader(in, StandardCharsets.UTF_8)) {
            return parse(key, reader, MAX_LENGTH_BYTES);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
    }

    /**
     * Checks a workload name.
     *
     * @return the name in lower case
     * @throws IllegalArgumentException naming {@code --workload} and the allowed values
     */
    public static String checkName(String name) {
        String key = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
        if (!NAMES.contains(key)) {
            throw new IllegalArgumentException("--workload must be one of " + String.join(", ", NAMES)
                    + ", was '" + name + "'");
        }
        return key;
    }

    /**
     * Parses a CDF in the CSV format described above.
     *
     * @param name name used in error messages and {@link #name()}
     * @param reader the CSV text
     * @param capBytes lengths above this are replaced by it, >= 1
     * @throws IllegalStateException naming the line when the text is malformed
     */
    static WorkloadDistribution parse(String name, Reader reader, int capBytes) throws IOException {
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
        return new WorkloadDistribution(name, Arrays.copyOf(lengths, count), Arrays.copyOf(fractions, count), sourcePoints);
    }

    /** The workload's name, e.g. {@code w3}. */
    public String name() {
        return name;
    }

    /**
     * The length for a uniform draw: the first length whose cumulative fraction is {@code >= u}.
     *
     * @param u in [0, 1]
     * @return a length in bytes, 1..{@link #MAX_LENGTH_BYTES} (or the parse cap)
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

    /** Draws one length with {@code random.nextDouble()} (uniform in [0, 1)). */
    public int sample(RandomGenerator random) {
        return sample(random.nextDouble());
    }

    /** The {@code q}-quantile of message lengths (same rule as {@link #sample(double)}), q in [0, 1]. */
    public int quantileBytes(double q) {
        return sample(q);
    }

    /** Number of points after capping. */
    public int pointCount() {
        return lengthsBytes.length;
    }

    /** Number of points in the CSV file, before capping merged the tail. */
    public int sourcePointCount() {
        return sourcePointCount;
    }

    /** Length of point {@code index} in bytes, 0 <= index < {@link #pointCount()}. */
    public int lengthBytes(int index) {
        return lengthsBytes[index];
    }

    /** Cumulative fraction of point {@code index}. */
    public double cumulativeFraction(int index) {
        return cumulativeFractions[index];
    }

    /** Smallest length in bytes. */
    public int minLengthBytes() {
        return lengthsBytes[0];
    }

    /** Largest length in bytes (after capping). */
    public int maxLengthBytes() {
        return lengthsBytes[lengthsBytes.length - 1];
    }

    /** Expected message length in bytes (after capping). */
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
        return "WorkloadDistribution{" + name + ", " + pointCount() + " points, " + minLengthBytes() + ".."
                + maxLengthBytes() + " B}";
    }
}
