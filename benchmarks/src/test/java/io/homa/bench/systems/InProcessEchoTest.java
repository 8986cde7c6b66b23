package io.homa.bench.systems;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.bench.report.ScenarioResult;
import io.homa.bench.scenario.RunPlan;
import io.homa.bench.scenario.Scenario;
import io.homa.bench.scenario.ScenarioRunner;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** One round per system with server and client in this JVM, and a tiny S1 and S6 through the runner. */
class InProcessEchoTest {
    private static final RunPlan TINY = new RunPlan("test", 500, 100, 500, 200, 1, 200, 200, 3, 100, 4, 200,
            List.of(4), 1, 100, 5_000, 5_000, 2);

    @Test
    void shouldEchoAndAnswerSizedRequestsOnEverySystem() throws Exception {
        for (SystemKind system : SystemKind.values()) {
            SystemSettings settings = SystemSettings.defaults();
            try (EchoServer server = system.startServer(settings);
                    EchoClient client = system.connect(List.of(settings.bindSocket(server.port())), settings)) {
                byte[] echo = client.call(0, EchoProtocol.echoRequest(100)).get(10, TimeUnit.SECONDS);
                byte[] sized = client.call(0, EchoProtocol.request(100, 10_000)).get(10, TimeUnit.SECONDS);

                assertThat(echo).as(system.id()).isEqualTo(EchoProtocol.echoRequest(100));
                assertThat(sized).as(system.id()).hasSize(10_000);
            }
        }
    }

    @Test
    void shouldMeasureS1AndS6OnHoma() throws Exception {
        SystemSettings settings = SystemSettings.defaults();
        try (EchoServer first = SystemKind.HOMA.startServer(settings);
                EchoServer second = SystemKind.HOMA.startServer(settings);
                EchoClient client = SystemKind.HOMA.connect(List.of(settings.bindSocket(first.port()), settings.bindSocket(second.port())), settings)) {
            ScenarioRunner runner = new ScenarioRunner(TINY, Map.of(SystemKind.HOMA, client), 0.5);

            runner.warmup(SystemKind.HOMA);
            ScenarioResult s1 = runner.closedLoop(Scenario.S1, SystemKind.HOMA);
            ScenarioResult s6 = runner.s6(SystemKind.HOMA);

            assertThat(s1.status()).as(s1.note()).isEqualTo(ScenarioResult.OK);
            assertThat(s1.number("count")).isPositive();
            // One call outstanding: the calls that ended in the window ran one after another, so
            // their round trips add up to the window at most, plus the one per slice that began
            // before it (the mean is rounded to 0.1 us and the histogram keeps 3 digits).
            double windowUs = TINY.s1MeasureMs() * 1000.0;
            assertThat(s1.number("count") * s1.number("mean_us"))
                    .isLessThanOrEqualTo(windowUs * 1.01 + TINY.slices() * s1.number("max_us"));
            assertThat(s1.number("rpcs_per_s")).isEqualTo(Math.round(s1.number("count") / (TINY.s1MeasureMs() / 1000.0)));
            assertThat(s6.status()).as(s6.note()).isEqualTo(ScenarioResult.OK);
            assertThat(s6.number("servers")).isEqualTo(2);
            assertThat(s6.number("failures")).isZero();
        }
    }
}
