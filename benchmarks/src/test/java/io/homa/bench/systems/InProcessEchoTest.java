package io.homa.bench.systems;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.bench.report.ScenarioResult;
import io.homa.bench.scenario.RunPlan;
import io.homa.bench.scenario.Scenario;
import io.homa.bench.scenario.ScenarioRunner;
import io.homa.bench.scenario.StreamingScenario;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * One round per system with server and client in this JVM (and each streaming call where the system
 * has streams), a tiny S1 and S6 through the runner, and a tiny S10.
 */
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

    /** S11's request, with a deadline, where each system runs blocking work (gRPC over Homa: the CPU pool). */
    @Test
    void shouldAnswerASpinRequestWithADeadlineOnEverySystemS11Measures() throws Exception {
        byte[] spin = EchoProtocol.spinRequest(100, 50, false);
        for (SystemKind system : SystemKind.values()) {
            if (Scenario.S11.notApplicable(system) != null) {
                continue;
            }
            SystemSettings settings = SystemSettings.defaults();
            try (EchoServer server = system.startServer(settings);
                    EchoClient client = system.connect(List.of(settings.bindSocket(server.port())), settings)) {
                byte[] answer = client.call(0, spin, 10_000).get(10, TimeUnit.SECONDS);

                assertThat(answer).as(system.id()).isEqualTo(EchoProtocol.respond(spin));
            }
        }
    }

    private static final java.time.Duration WAIT = java.time.Duration.ofSeconds(10);

    /** The systems S10 measures, and every other one without streams. */
    @Test
    void shouldStreamTheRightBytesOnEverySystemWithStreams() throws Exception {
        byte[] first = EchoProtocol.request(100, 7);
        byte[] second = EchoProtocol.request(100, 8);
        byte[] third = EchoProtocol.echoRequest(3_000);
        for (SystemKind system : SystemKind.values()) {
            SystemSettings settings = SystemSettings.defaults();
            try (EchoServer server = system.startServer(settings);
                    EchoClient client = system.connect(List.of(settings.bindSocket(server.port())), settings)) {
                EchoStreams streams = client.streams();
                boolean hasStreams = Scenario.S10.notApplicable(system) == null;
                assertThat(streams != null).as(system.id()).isEqualTo(hasStreams);
                if (streams == null) {
                    continue;
                }
                List<byte[]> small = streams.serverStream(0, 100, 5).collectList().block(WAIT);
                List<byte[]> large = streams.serverStream(0, 64 * 1024, 3).collectList().block(WAIT);
                // An unending stream cancelled by its subscriber, then the same system again.
                List<byte[]> taken = streams.serverStream(0, 100, Long.MAX_VALUE / 2).limitRate(4).take(10)
                        .collectList().block(WAIT);
                Long uploaded = streams.upload(0, reactor.core.publisher.Flux.range(0, 4)
                        .map(i -> StreamProtocol.item(64 * 1024))).block(WAIT);
                List<byte[]> echoed = streams.echo(0, reactor.core.publisher.Flux.just(first, second, third))
                        .collectList().block(WAIT);

                assertThat(small).as(system.id()).hasSize(5).allSatisfy(item ->
                        assertThat(item).isEqualTo(EchoProtocol.echoRequest(100)));
                assertThat(large).as(system.id()).hasSize(3).allSatisfy(item ->
                        assertThat(item).isEqualTo(EchoProtocol.echoRequest(64 * 1024)));
                assertThat(taken).as(system.id()).hasSize(10);
                assertThat(uploaded).as(system.id()).isEqualTo(4L * 64 * 1024);
                assertThat(echoed).as(system.id()).containsExactly(first, second, third);
            }
        }
    }

    @Test
    void shouldMeasureS10OnEverySystemWithStreams() throws Exception {
        SystemSettings settings = SystemSettings.defaults();
        List<SystemKind> systems = List.of(SystemKind.HOMA_RPC, SystemKind.GRPC, SystemKind.GRPC_HOMA, SystemKind.RSOCKET);
        java.util.Map<SystemKind, EchoServer> servers = new java.util.EnumMap<>(SystemKind.class);
        java.util.Map<SystemKind, EchoClient> clients = new java.util.EnumMap<>(SystemKind.class);
        try {
            for (SystemKind system : systems) {
                servers.put(system, system.startServer(settings));
                clients.put(system, system.connect(List.of(settings.bindSocket(servers.get(system).port())), settings));
            }
            java.util.Map<SystemKind, EchoStreams> streams = new java.util.LinkedHashMap<>();
            clients.forEach((system, client) -> streams.put(system, client.streams()));
            StreamingScenario scenario = new StreamingScenario(new StreamingScenario.Plan(100, 20, 150, 2, 5_000));

            java.util.Map<SystemKind, ScenarioResult> results = scenario.run(streams);

            assertThat(results).containsOnlyKeys(systems);
            results.forEach((system, result) -> {
                assertThat(result.status()).as(system.id() + ": " + result.note()).isEqualTo(ScenarioResult.OK);
                assertThat(result.number("items_per_s_100b")).as(system.id()).isPositive();
                assertThat(result.number("gbit_per_s_64kb_server")).as(system.id()).isPositive();
                assertThat(result.number("gbit_per_s_64kb_client")).as(system.id()).isPositive();
                assertThat(result.number("bidi_p50_us")).as(system.id()).isPositive();
                assertThat(result.number("bidi_p99_us")).as(system.id()).isGreaterThanOrEqualTo(result.number("bidi_p50_us"));
                assertThat(result.number("slices")).isEqualTo(2);
                assertThat(result.number("failed_streams")).as(system.id() + ": " + result.note()).isZero();
                // The window is the slices' measured time (the sleeps, at least).
                assertThat(result.number("window_s")).isGreaterThanOrEqualTo(0.3);
            });
        } finally {
            clients.values().forEach(EchoClient::close);
            servers.values().forEach(EchoServer::close);
        }
    }

    @Test
    void shouldMeasureS1AndS6OnHoma() throws Exception {
        SystemSettings settings = SystemSettings.defaults();
        try (EchoServer first = SystemKind.HOMA.startServer(settings);
                EchoServer second = SystemKind.HOMA.startServer(settings);
                EchoClient client = SystemKind.HOMA.connect(List.of(settings.bindSocket(first.port()), settings.bindSocket(second.port())), settings)) {
            ScenarioRunner runner = new ScenarioRunner(TINY, Map.of(SystemKind.HOMA, client), 0.5);
            // Client and servers are this process here: sampled as both sides.
            boolean proc = java.nio.file.Files.exists(java.nio.file.Path.of("/proc/self/stat"));
            runner.cpuServers(system -> List.of(new io.homa.bench.cpu.CpuSampler.Target("server",
                    ProcessHandle.current().pid())));

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
            if (proc) {
                // Both sides are this process: the same CPU per call, over the window's calls.
                assertThat(s1.number("cpu_us_per_call_client")).isPositive().isEqualTo(s1.number("cpu_us_per_call_server"));
                assertThat(s1.number("cpu_window_s")).isBetween(TINY.s1MeasureMs() / 1000.0 * 0.9, 10.0);
                // A few bursts of 4 calls: possibly under one clock tick (10 ms) of CPU.
                assertThat(s6.number("cpu_us_per_call_client")).isGreaterThanOrEqualTo(0);
                assertThat((List<?>) s6.metrics().get("fanouts")).allSatisfy(row ->
                        assertThat(asMap(row)).containsKey("cpu_us_per_call_server"));
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(Object value) {
        return (Map<String, Object>) value;
    }
}
