package io.homa.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.homa.bench.cpu.CpuSampler;
import io.homa.bench.systems.EchoClient;
import io.homa.bench.systems.EchoProtocol;
import io.homa.bench.systems.SystemKind;
import io.homa.workloads.Workload;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** S5's load phase: the window every load process gets, and the CPU sampled over it. */
class S5RunTest {
    private static final RunPlan PLAN = new RunPlan("test", 100, 20, 100, 100, 1, 100, 100, 3, 100, 4, 200,
            List.of(4), 1, 100, 5_000, 5_000, 1);
    private static final List<CpuSampler.Target> SELF =
            List.of(new CpuSampler.Target("client", ProcessHandle.current().pid()));

    /** Answers every call with its echo, on another thread (a closed loop calls again from the completing one). */
    private static final class Echo implements EchoClient {
        @Override
        public CompletableFuture<byte[]> call(int target, byte[] request) {
            return CompletableFuture.supplyAsync(() -> EchoProtocol.respond(request));
        }

        @Override
        public int targets() {
            return 1;
        }

        @Override
        public void close() {}
    }

    private static ScenarioRunner runner() {
        return new ScenarioRunner(PLAN, Map.of(SystemKind.HOMA, new Echo()), 0.5, Map.of("w1", 1_000.0));
    }

    @Test
    void shouldGiveEveryLoadProcessTheWindowOfTheirMinCallsTogether() {
        List<Object> asked = new ArrayList<>();
        OpenLoop.Result none = new OpenLoop.Result(new int[0], new long[0], 0, 0, 0, 0, 3.0, null);
        ScenarioRunner runner = runner().s5MinCalls(3_000).cpuSampled(SELF)
                .s5RemoteLoad(2, (system, workload, rate, measureMs, seed, cpuSampled) -> {
                    asked.addAll(List.of(workload, rate, measureMs, cpuSampled));
                    return new ScenarioRunner.RemoteLoad.Outcome(none, null);
                });

        ScenarioRunner.S5Raw raw = runner.s5(SystemKind.HOMA, List.of(Workload.load("w1")));

        // 3,000 calls at 2 x 1,000/s in all: 1.5 s, rounded up to 2 s, plus the least margin of 1 s
        assertThat(asked).containsExactly("w1", 2_000.0, 3_000L, SELF);
        assertThat(raw.workloads().get("w1").minCalls()).isEqualTo(3_000);
    }

    @Test
    void shouldSampleTheCpuOverTheLocalWindow() {
        assumeThat(Files.exists(Path.of("/proc/self/stat"))).as("a Linux /proc").isTrue();

        long startNs = System.nanoTime();
        ScenarioRunner.S5Raw raw = runner().cpuSampled(SELF).s5(SystemKind.HOMA, List.of(Workload.load("w1")));
        double runSeconds = (System.nanoTime() - startNs) / 1e9;

        ScenarioRunner.S5Workload w1 = raw.workloads().get("w1");
        assertThat(w1.result().windowSeconds()).isEqualTo(0.2);
        assertThat(w1.cpu()).isNotNull();
        // the measured window only, not the whole run with its warm-up (no wall-clock bound: the
        // sampler's readings may come a little after the window opens on a busy machine)
        assertThat(w1.cpu().windowSeconds()).isPositive().isLessThan(runSeconds);
        assertThat(w1.cpu().processes()).singleElement().satisfies(p -> assertThat(p.missing()).isFalse());
        assertThat(runner().s5(SystemKind.HOMA, List.of(Workload.load("w1"))).workloads().get("w1").cpu())
                .as("nothing sampled by default").isNull();
    }

    @Test
    void shouldMeasureTheLoadGeneratorsOwnCpuPerCallAtEachWorkloadsRate() {
        assumeThat(Files.exists(Path.of("/proc/self/stat"))).as("a Linux /proc").isTrue();

        // /proc counts CPU time in clock ticks (10 ms): a window of 0.2 s can pass without one on a
        // fast machine, so this one asks for 2,000 calls at 2,000/s, a window of 2 s with its margin
        Map<String, Object> own = runner().s5MinCalls(2_000).s5LoadGenerator(
                List.of(Workload.load("w1"), Workload.load("w2")), Map.of("w1", 2_000.0)); // no rate for w2: not measured

        assertThat(own).containsOnlyKeys("w1");
        Map<?, ?> w1 = (Map<?, ?>) own.get("w1");
        assertThat(w1.get("rate_per_s")).isEqualTo(2_000.0);
        assertThat(w1.get("window_s")).isEqualTo(2.0);
        assertThat((Double) w1.get("cpu_us_per_call_client")).isPositive();
    }
}
