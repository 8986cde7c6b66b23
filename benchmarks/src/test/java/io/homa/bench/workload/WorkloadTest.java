package io.homa.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class WorkloadTest {
    private static Workload parse(String csv, int cap) throws Exception {
        return Workload.parse("t", new StringReader(csv), cap);
    }

    @Test
    void shouldReturnFirstLengthWhoseFractionReachesTheDraw() throws Exception {
        Workload w = parse("length_bytes,cumulative_fraction\n10,0.25\n20,0.5\n40,1\n", 1_000_000);

        assertThat(w.lengthFor(0)).isEqualTo(10);
        assertThat(w.lengthFor(0.25)).isEqualTo(10);
        assertThat(w.lengthFor(0.2500001)).isEqualTo(20);
        assertThat(w.lengthFor(0.75)).isEqualTo(40);
        assertThat(w.lengthFor(1)).isEqualTo(40);
        assertThat(w.meanLengthBytes()).isEqualTo(0.25 * 10 + 0.25 * 20 + 0.5 * 40);
    }

    @Test
    void shouldMergePointsAboveTheCapIntoOnePointAtTheCap() throws Exception {
        Workload w = parse("length_bytes,cumulative_fraction\n10,0.5\n200,0.75\n300,1\n", 100);

        assertThat(w.points()).isEqualTo(2);
        assertThat(w.maxLengthBytes()).isEqualTo(100);
        assertThat(w.lengthFor(0.6)).isEqualTo(100);
    }

    @Test
    void shouldRejectMalformedInputNamingTheLine() {
        assertThatThrownBy(() -> parse("length,fraction\n1,1\n", 10)).hasMessageContaining("line 1");
        assertThatThrownBy(() -> parse("length_bytes,cumulative_fraction\n10,0.5\n5,1\n", 100))
                .hasMessageContaining("line 3").hasMessageContaining("increasing");
        assertThatThrownBy(() -> parse("length_bytes,cumulative_fraction\n10,0.5\n", 100))
                .hasMessageContaining("last cumulative fraction must be 1");
        assertThatThrownBy(() -> Workload.load("w9")).hasMessageContaining("--workloads");
    }

    @Test
    void shouldLoadTheFiveWorkloadsFromTheClassPathCappedAtOneMillionBytes() {
        for (String name : Workload.NAMES) {
            Workload w = Workload.load(name);
            assertThat(w.maxLengthBytes()).isLessThanOrEqualTo(Workload.DEFAULT_CAP_BYTES);
            assertThat(w.minLengthBytes()).isGreaterThanOrEqualTo(8);
        }
        // W1 median is 27 B and its largest message 100,000 B (workloads/README.md); W5 is capped.
        assertThat(Workload.load("w1").lengthFor(0.5)).isEqualTo(27);
        assertThat(Workload.load("w1").maxLengthBytes()).isEqualTo(100_000);
        assertThat(Workload.load("w5").maxLengthBytes()).isEqualTo(1_000_000);
        SplittableRandom random = new SplittableRandom(1);
        Workload w3 = Workload.load("w3");
        for (int i = 0; i < 1000; i++) {
            assertThat(w3.sample(random)).isBetween(8, 1_000_000);
        }
    }
}
