package io.homa.workloads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** The one parser and sampler of the W1-W5 workloads, against the CSVs it carries. */
class WorkloadTest {

    @ParameterizedTest
    @CsvSource({
        // name, points in the file, smallest, median, largest after the 1,000,000-byte cap, mean (README) or -1
        "w1, 300, 8, 27, 100000, 189",
        "w2, 152, 8, 269, 1000000, -1",
        "w3, 842, 8, 268, 1000000, -1",
        "w4, 460, 53, 662, 1000000, -1",
        "w5, 400, 1430, 72030, 1000000, -1",
    })
    void shouldParseAllFiveWorkloads(String name, int sourcePoints, int min, int median, int max, int mean) {
        Workload distribution = Workload.load(name);

        assertThat(distribution.name()).isEqualTo(name);
        assertThat(distribution.sourcePointCount()).isEqualTo(sourcePoints);
        assertThat(distribution.minLengthBytes()).isEqualTo(min);
        assertThat(distribution.quantileBytes(0.5)).isEqualTo(median);
        assertThat(distribution.maxLengthBytes()).isEqualTo(max);
        assertThat(distribution.cumulativeFraction(distribution.pointCount() - 1)).isEqualTo(1.0);
        if (mean > 0) {
            assertThat(distribution.meanLengthBytes()).isBetween(mean - 1.0, mean + 1.0);
        }
    }

    @Test
    void shouldMergeTheTailAboveTheCapIntoOnePoint() {
        Workload w5 = Workload.load("W5");
        int lastBelowCap = w5.pointCount() - 2;

        assertThat(w5.pointCount()).isLessThan(w5.sourcePointCount());
        assertThat(w5.lengthBytes(lastBelowCap)).isLessThan(Workload.DEFAULT_CAP_BYTES);
        assertThat(w5.lengthBytes(lastBelowCap + 1)).isEqualTo(Workload.DEFAULT_CAP_BYTES);
    }

    @Test
    void shouldApplyTheCapWhenSampling() {
        Workload w5 = Workload.load("w5");
        double expectedAtCap = 1 - w5.cumulativeFraction(w5.pointCount() - 2);
        SplittableRandom random = new SplittableRandom(42);
        int draws = 100_000;
        int atCap = 0;
        int max = 0;
        for (int i = 0; i < draws; i++) {
            int length = w5.sample(random);
            max = Math.max(max, length);
            if (length == Workload.DEFAULT_CAP_BYTES) {
                atCap++;
            }
        }

        assertThat(max).isEqualTo(Workload.DEFAULT_CAP_BYTES);
        assertThat(expectedAtCap).isGreaterThan(0.01);
        assertThat((double) atCap / draws).isCloseTo(expectedAtCap, org.assertj.core.data.Offset.offset(0.005));
    }

    @ParameterizedTest
    @ValueSource(strings = {"w1", "w2", "w3", "w4", "w5"})
    void shouldDrawLengthsWhoseEmpiricalCdfMatchesTheFile(String name) {
        Workload distribution = Workload.load(name);
        SplittableRandom random = new SplittableRandom(7);
        int draws = 200_000;
        int[] samples = new int[draws];
        for (int i = 0; i < draws; i++) {
            samples[i] = distribution.sample(random);
        }
        java.util.Arrays.sort(samples);

        // Kolmogorov-Smirnov distance over the file's points: 1.63/sqrt(n) is the 1% critical value.
        double maxDistance = 0;
        int below = 0;
        for (int p = 0; p < distribution.pointCount(); p++) {
            while (below < draws && samples[below] <= distribution.lengthBytes(p)) {
                below++;
            }
            maxDistance = Math.max(maxDistance, Math.abs((double) below / draws - distribution.cumulativeFraction(p)));
        }
        assertThat(maxDistance).isLessThan(1.63 / Math.sqrt(draws));
        // Every sample is one of the file's lengths.
        for (int i = 0; i < draws; i += 997) {
            assertThat(indexOf(distribution, samples[i])).isNotNegative();
        }
    }

