package io.homa.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.bench.report.BenchReport;
import io.homa.bench.report.Ratios;
import io.homa.bench.report.ReportWriter;
import io.homa.bench.report.ScenarioResult;
import io.homa.bench.systems.StreamProtocol;
import io.homa.bench.systems.SystemKind;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/** S10: its requests, which systems it applies to, its figures, its ratios and its table. */
class StreamingScenarioTest {
    @Test
    void shouldAskForItemsAndSendNoMoreThanTheSubscriberAsks() {
        byte[] request = StreamProtocol.request(100, 3);
        assertThat(StreamProtocol.itemBytes(request)).isEqualTo(100);
        assertThat(StreamProtocol.count(request)).isEqualTo(3);
        assertThat(StreamProtocol.items(request).collectList().block()).hasSize(3)
                .allSatisfy(item -> assertThat(item).isSameAs(StreamProtocol.item(100)));
        List<Long> requested = new ArrayList<>();
        StreamProtocol.items(StreamProtocol.request(100, Long.MAX_VALUE)).doOnRequest(requested::add).limitRate(8)
                .take(20).blockLast();
        assertThat(requested).allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(8));
        assertThat(StreamProtocol.receive(Flux.just(new byte[3], new byte[5])).block()).isEqualTo(8);
        assertThat(StreamProtocol.totalBytes(StreamProtocol.totalBytes(1L << 40))).isEqualTo(1L << 40);
        assertThatThrownBy(() -> StreamProtocol.request(2, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> StreamProtocol.count(new byte[4])).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldApplyToTheSystemsWithStreamsOnly() {
        assertThat(Scenario.fromId("s10")).isEqualTo(Scenario.S10);
        assertThat(Scenario.S10.closedLoop()).isFalse();
        for (SystemKind system : List.of(SystemKind.HOMA_RPC, SystemKind.HOMA_RPC_AUTH, SystemKind.GRPC, SystemKind.GRPC_HOMA,
                SystemKind.RSOCKET)) {
            assertThat(Scenario.S10.notApplicable(system)).as(system.id()).isNull();
        }
        assertThat(Scenario.S10.notApplicable(SystemKind.HOMA)).contains("message layer has no streams");
        assertThat(Scenario.S10.notApplicable(SystemKind.HOMA_AUTH)).contains("message layer has no streams");
        assertThat(Scenario.S10.notApplicable(SystemKind.UDP)).contains("floors have no streams");
        assertThat(Scenario.S10.notApplicable(SystemKind.TCP)).contains("floors have no streams");
    }

    private static StreamingScenario.Tally tally(long items, long windowMs, long... latenciesUs) {
        StreamingScenario.Tally tally = new StreamingScenario.Tally();
        tally.items = items;
        tally.windowNs = windowMs * 1_000_000;
        tally.slices = 2;
        for (long us : latenciesUs) {
            LatencyStats.record(tally.latency, us * 1_000);
        }
        return tally;
    }

    private static Map<StreamingScenario.Part, StreamingScenario.Tally> tallies() {
        Map<StreamingScenario.Part, StreamingScenario.Tally> tallies = new LinkedHashMap<>();
        tallies.put(StreamingScenario.Part.SERVER_STREAM_SMALL, tally(500_000, 2_000));
        tallies.put(StreamingScenario.Part.SERVER_STREAM_LARGE, tally(16_384, 2_000)); // 1 GiB in 2 s
        tallies.put(StreamingScenario.Part.CLIENT_STREAM_LARGE, tally(8_192, 2_000));
        long[] latencies = new long[100];
        for (int i = 0; i < latencies.length; i++) {
            latencies[i] = 10 + i; // 10 .. 109 µs
        }
        StreamingScenario.Tally bidi = tally(100, 2_000, latencies);
        tallies.put(StreamingScenario.Part.BIDI_PING_PONG, bidi);
        return tallies;
    }

    @Test
    void shouldGiveItemsPerSecondGbitPerSecondAndTheExchangesPercentiles() {
        ScenarioResult result = StreamingScenario.result(SystemKind.GRPC, tallies());

        assertThat(result.status()).isEqualTo(ScenarioResult.OK);
        assertThat(result.number("items_per_s_100b")).isEqualTo(250_000);
        assertThat(result.number("gbit_per_s_64kb_server")).isEqualTo(4.295); // 2^30 B * 8 / 2 s
        assertThat(result.number("gbit_per_s_64kb_client")).isEqualTo(2.147);
        assertThat(result.number("bidi_p50_us")).isEqualTo(59.0);
        assertThat(result.number("bidi_p99_us")).isEqualTo(108.0);
        assertThat(result.number("bidi_exchanges_per_s")).isEqualTo(50);
        assertThat(result.number("slices")).isEqualTo(2);
        assertThat(result.metrics().get("api").toString()).contains("ClientCalls");
    }

    private static io.homa.bench.cpu.CpuSampler.Usage window(double client, double server) {
        return new io.homa.bench.cpu.CpuSampler.Usage(2.0, List.of(
                new io.homa.bench.cpu.CpuSampler.ProcessUsage("client", 1, false, client, client / 2),
                new io.homa.bench.cpu.CpuSampler.ProcessUsage("server", 2, false, server, server / 2)), List.of());
    }

    @Test
    void shouldGiveTheCpuOfEachPartPerItemPerMibAndPerExchange() {
        Map<StreamingScenario.Part, StreamingScenario.Tally> tallies = tallies();
        tallies.get(StreamingScenario.Part.SERVER_STREAM_SMALL).cpu.add(window(1.0, 0.5)); // 500,000 items
        tallies.get(StreamingScenario.Part.SERVER_STREAM_LARGE).cpu.add(window(0.512, 1.024)); // 1,024 MiB
        tallies.get(StreamingScenario.Part.BIDI_PING_PONG).cpu.add(window(0.01, 0.02)); // 100 exchanges
        // the client stream not sampled: left out

        ScenarioResult result = StreamingScenario.result(SystemKind.RSOCKET, tallies);

        Map<?, ?> cpu = (Map<?, ?>) result.metrics().get("cpu_by_part");
        assertThat(asMap(cpu).keySet()).containsExactly("server_stream_100b", "server_stream_64kb", "bidi_ping_pong");
        assertThat(asMap(cpu.get("server_stream_100b"))).containsEntry("cpu_us_per_call_client", 2.0)
                .containsEntry("cpu_us_per_call_server", 1.0);
        assertThat(asMap(cpu.get("server_stream_64kb"))).containsEntry("cpu_us_per_mib_client", 500.0)
                .containsEntry("cpu_us_per_mib_server", 1000.0);
        assertThat(asMap(cpu.get("bidi_ping_pong"))).containsEntry("cpu_us_per_call_client", 100.0)
                .containsEntry("cpu_us_per_call_server", 200.0);
        assertThat(StreamingScenario.result(SystemKind.RSOCKET, tallies()).metrics()).doesNotContainKey("cpu_by_part");
    }

    @Test
    void shouldFailASystemWithAnEmptyPartAndKeepItsFigures() {
        Map<StreamingScenario.Part, StreamingScenario.Tally> tallies = tallies();
        StreamingScenario.Tally client = tally(0, 2_000);
        client.fail("client stream failed: boom");
        tallies.put(StreamingScenario.Part.CLIENT_STREAM_LARGE, client);

        ScenarioResult result = StreamingScenario.result(SystemKind.HOMA_RPC, tallies);

        assertThat(result.status()).isEqualTo(ScenarioResult.FAILED);
        assertThat(result.note()).contains("nothing arrived in the window of gbit_per_s_64kb_client").contains("boom");
        assertThat(result.number("items_per_s_100b")).isEqualTo(250_000);
        assertThat(result.number("failed_streams")).isEqualTo(1);
    }

    private static ScenarioResult s10(String system, double items, double server, double client, double p50, double p99) {
        Map<String, Object> metrics = new LinkedHashMap<>();
        metrics.put("items_per_s_100b", items);
        metrics.put("gbit_per_s_64kb_server", server);
        metrics.put("gbit_per_s_64kb_client", client);
        metrics.put("bidi_p50_us", p50);
        metrics.put("bidi_p99_us", p99);
        metrics.put("failed_streams", 0L);
        return ScenarioResult.ok("s10", system, "", metrics);
    }

    @Test
    void shouldRenderATableOfSystemsAndHomasRatiosToEachPeer() {
        List<ScenarioResult> results = List.of(s10("homa-rpc", 100_000, 1.0, 0.5, 200, 400),
                s10("grpc", 400_000, 4.0, 2.0, 100, 200), s10("rsocket", 50_000, 2.0, 1.0, 400, 800),
                ScenarioResult.notApplicable("s10", "homa", "the Homa message layer has no streams"),
                ScenarioResult.notApplicable("s10", "udp", "the floors have no streams"));
        List<Ratios.Row> ratios = Ratios.compute(results, List.of());
        BenchReport report = new BenchReport(Map.of("mode", "quick"), Map.of("s10", Scenario.S10.description()), results,
                ratios, List.of(), List.of());

        String md = ReportWriter.markdown(report);

        Ratios.Row items = ratios.stream().filter(r -> r.metric().equals("server stream 100 B items/s")).findFirst()
                .orElseThrow();
        assertThat(items.homaSystem()).isEqualTo("homa-rpc");
        assertThat(items.ratios().get("grpc")).isEqualTo(0.25);
        assertThat(items.ratios().get("rsocket")).isEqualTo(2.0);
        assertThat(ratios).noneMatch(r -> r.homaSystem().equals("homa"));
        assertThat(md).contains("## S10 streaming")
                .contains("| homa-rpc | 100,000 | 1.00 | 0.500 | 200 | 400 |")
                .contains("| homa | n/a: the Homa message layer has no streams |")
                .contains("| server stream 100 B items/s (higher better) | homa-rpc | 100,000 | 400,000 | 50,000 | 0.25x | 2.00x |")
                .contains("| bidi ping-pong p99 µs (lower better) | homa-rpc | 400 | 200 | 800 | 2.00x | 0.50x |")
                .contains("| S10 | bidi ping-pong p50 µs (lower better) | homa-rpc | 200 |");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(Object value) {
        return (Map<String, Object>) value;
    }
}
