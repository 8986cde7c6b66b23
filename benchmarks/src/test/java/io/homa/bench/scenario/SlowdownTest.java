package io.homa.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.homa.bench.cpu.CpuSampler;
import io.homa.bench.report.ScenarioResult;
import io.homa.bench.systems.SystemKind;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SlowdownTest {
    private static Map<Integer, Double> calibration(double smallNs, double largeNs) {
        Map<Integer, Double> map = new LinkedHashMap<>();
        map.put(100, smallNs);
        map.put(1_000_000, largeNs);
        return map;
    }

    @Test
    void shouldTakeTheBestSystemPerLengthAndInterpolateLogLog() {
        ScenarioRunner.S5Raw a = new ScenarioRunner.S5Raw(SystemKind.HOMA, calibration(10_000, 10_000_000), Map.of());
        ScenarioRunner.S5Raw b = new ScenarioRunner.S5Raw(SystemKind.GRPC, calibration(20_000, 1_000_000), Map.of());

        double[][] baseline = S5Slowdowns.baseline(List.of(a, b));

        assertThat(S5Slowdowns.baselineNs(baseline, 50)).isEqualTo(10_000);
        assertThat(S5Slowdowns.baselineNs(baseline, 100)).isEqualTo(10_000);
        assertThat(S5Slowdowns.baselineNs(baseline, 1_000_000)).isEqualTo(1_000_000);
        assertThat(S5Slowdowns.baselineNs(baseline, 5_000_000)).isEqualTo(1_000_000);
        // halfway in log(length) between 100 and 1e6 is 1e4; halfway in log(time) between 1e4 and 1e6 is 1e5
        assertThat(S5Slowdowns.baselineNs(baseline, 10_000)).isCloseTo(100_000, within(1.0));
    }

    @Test
    void shouldSplitCallsIntoDecilesByLengthWithSlowdownsAgainstTheBaseline() {
        int n = 100;
        int[] lengths = new int[n];
        long[] rtt = new long[n];
        for (int i = 0; i < n; i++) {
            lengths[i] = n - i; // recorded longest first: deciles must sort by length
            rtt[i] = 2 * 10_000L; // twice the baseline for every call
        }
        OpenLoop.Result result = new OpenLoop.Result(lengths, rtt, n, n, 0, 0, 1.0, null);
        ScenarioRunner.S5Raw raw = new ScenarioRunner.S5Raw(SystemKind.HOMA, calibration(10_000, 10_000),
                Map.of("w1", new ScenarioRunner.S5Workload(200, 100, result)));

        ScenarioResult s5 = S5Slowdowns.results(List.of(raw), 0.5).get(0);

        assertThat(s5.status()).isEqualTo(ScenarioResult.OK);
        Map<?, ?> w1 = (Map<?, ?>) ((Map<?, ?>) s5.metrics().get("workloads")).get("w1");
        List<?> deciles = (List<?>) w1.get("deciles");
        assertThat(deciles).hasSize(10);
        Map<?, ?> first = (Map<?, ?>) deciles.get(0);
        Map<?, ?> last = (Map<?, ?>) deciles.get(9);
        assertThat(first.get("min_bytes")).isEqualTo(1);
        assertThat(first.get("max_bytes")).isEqualTo(10);
        assertThat(last.get("min_bytes")).isEqualTo(91);
        assertThat(last.get("calls")).isEqualTo(10);
        assertThat(first.get("p99_slowdown")).isEqualTo(2.0);
        assertThat(w1.get("p99_slowdown_shortest_half")).isEqualTo(2.0);
        assertThat(w1.get("p50_us")).isEqualTo(20.0);
    }

    @Test
    void shouldFailS5WhenNoCallCompleted() {
        OpenLoop.Result empty = new OpenLoop.Result(new int[0], new long[0], 0, 10, 10, 0, 1.0, "boom");
        ScenarioRunner.S5Raw raw = new ScenarioRunner.S5Raw(SystemKind.GRPC, calibration(1, 1),
                Map.of("w2", new ScenarioRunner.S5Workload(1, 1, empty)));

        ScenarioResult s5 = S5Slowdowns.results(List.of(raw), 0.5).get(0);

        assertThat(s5.status()).isEqualTo(ScenarioResult.FAILED);
        assertThat(s5.note()).contains("boom");
    }

    @Test
    void shouldReportTheWindowTheCpuAndTooFewCallsForMinCalls() {
        OpenLoop.Result result = new OpenLoop.Result(new int[] {100, 200}, new long[] {20_000, 20_000}, 2, 2, 0, 0, 12.5, null);
        CpuSampler.Usage cpu = new CpuSampler.Usage(12.5,
                List.of(new CpuSampler.ProcessUsage("client", 7, false, 10, 0.8)),
                List.of(new CpuSampler.CoreUsage(0, 0.93), new CpuSampler.CoreUsage(1, 0.41)));
        ScenarioRunner.S5Raw raw = new ScenarioRunner.S5Raw(SystemKind.HOMA, calibration(10_000, 10_000),
                Map.of("w1", new ScenarioRunner.S5Workload(200, 100, result, 1_000, cpu)));

        ScenarioResult s5 = S5Slowdowns.results(List.of(raw), 0.5).get(0);

        Map<?, ?> w1 = (Map<?, ?>) ((Map<?, ?>) s5.metrics().get("workloads")).get("w1");
        assertThat(w1.get("measure_ms")).isEqualTo(12_500L);
        assertThat(w1.get("min_calls")).isEqualTo(1_000);
        Map<?, ?> cpuMetrics = (Map<?, ?>) w1.get("cpu");
        assertThat(cpuMetrics.get("cores")).isEqualTo(List.of(0.93, 0.41));
        assertThat(cpuMetrics.get("cpu_bound")).isEqualTo(true);
        assertThat(s5.status()).isEqualTo(ScenarioResult.OK);
        assertThat(s5.note()).contains("w1: 2 calls recorded, fewer than --s5-min-calls=1000");
    }
}
