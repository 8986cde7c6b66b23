package io.homa.demo.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.data.Offset.offset;

import io.homa.workloads.Workload;
import org.junit.jupiter.api.Test;

class UnloadedRttTest {

    private final UnloadedRtt unloaded = new UnloadedRtt(new int[] {100, 1000, 10_000}, new long[] {10_000, 20_000, 110_000});

    @Test
    void shouldInterpolateLinearlyBetweenProbes() {
        assertThat(unloaded.rttNs(100)).isEqualTo(10_000.0);
        assertThat(unloaded.rttNs(550)).isCloseTo(15_000.0, offset(1e-6));
        assertThat(unloaded.rttNs(1000)).isEqualTo(20_000.0);
        assertThat(unloaded.rttNs(5500)).isCloseTo(65_000.0, offset(1e-6));
    }

    @Test
    void shouldUseTheNearestProbeOutsideTheProbedRange() {
        assertThat(unloaded.rttNs(1)).isEqualTo(10_000.0);
        assertThat(unloaded.rttNs(1_000_000)).isEqualTo(110_000.0);
    }

    @Test
    void shouldDivideTheRttByTheUnloadedRttOfTheSameLength() {
        assertThat(unloaded.slowdown(550, 45_000)).isCloseTo(3.0, offset(1e-9));
        assertThat(unloaded.slowdown(100, 5_000)).isCloseTo(0.5, offset(1e-9));
    }

    @Test
    void shouldProbeTheSmallestLengthAndTheDecilesOfTheDistribution() {
        Workload w3 = Workload.load("w3");

        int[] probes = UnloadedRtt.probeLengths(w3);

        assertThat(probes[0]).isEqualTo(w3.minLengthBytes());
        assertThat(probes[probes.length - 1]).isEqualTo(w3.maxLengthBytes());
        assertThat(probes).isSorted().doesNotHaveDuplicates().contains(w3.quantileBytes(0.5));
        assertThat(probes.length).isBetween(2, 11);
    }

    @Test
    void shouldRejectUnsortedProbesAndNonPositiveRtts() {
        assertThatThrownBy(() -> new UnloadedRtt(new int[] {10, 10}, new long[] {1, 2}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("strictly increasing");
        assertThatThrownBy(() -> new UnloadedRtt(new int[] {10}, new long[] {0}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("> 0");
        assertThatThrownBy(() -> new UnloadedRtt(new int[] {}, new long[] {}))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