    @Test
    void shouldReturnTheFirstLengthWhoseFractionIsAtLeastU() throws Exception {
        Workload distribution = Workload.parse("t",
                new StringReader("length_bytes,cumulative_fraction\n10,0.25\n20,0.5\n30,0.5\n40,1\n"), 1_000_000);

        assertThat(distribution.sample(0.0)).isEqualTo(10);
        assertThat(distribution.sample(0.25)).isEqualTo(10);
        assertThat(distribution.sample(0.2500001)).isEqualTo(20);
        assertThat(distribution.sample(0.5)).isEqualTo(20);
        assertThat(distribution.sample(0.5000001)).isEqualTo(40);
        assertThat(distribution.sample(0.999999)).isEqualTo(40);
        assertThatThrownBy(() -> distribution.sample(1.5)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldCapLengthsAndMergePointsAtTheCap() throws Exception {
        Workload distribution = Workload.parse("t",
                new StringReader("length_bytes,cumulative_fraction\n10,0.5\n100,0.6\n200,0.9\n300,1\n"), 100);

        assertThat(distribution.pointCount()).isEqualTo(2);
        assertThat(distribution.sourcePointCount()).isEqualTo(4);
        assertThat(distribution.sample(0.55)).isEqualTo(100);
        assertThat(distribution.sample(0.95)).isEqualTo(100);
        assertThat(distribution.meanLengthBytes()).isCloseTo(0.5 * 10 + 0.5 * 100, org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void shouldRejectMalformedFilesNamingTheLine() {
        assertThatThrownBy(() -> parse("length,fraction\n10,1\n"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("line 1");
        assertThatThrownBy(() -> parse("length_bytes,cumulative_fraction\n10,0.5\n10,1\n"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("line 3").hasMessageContaining("increasing");
        assertThatThrownBy(() -> parse("length_bytes,cumulative_fraction\n10,0.5\n20,0.4\n30,1\n"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("line 3").hasMessageContaining("non-decreasing");
        assertThatThrownBy(() -> parse("length_bytes,cumulative_fraction\n10,0.5\n20,0.9\n"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("last cumulative fraction must be 1");
        assertThatThrownBy(() -> parse("length_bytes,cumulative_fraction\n10,abc\n"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("line 2");
        assertThatThrownBy(() -> parse("length_bytes,cumulative_fraction\n"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("no points");
    }

    @Test
    void shouldRejectUnknownWorkloadNames() {
        assertThatThrownBy(() -> Workload.load("w6"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("workload must be one of w1, w2, w3, w4, w5, was 'w6'");
    }

    /**
     * The sampler the modules used before this one (a linear scan for the first point whose
     * fraction reaches the draw, the length capped after): the same draws from the same seed.
     */
    @ParameterizedTest
    @ValueSource(strings = {"w1", "w2", "w3", "w4", "w5"})
    void shouldDrawExactlyWhatTheEarlierLinearSamplerDrew(String name) throws Exception {
        java.util.List<long[]> points = new java.util.ArrayList<>();
        try (java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(
                Workload.class.getResourceAsStream(name + ".csv"), java.nio.charset.StandardCharsets.UTF_8))) {
            in.readLine();
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                String[] fields = line.split(",");
                points.add(new long[] {Long.parseLong(fields[0]), Double.doubleToLongBits(Double.parseDouble(fields[1]))});
            }
        }
        int capBytes = 50_000;
        Workload workload = Workload.load(name, capBytes);
        java.util.Random reference = new java.util.Random(11);
        java.util.Random random = new java.util.Random(11);
        for (int i = 0; i < 20_000; i++) {
            double u = reference.nextDouble();
            long length = points.get(points.size() - 1)[0];
            for (long[] point : points) {
                if (Double.longBitsToDouble(point[1]) >= u) {
                    length = point[0];
                    break;
                }
            }
            assertThat(workload.sample(random)).as("draw %d", i).isEqualTo((int) Math.min(length, capBytes));
        }
    }

    private static Workload parse(String text) throws Exception {
        return Workload.parse("t", new StringReader(text), 1_000_000);
    }

    private static int indexOf(Workload distribution, int length) {
        for (int i = 0; i < distribution.pointCount(); i++) {
            if (distribution.lengthBytes(i) == length) {
                return i;
            }
        }
        return -1;
    }
}
