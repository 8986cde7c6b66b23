package io.homa.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.bench.report.ScenarioResult;
import io.homa.bench.systems.EchoClient;
import io.homa.bench.systems.EchoProtocol;
import io.homa.bench.systems.SystemKind;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** S1-S4 measured in slices, the systems taking turns; a closed loop's figures add up over windows. */
class InterleaveTest {
    private static final RunPlan PLAN = new RunPlan("test", 100, 20, 300, 300, 1, 300, 300, 3, 100, 4, 100,
            List.of(4), 1, 100, 5_000, 5_000, 3);

    /** Answers every call at once with an echo, and notes which system was called, in order. */
    private static final class Recording implements EchoClient {
        private final String name;
        private final List<String> log;

        Recording(String name, List<String> log) {
            this.name = name;
            this.log = log;
        }

        @Override
        public CompletableFuture<byte[]> call(int target, byte[] request) {
            synchronized (log) {
                if (log.isEmpty() || !log.get(log.size() - 1).equals(name)) {
                    log.add(name);
                }
            }
            return CompletableFuture.supplyAsync(() -> request.clone());
        }

        @Override
        public int targets() {
            return 1;
        }

        @Override
        public void close() {}
    }

    @Test
    void shouldRunTheSlicesOfEverySystemInTurnsAndAddThemUp() {
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        ScenarioRunner runner = new ScenarioRunner(PLAN, Map.of(
                SystemKind.HOMA, new Recording("a", log),
                SystemKind.GRPC, new Recording("b", log),
                SystemKind.RSOCKET, new Recording("c", log)), 0.5);
        List<ScenarioRunner.Measurement> measurements = List.of(runner.measurement(Scenario.S3, SystemKind.HOMA),
                runner.measurement(Scenario.S3, SystemKind.GRPC), runner.measurement(Scenario.S3, SystemKind.RSOCKET));

        runner.interleave(measurements);

        // Three slices each; each round starts one system later, and no two slices overlap.
        assertThat(log).containsExactly("a", "b", "c", "b", "c", "a", "c", "a", "b");
        for (ScenarioRunner.Measurement measurement : measurements) {
            ScenarioResult result = measurement.result();
            assertThat(result.status()).isEqualTo(ScenarioResult.OK);
            assertThat(result.number("slices")).isEqualTo(3.0);
            assertThat(result.number("rpcs_per_s")).isPositive();
        }
    }

    @Test
    void shouldAddUpAClosedLoopOverWindowsAndDropCallsOfAnEarlierOne() {
        List<CompletableFuture<byte[]>> pending = Collections.synchronizedList(new ArrayList<>());
        byte[] request = EchoProtocol.echoRequest(100);
        EchoClient held = new EchoClient() {
            @Override
            public CompletableFuture<byte[]> call(int target, byte[] bytes) {
                CompletableFuture<byte[]> call = new CompletableFuture<>();
                pending.add(call);
                return call;
            }

            @Override
            public int targets() {
                return 1;
            }

            @Override
            public void close() {}
        };
        ClosedLoop loop = new ClosedLoop(held, 0, () -> request, 2, 5_000);

        loop.start(0, Long.MAX_VALUE);
        pending.remove(0).complete(request.clone()); // counted, and calls again
        loop.stop(1); // one call still in flight: the drain gives up
        List<CompletableFuture<byte[]>> stragglers = new ArrayList<>(pending);
        pending.clear();
        loop.start(0, Long.MAX_VALUE);
        assertThat(pending).as("the second window's own calls").hasSize(2);
        stragglers.forEach(call -> call.complete(request.clone())); // late calls of the first window
        pending.remove(0).complete(request.clone());

        assertThat(loop.completedInWindow()).as("one per window; stragglers neither count nor call again")
                .isEqualTo(2);
        assertThat(pending).hasSize(2);
        assertThat(loop.failed()).isZero();
    }
}
