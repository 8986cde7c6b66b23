package io.homa.bench.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.bench.LoadGenerator;
import io.homa.bench.scenario.Scenario;
import io.homa.bench.systems.SystemKind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportTest {
    private static ScenarioResult s1(String system, double p50Us, double p99Us) {
        Map<String, Object> metrics = new LinkedHashMap<>();
        metrics.put("p50_us", p50Us);
        metrics.put("p99_us", p99Us);
        metrics.put("distribution_us", List.of(new double[] {50, p50Us}, new double[] {99, p99Us}));
        return ScenarioResult.ok("s1", system, "", metrics);
    }

    private static ScenarioResult s3(String system, double rps) {
        Map<String, Object> metrics = new LinkedHashMap<>();
        metrics.put("rpcs_per_s", rps);
        return ScenarioResult.ok("s3", system, "", metrics);
    }

    private static List<ScenarioResult> results() {
        return new ArrayList<>(List.of(s1("homa", 20, 40), s1("grpc", 80, 400), s1("rsocket", 50, 100),
                s1("udp", 10, 20), ScenarioResult.notApplicable("s1", "tcp", "not in this test"),
                s3("homa", 30_000), s3("grpc", 10_000), s3("rsocket", 40_000)));
    }

    @Test
    void shouldDivideHomaByEachPeerAndLeaveMissingPeersEmpty() {
        List<Ratios.Row> rows = Ratios.compute(results(), List.of());

        Ratios.Row p50 = rows.stream().filter(r -> r.metric().equals("p50 µs")).findFirst().orElseThrow();
        assertThat(p50.homaSystem()).isEqualTo("homa");
        assertThat(p50.ratios().get("grpc")).isEqualTo(0.25);
        assertThat(p50.ratios().get("rsocket")).isEqualTo(0.4);
        assertThat(p50.ratios().get("udp")).isEqualTo(2.0);
        assertThat(p50.ratios().get("tcp")).isNull(); // n/a results do not count
        Ratios.Row rps = rows.stream().filter(r -> r.scenario().equals("s3")).findFirst().orElseThrow();
        assertThat(rps.lowerIsBetter()).isFalse();
        assertThat(rps.ratios().get("rsocket")).isEqualTo(0.75);
        assertThat(rows).noneMatch(r -> r.homaSystem().equals("homa-rpc"));
        assertThat(Ratios.ratio(1.0, 0.0)).isNull();
    }

    private static ScenarioResult s6(String system, double completionMs, long failures) {
        Map<String, Object> metrics = new LinkedHashMap<>();
        metrics.put("completion_ms_at_max_n", completionMs);
        metrics.put("failures_at_max_n", failures);
        metrics.put("failures", failures);
        return ScenarioResult.ok("s6", system, "", metrics);
    }

    @Test
    void shouldNotCompareAnIncastCompletionTimeThatCameWithFailedCalls() {
        List<Ratios.Row> rows = Ratios.compute(List.of(s6("homa", 12, 0), s6("grpc", 30, 0), s6("rsocket", 8, 1_670)),
                List.of());

        Ratios.Row completion = rows.stream().filter(r -> r.metric().startsWith("completion")).findFirst().orElseThrow();
        assertThat(completion.homa()).isEqualTo(12.0);
        assertThat(completion.ratios().get("grpc")).isEqualTo(0.4);
        assertThat(completion.peers().get("rsocket")).as("its calls failed at once and ended its bursts early").isNull();
        assertThat(completion.ratios().get("rsocket")).isNull();
        Ratios.Row failed = rows.stream().filter(r -> r.metric().startsWith("failed")).findFirst().orElseThrow();
        assertThat(failed.peers().get("rsocket")).isEqualTo(1_670.0);
    }

    @Test
    void shouldReportTheCostOfAuthenticationAgainstTheSameSystemInTheSameRun(@TempDir Path dir) throws Exception {
        List<ScenarioResult> results = results();
        results.add(s1("homa-auth", 25, 50));
        results.add(s3("homa-auth", 24_000));
        results.add(s3("homa-rpc-auth", 9_000)); // no homa-rpc in this run: no row

        List<Ratios.Overhead> overhead = Ratios.authenticationOverhead(results, List.of());

        assertThat(overhead).extracting(Ratios.Overhead::scenario, Ratios.Overhead::metric, Ratios.Overhead::system,
                Ratios.Overhead::ratio).containsExactly(
                        org.assertj.core.groups.Tuple.tuple("s1", "p50 µs", "homa", 1.25),
                        org.assertj.core.groups.Tuple.tuple("s1", "p99 µs", "homa", 1.25),
                        org.assertj.core.groups.Tuple.tuple("s3", "RPCs/s", "homa", 0.8));
        BenchReport report = new BenchReport(Map.of("mode", "test"), Map.of("s1", "unloaded"), results,
                Ratios.compute(results, List.of()), Targets.check(results), List.of());
        ReportWriter.write(report, dir);
        String markdown = Files.readString(dir.resolve(ReportWriter.MARKDOWN_FILE));
        assertThat(markdown).contains("## Packet authentication overhead (same run)")
                .contains("| S3 | RPCs/s (higher better) | homa | 30,000 | 24,000 | 0.80x |");
    }

    @Test
    void shouldCheckTargetsWithTheirGaps() {
        List<Targets.Check> checks = Targets.check(results());

        assertThat(checks.get(0).met()).isFalse(); // 20 µs vs 1.5 x 10 µs
        assertThat(checks.get(0).gap()).isEqualTo("needs 1.33x lower");
        assertThat(checks.get(1).met()).isTrue(); // 20 <= 50 / 2
        assertThat(checks.get(2).met()).isNull(); // S2 not measured
        assertThat(checks.get(3).met()).isFalse(); // 30,000 < 40,000
        assertThat(checks.get(3).gap()).isEqualTo("needs 1.33x higher");
    }

    private static ScenarioResult s2(String system, double p50Us, double p99Us) {
        Map<String, Object> metrics = new LinkedHashMap<>();
        metrics.put("p50_us", p50Us);
        metrics.put("p99_us", p99Us);
        return ScenarioResult.ok("s2", system, "", metrics);
    }

    @Test
    void shouldCompareGrpcOverHomaWithGrpcAndTheRpcLayerAndCheckIssue39sTargets(@TempDir Path dir) throws Exception {
        List<ScenarioResult> results = results();
        results.addAll(List.of(s1("homa-rpc", 30, 60), s1("grpc-homa", 36, 70), s2("grpc", 100, 5_000),
                s2("grpc-homa", 45, 1_250)));

        List<Ratios.GrpcOverHoma> rows = Ratios.grpcOverHoma(results, List.of());
        List<Targets.Check> checks = Targets.grpcOverHoma(results);

        assertThat(rows).extracting(Ratios.GrpcOverHoma::scenario, Ratios.GrpcOverHoma::metric,
                Ratios.GrpcOverHoma::vsGrpc, Ratios.GrpcOverHoma::vsHomaRpc).containsExactly(
                        org.assertj.core.groups.Tuple.tuple("s1", "p50 µs", 0.45, 1.2),
                        org.assertj.core.groups.Tuple.tuple("s1", "p99 µs", 0.175, 1.167),
                        org.assertj.core.groups.Tuple.tuple("s2", "short p50 µs", 0.45, null),
                        org.assertj.core.groups.Tuple.tuple("s2", "short p99 µs", 0.25, null));
        // 36 <= 80 / 2; 1,250 > 5,000 / 5; 36 <= 1.3 x 30
        assertThat(checks).extracting(Targets.Check::met).containsExactly(true, false, true);
        assertThat(checks.get(1).gap()).isEqualTo("needs 1.25x lower");
        assertThat(Targets.check(results)).containsAll(checks);
        assertThat(Ratios.compute(results, List.of())).anySatisfy(row -> {
            assertThat(row.homaSystem()).isEqualTo("grpc-homa");
            assertThat(row.metric()).isEqualTo("p50 µs");
            assertThat(row.ratios().get("grpc")).isEqualTo(0.45);
        });
        BenchReport report = new BenchReport(Map.of("mode", "test"), Map.of("s1", "unloaded"), results,
                Ratios.compute(results, List.of()), Targets.check(results), List.of());
        ReportWriter.write(report, dir);
        String markdown = Files.readString(dir.resolve(ReportWriter.MARKDOWN_FILE));
        assertThat(markdown).contains("## gRPC over Homa (same run)")
                .contains("| S1 | p50 µs (lower better) | 36.0 | 80.0 | 30.0 | 0.45x | 1.20x |")
                .contains("| S2 | short p99 µs (lower better) | 1,250 | 5,000 | – | 0.25x | – |");
        assertThat(Ratios.grpcOverHoma(results(), List.of())).as("no grpc-homa in the run: no table").isEmpty();
    }

    @Test
    void shouldWriteJsonAndMarkdownAndVerifyEveryPairRan(@TempDir Path dir) throws Exception {
        List<ScenarioResult> results = results();
        BenchReport report = new BenchReport(Map.of("mode", "test", "machine", Map.of("cores", 2)),
                Map.of("s1", "unloaded"), results, Ratios.compute(results, List.of()), Targets.check(results),
                Charts.write(results, List.of(), dir));

        ReportWriter.write(report, dir);

        assertThat(report.charts()).containsExactly("s1-latency.png");
        assertThat(Files.size(dir.resolve("s1-latency.png"))).isPositive();
        String markdown = Files.readString(dir.resolve(ReportWriter.MARKDOWN_FILE));
        assertThat(markdown).contains("| S1 | p50 µs (lower better) | homa | 20.0 | 80.0 | 50.0 | 10.0 | – | 0.25x | 0.40x | 2.00x | – |");
        assertThat(markdown).contains("**missed**");
        Map<String, Object> json = ReportWriter.readJson(dir.resolve(ReportWriter.JSON_FILE));
        assertThat((List<?>) json.get("results")).hasSize(results.size());

        List<SystemKind> systems = List.of(SystemKind.HOMA, SystemKind.GRPC, SystemKind.TCP);
        assertThat(LoadGenerator.verify(dir, List.of(Scenario.S1), systems)).isEmpty();
        assertThat(LoadGenerator.verify(dir, List.of(Scenario.S1, Scenario.S2), systems))
                .contains("s2/homa: no result");
        assertThat(LoadGenerator.verify(dir.resolve("missing"), List.of(Scenario.S1), systems))
                .singleElement().asString().contains("report files missing");
    }

    @Test
    void shouldFlagAFailedPair(@TempDir Path dir) throws Exception {
        List<ScenarioResult> results = List.of(ScenarioResult.failed("s1", "homa", "no call completed"));
        ReportWriter.write(new BenchReport(Map.of(), Map.of(), results, List.of(), List.of(), List.of()), dir);

        assertThat(LoadGenerator.verify(dir, List.of(Scenario.S1), List.of(SystemKind.HOMA)))
                .containsExactly("s1/homa: failed no call completed");
    }

    private static Map<String, Object> process(String role, long pid, Double fraction) {
        Map<String, Object> process = new LinkedHashMap<>();
        process.put("role", role);
        process.put("pid", pid);
        if (fraction == null) {
            process.put("missing", true);
        } else {
            process.put("cpu_fraction", fraction);
        }
        return process;
    }

    @Test
    void shouldWriteEachS5WindowAndItsCpuUnderTheWorkloadsTable(@TempDir Path dir) throws Exception {
        Map<String, Object> cpu = new LinkedHashMap<>();
        cpu.put("processes", List.of(process("client", 1, 0.62), process("server", 2, 0.35), process("agent", 3, 0.12),
                process("agent", 4, 0.114)));
        cpu.put("cores", List.of(0.93, 0.41));
        cpu.put("cpu_bound", true);
        Map<String, Object> w1 = new LinkedHashMap<>();
        w1.put("achieved_rpcs_per_s", 990.0);
        w1.put("calls", 10_890);
        w1.put("measure_ms", 11_000L);
        w1.put("cpu", cpu);
        Map<String, Object> metrics = new LinkedHashMap<>();
        metrics.put("workloads", Map.of("w1", w1));
        List<ScenarioResult> results = List.of(ScenarioResult.ok("s5", "homa", "", metrics));

        ReportWriter.write(new BenchReport(Map.of(), Map.of(), results, List.of(), List.of(), List.of()), dir);

        String markdown = Files.readString(dir.resolve(ReportWriter.MARKDOWN_FILE));
        assertThat(markdown).contains("| skipped arrivals | calls | window s |")
                .contains("| 10,890 | 11.0 |")
                .contains("- homa: CPU over the window: core 0 93%, core 1 41% (CPU-bound: a core above 80%); "
                        + "processes: client 62%, server 35%, agents 12%/11%\n");
        cpu.put("cpu_bound", false);
        cpu.put("processes", List.of(process("client", 1, 0.5), process("server", 2, null)));
        assertThat(ReportWriter.cpuLine(cpu)).isEqualTo("core 0 93%, core 1 41% (no core above 80%); processes: "
                + "client 50%, server exited");
    }

    @Test
    void shouldMarkCpuBoundS7RowsInTheTestbedSummary() {
        Map<String, Object> cpu = new LinkedHashMap<>();
        cpu.put("cores", List.of(0.934, 0.41));
        cpu.put("cpu_bound", true);

        assertThat(TestbedSummary.cpuCell(Map.of("cpu", cpu))).isEqualTo("93% / 41% **CPU-bound**");
        assertThat(TestbedSummary.cpuCell(Map.of())).isEqualTo("–");
        assertThat(TestbedSummary.cpuCheck(0, List.of())).contains("no CPU figures");
        assertThat(TestbedSummary.cpuCheck(6, List.of())).contains("no core above 80% in any of the 6 rows");
        assertThat(TestbedSummary.cpuCheck(6, List.of("80%, all-to-all W3 homa")))
                .contains("1 of 6 rows sampled were **CPU-bound**").contains("80%, all-to-all W3 homa");
    }

    private static Map<String, Object> cpu(String unit, double client, double server) {
        Map<String, Object> metrics = new LinkedHashMap<>();
        metrics.put("cpu_us_per_" + unit + "_client", client);
        metrics.put("cpu_us_per_" + unit + "_server", server);
        return metrics;
    }

    private static ScenarioResult withCpu(String scenario, String system, Map<String, Object> metrics) {
        return ScenarioResult.ok(scenario, system, "", new LinkedHashMap<>(metrics));
    }

    private static List<ScenarioResult> cpuResults() {
        List<ScenarioResult> results = new ArrayList<>();
        results.add(withCpu("s1", "homa", cpu("call", 10, 15)));
        results.add(withCpu("s1", "rsocket", cpu("call", 20, 30)));
        results.add(withCpu("s1", "grpc", Map.of("p50_us", 100.0))); // not sampled: no row
        Map<String, Object> s4 = cpu("call", 900, 800);
        s4.putAll(cpu("mib", 600, 400));
        results.add(withCpu("s4", "homa-rpc", s4));
        results.add(withCpu("s5", "homa", Map.of("workloads", Map.of("w3", cpu("call", 12, 8)))));
        results.add(withCpu("s5", "rsocket", Map.of("workloads", Map.of("w3", cpu("call", 16, 4)))));
        results.add(withCpu("s10", "rsocket", Map.of("cpu_by_part", Map.of("server_stream_64kb", cpu("mib", 500, 250),
                "bidi_ping_pong", cpu("call", 40, 41)))));
        results.add(withCpu("s11", "homa-rpc", Map.of("rates", Map.of("2x", cpu("call", 50, 700)))));
        results.add(withCpu("s11", "rsocket", Map.of("rates", Map.of("2x", cpu("call", 100, 560)))));
        results.add(ScenarioResult.failed("s3", "homa", "no call completed"));
        return results;
    }

    @Test
    void shouldTabulateTheCpuOfEachFigureAgainstRSocket() {
        List<CpuTable.Row> rows = CpuTable.rows(cpuResults());

        assertThat(rows).extracting(CpuTable.Row::scenario, CpuTable.Row::figure, CpuTable.Row::per, CpuTable.Row::system)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("s1", "100 B echo, 1 outstanding", "call", "homa"),
                        org.assertj.core.groups.Tuple.tuple("s1", "100 B echo, 1 outstanding", "call", "rsocket"),
                        org.assertj.core.groups.Tuple.tuple("s4", "1 MiB echo, 4 outstanding (MiB of responses)", "MiB",
                                "homa-rpc"),
                        org.assertj.core.groups.Tuple.tuple("s5", "W3 Poisson", "call", "homa"),
                        org.assertj.core.groups.Tuple.tuple("s5", "W3 Poisson", "call", "rsocket"),
                        org.assertj.core.groups.Tuple.tuple("s10", "server stream, 64 KiB items", "MiB", "rsocket"),
                        org.assertj.core.groups.Tuple.tuple("s10", "bidirectional ping-pong, 100 B", "exchange", "rsocket"),
                        org.assertj.core.groups.Tuple.tuple("s11", "Poisson at 2x capacity", "answered call", "homa-rpc"),
                        org.assertj.core.groups.Tuple.tuple("s11", "Poisson at 2x capacity", "answered call", "rsocket"));
        CpuTable.Row homa = rows.get(0);
        assertThat(homa.totalUs()).isEqualTo(25.0);
        assertThat(homa.clientVsPeer()).isEqualTo(0.5);
        assertThat(homa.serverVsPeer()).isEqualTo(0.5);
        assertThat(homa.totalVsPeer()).isEqualTo(0.5);
        assertThat(rows.get(1).totalVsPeer()).isEqualTo(1.0);
        CpuTable.Row s4 = rows.get(2);
        assertThat(s4.clientUs()).as("S4 per MiB, not per call").isEqualTo(600.0);
        assertThat(s4.totalVsPeer()).as("no RSocket in S4").isNull();
        CpuTable.Row w3 = rows.get(3);
        assertThat(w3.totalUs()).isEqualTo(20.0);
        assertThat(w3.clientVsPeer()).isEqualTo(0.75);
        assertThat(w3.serverVsPeer()).isEqualTo(2.0);
        assertThat(w3.totalVsPeer()).isEqualTo(1.0);
        assertThat(rows.get(7).totalVsPeer()).isEqualTo(1.136); // 750 / 660
    }

    @Test
    void shouldWriteTheCpuTableWithTheIdleBaseline(@TempDir Path dir) throws Exception {
        List<ScenarioResult> results = cpuResults();
        Map<String, Object> idle = new LinkedHashMap<>();
        idle.put("window_s", 3.0);
        idle.put("client_cpu_fraction", 0.0033);
        idle.put("server_cpu_fraction", Map.of("0-homa", 0.0));
        Map<String, Object> header = new LinkedHashMap<>();
        header.put("idle_cpu", idle);
        Map<String, Object> w3 = new LinkedHashMap<>();
        w3.put("rate_per_s", 3000.0);
        w3.put("window_s", 3.0);
        w3.put("cpu_us_per_call_client", 28.5);
        header.put("s5_load_generator_cpu", Map.of("w3", w3));

        ReportWriter.write(new BenchReport(header, Map.of(), results, List.of(), List.of(), List.of()), dir);

        String markdown = Files.readString(dir.resolve(ReportWriter.MARKDOWN_FILE));
        assertThat(markdown).contains("## CPU per call")
                .contains("| scenario | figure | per | system | client µs | server µs | total µs | client / rsocket |"
                        + " server / rsocket | total / rsocket |")
                .contains("| S1 | 100 B echo, 1 outstanding | call | homa | 10.0 | 15.0 | 25.0 | 0.50x | 0.50x | 0.50x |")
                .contains("| S4 | 1 MiB echo, 4 outstanding (MiB of responses) | MiB | homa-rpc | 600 | 400 | 1,000 | – | – | – |")
                .contains("| S11 | Poisson at 2x capacity | answered call | homa-rpc | 50.0 | 700 | 750 | 0.50x | 1.25x | 1.14x |")
                .contains("Idle baseline (after the last scenario, every client connected, no call running, 3.00 s): client"
                        + " process 0.3%; server-0-homa 0.0%")
                .contains("per call: W3 28.5 µs at 3,000/s. Every system's S5 client figure holds this much.");
        Map<String, Object> json = ReportWriter.readJson(dir.resolve(ReportWriter.JSON_FILE));
        assertThat((List<?>) json.get("cpu")).hasSize(9).first().satisfies(row -> assertThat(asMap(row))
                .containsEntry("system", "homa").containsEntry("clientUs", 10.0).containsEntry("totalVsPeer", 0.5));
        assertThat(markdown.indexOf("## CPU per call")).isLessThan(markdown.indexOf("## S1 unloaded"));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(Object value) {
        return (Map<String, Object>) value;
    }
}
