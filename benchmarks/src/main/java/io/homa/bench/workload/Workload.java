package io.homa.bench.workload;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.random.RandomGenerator;

/**
 * A message-length distribution W1-W5 (Homa paper, Figure 1) read from
 * {@code workloads/wN.csv} on the class path: header {@code length_bytes,cumulative_fraction},
 * then points {@code (L, F)} with strictly increasing {@code L} and non-decreasing {@code F}, the
 * last {@code F} = 1. A draw {@code u} in [0, 1) gives the first {@code L} with {@code F >= u};
 * lengths above the cap are replaced by the cap (as Homa's {@code cp_node} does at 1,000,000 B).
 * Immutable.
 */
public final class Workload {
    /** The benchmark's cap on message lengths, as in the issue and {@code cp_node}. */
    public static final int DEFAULT_CAP_BYTES = 1_000_000;
    /** The workload names, in order. */
    public static final List<String> NAMES = List.of("w1", "w2", "w3", "w4", "w5");
    static final String HEADER = "length_bytes,cumulative_fraction";

    private final String name;
    private final int[] lengthsBytes;
    private final double[] fractions;

    private Workload(String name, int[] lengthsBytes, double[] fractions) {
        this.name = name;
        this.lengthsBytes = lengthsBytes;
        this.fractions = fractions;
    }

    /**
     * Loads {@code workloads/<name>.csv} from the class path, capped at {@link #DEFAULT_CAP_BYTES}.
     *
     * @param name w1..w5, any case
     * @throws IllegalArgumentException if the name is not one of {@link #NAMES}
     * @throws IllegalStateException if the resource is missing or malformed
     */
    public static Workload load(String name) {
        String key = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
        if (!NAMES.contains(key)) {
            throw new IllegalArgumentException("--workloads: unknown workload '" + name + "'; allowed: " + NAMES);
        }
        String resource = "workloads/" + key + ".csv";
        InputStream in = Workload.class.getClassLoader().getResourceAsStream(resource);
        if (in == null) {
            throw new IllegalStateException("class path resource " + resource + " is missing");
        }
        try (Reader reader = new InputStreamReader(in, StandardCharsets.UTF_8)) {
            return parse(key, reader, DEFAULT_CAP_BYTES);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
    }

    /**
     * Parses the CSV format above.
     *
     * @param capBytes lengths above it become it, >= 1
     * @throws IllegalStateException naming the workload and line when the text is malformed
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
        List<int[]> lengths = new ArrayList<>();
        List<Double> cumulative = new ArrayList<>();
        long lastLength = 0;
        double lastFraction = 0;
        int lineNumber = 1;
        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
            lineNumber++;
            if (line.isBlank()) {
                continue;
            }
            String[] fields = line.split(",");
            if (fields.length != 2) {
                throw new IllegalStateException(name + ": line " + lineNumber + ": expected 2 fields, got '" + line + "'");
            }
            long length;
            double fraction;
            try {
                length = Long.parseLong(fields[0].trim());
                fraction = Double.parseDouble(fields[1].trim());
            } catch (NumberFormatException e) {
                throw new IllegalStateException(name + ": line " + lineNumber + ": not numeric: '" + line + "'", e);
            }
            if (length <= lastLength) {
                throw new IllegalStateException(name + ": line " + lineNumber + ": lengths must be positive and increasing, "
                        + length + " after " + lastLength);
            }
            if (fraction < lastFraction || fraction <= 0 || fraction > 1 + 1e-9) {
                throw new IllegalStateException(name + ": line " + lineNumber
                        + ": cumulative fraction must be in (0, 1] and non-decreasing, was " + fraction);
            }
            lastLength = length;
            lastFraction = fraction;
            int capped = (int) Math.min(length, capBytes);
            if (!lengths.isEmpty() && lengths.get(lengths.size() - 1)[0] == capped) {
                cumulative.set(cumulative.size() - 1, fraction);
            } else {
                lengths.add(new int[] {capped});
                cumulative.add(fraction);
            }
        }
        if (lengths.isEmpty()) {
            throw new IllegalStateException(name + ": no points after the header");
        }
        if (Math.abs(lastFraction - 1) > 1e-9) {
            throw new IllegalStateException(name + ": the last cumulative fraction must be 1, was " + lastFraction);
        }
        int[] l = new int[lengths.size()];
        double[] f = new double[lengths.size()];
        for (int i = 0; i < l.length; i++) {
            l[i] = lengths.get(i)[0];
            f[i] = cumulative.get(i);
        }
        f[f.length - 1] = 1.0;
        return new Workload(name, l, f);
    }

    public String name() {
        return name;
    }

    /**
     * The length for a draw {@code u}: the first length whose cumulative fraction is {@code >= u}.
     *
     * @param u in [0, 1]
     */
    public int lengthFor(double u) {
        if (!(u >= 0 && u <= 1)) {
            throw new IllegalArgumentException("u must be in [0, 1], was " + u);
        }
        int low = 0;
        int high = fractions.length - 1;
        while (low < high) {
            int mid = (low + high) >>> 1;
            if (fractions[mid] >= u) {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        return lengthsBytes[low];
    }

    /** One random length. */
    public int sample(RandomGenerator random) {
        return lengthFor(random.nextDouble());
    }

    /** Number of distinct lengths after capping. */
    public int points() {
        return lengthsBytes.length;
    }

    public int minLengthBytes() {
        return lengthsBytes[0];
    }

    public int maxLengthBytes() {
        return lengthsBytes[lengthsBytes.length - 1];
    }

    /** Mean length in bytes after capping. */
    public double meanLengthBytes() {
        double mean = 0;
        double previous = 0;
        for (int i = 0; i < lengthsBytes.length; i++) {
            mean += (fractions[i] - previous) * lengthsBytes[i];
            previous = fractions[i];
        }
        return mean;
    }
}
