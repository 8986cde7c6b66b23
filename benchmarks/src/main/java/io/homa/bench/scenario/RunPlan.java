package io.homa.bench.scenario;

import java.util.List;

/**
 * Durations and sizes of one run; {@link #quick()} and {@link #full()} are the two modes.
 *
 * @param warmupMs closed-loop warm-up of each system before its first scenario
 * @param scenarioWarmupMs load before each measurement window
 * @param s1MeasureMs S1 window
 * @param s2MeasureMs S2 window
 * @param s2LargeOutstanding 1 MiB echoes in flight during S2
 * @param s3MeasureMs S3 window
 * @param s4MeasureMs S4 window
 * @param s5CalibrationSamples unloaded echoes per calibration length in S5 (a tenth of it, at least
 *     3, for lengths of 100 KB and more)
 * @param s5MaxMs closed-loop window that measures a system's maximum rate on a workload
 * @param s5MaxOutstanding calls in flight for that maximum
 * @param s5LoadMs the Poisson window
 * @param s6Fanouts the values of N
 * @param s6Repetitions bursts per N
 * @param s6WarmupMs unmeasured bursts before S6's first measured one, at least this long (and at
 *     least {@code s6Repetitions} rounds of every N): S6 is the only scenario with a pattern no
 *     closed loop has (hundreds of calls at once, incast marking, RESENDs while servers queue), and
 *     the JIT compilers of the client and the servers take seconds of CPU to settle on it
 * @param callTimeoutMs a call not answered within it fails
 * @param s6TimeoutMs an incast call not answered within it fails
 * @param slices slices each closed-loop scenario's window (S1-S4) is measured in, the systems of a
 *     run taking turns slice by slice ({@link ScenarioRunner#interleave}), &gt;= 1
 */
public record RunPlan(
        String mode,
        long warmupMs,
        long scenarioWarmupMs,
        long s1MeasureMs,
        long s2MeasureMs,
        int s2LargeOutstanding,
        long s3MeasureMs,
        long s4MeasureMs,
        int s5CalibrationSamples,
        long s5MaxMs,
        int s5MaxOutstanding,
        long s5LoadMs,
        List<Integer> s6Fanouts,
        int s6Repetitions,
        long s6WarmupMs,
        long callTimeoutMs,
        long s6TimeoutMs,
        int slices) {

    public RunPlan {
        if (slices < 1) {
            throw new IllegalArgumentException("slices must be >= 1, was " + slices);
        }
    }

    /** This plan with S6's values of N replaced (each 1..10,000). */
    public RunPlan withS6Fanouts(List<Integer> fanouts) {
        if (fanouts.isEmpty() || fanouts.stream().anyMatch(n -> n < 1 || n > 10_000)) {
            throw new IllegalArgumentException("--s6-fanouts must be values of N between 1 and 10000, was " + fanouts);
        }
        return new RunPlan(mode, warmupMs, scenarioWarmupMs, s1MeasureMs, s2MeasureMs, s2LargeOutstanding, s3MeasureMs,
                s4MeasureMs, s5CalibrationSamples, s5MaxMs, s5MaxOutstanding, s5LoadMs, List.copyOf(fanouts),
                s6Repetitions, s6WarmupMs, callTimeoutMs, s6TimeoutMs, slices);
    }

    /** About two minutes for all scenarios and systems on a 2-core machine. */
    public static RunPlan quick() {
        return new RunPlan("quick", 2_500, 300, 1_500, 2_000, 2, 1_500, 1_500, 30, 400, 16, 800,
                List.of(10, 100, 1000), 2, 300, 10_000, 5_000, 1);
    }

    /** About 10-15 minutes. */
    public static RunPlan full() {
        return new RunPlan("full", 15_000, 1_000, 10_000, 15_000, 2, 10_000, 10_000, 200, 3_000, 16, 10_000,
                List.of(10, 50, 100, 200, 500, 1000), 11, 20_000, 10_000, 10_000, 5);
    }
}
