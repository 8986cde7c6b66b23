package io.homa.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.homa.bench.report.BenchReport;
import io.homa.bench.report.ReportWriter;
import io.homa.bench.report.ScenarioResult;
import io.homa.bench.report.Targets;
import io.homa.bench.systems.EchoProtocol;
import io.homa.bench.systems.FailureKind;
import io.homa.bench.systems.HomaLoops;
import io.homa.bench.systems.SystemKind;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** S11: its requests, how failures are counted, its figures, its target and its table. */
class OverloadScenarioTest {
    @Test
    void shouldSpinThenEchoASpinRequest() {
        byte[] request = EchoProtocol.spinRequest(100, 200, false);
        assertThat(EchoProtocol.isSpin(request)).isTrue();
        assertThat(EchoProtocol.isSpin(EchoProtocol.spinRequest(100, 200, true))).isFalse();
        assertThat(EchoProtocol.isSpin(EchoProtocol.echoRequest(100))).isFalse();
        assertThat(EchoProtocol.expectedResponseBytes(request)).isEqualTo(100);

        long cpuBefore = java.lang.management.ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
        assertThat(EchoProtocol.respond(request)).isSameAs(request);
        long cpuNs = java.lang.management.ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() - cpuBefore;
        assertThat(cpuNs).isGreaterThanOrEqualTo(200_000);
    }

    @Test
    void shouldTellTimeoutsFromRefusalsInEachSystemsTerms() {
        assertThat(FailureKind.of(new CompletionException(new TimeoutException()))).isEqualTo(FailureKind.TIMEOUT);
        assertThat(FailureKind.of(new HomaRemoteException(HomaStatus.DEADLINE_EXCEEDED, "late"))).isEqualTo(FailureKind.TIMEOUT);
        assertThat(FailureKind.of(new HomaException(HomaStatus.RESOURCE_EXHAUSTED, "full"))).isEqualTo(FailureKind.REFUSED);
        assertThat(FailureKind.of(new HomaRemoteException(HomaStatus.UNAVAILABLE, "server overloaded: not executed")))
                .isEqualTo(FailureKind.REFUSED);
        assertThat(FailureKind.of(new io.homa.reactive.HomaTimeoutException(
                new java.net.InetSocketAddress("127.0.0.1", 1), 7, "silent"))).isEqualTo(FailureKind.TIMEOUT);
        assertThat(FailureKind.of(Status.DEADLINE_EXCEEDED.asRuntimeException())).isEqualTo(FailureKind.TIMEOUT);
        assertThat(FailureKind.of(Status.RESOURCE_EXHAUSTED.asRuntimeException())).isEqualTo(FailureKind.REFUSED);
        assertThat(FailureKind.of(Status.UNAVAILABLE.asRuntimeException())).isEqualTo(FailureKind.REFUSED);
        assertThat(FailureKind.of(Status.INTERNAL.asRuntimeException())).isEqualTo(FailureKind.OTHER);
        assertThat(FailureKind.of(new io.rsocket.exceptions.RejectedException("busy"))).isEqualTo(FailureKind.REFUSED);
        assertThat(FailureKind.of(new io.rsocket.exceptions.ApplicationErrorException("Scheduler unavailable")))
                .isEqualTo(FailureKind.REFUSED);
        assertThat(FailureKind.of(new io.rsocket.exceptions.ApplicationErrorException("boom"))).isEqualTo(FailureKind.OTHER);
        assertThat(FailureKind.of(new IllegalStateException("response of 3 bytes"))).isEqualTo(FailureKind.OTHER);
    }

    @Test
    void shouldGiveEachRatesFiguresAsFractionsOfTheCallsIssued() {
        long[] rtts = new long[100];
        for (int i = 0; i < rtts.length; i++) {
            rtts[i] = (i + 1) * 10_000L; // 10 .. 1000 µs
        }
        OpenLoop.Result result = new OpenLoop.Result(new int[100], rtts, 100, 200, 100, 0, 2.0, "TimeoutException: x",
                Map.of("timeout", 60L, "refused", 30L, "other", 10L), 180);
        Map<String, Object> m = OverloadScenario.rateMetrics(result, 100, 100);

        assertThat(m.get("offered_per_s")).isEqualTo(100.0);
        assertThat(m.get("goodput_per_s")).isEqualTo(90.0);
        assertThat(m.get("goodput_of_capacity")).isEqualTo(0.9);
        assertThat(m.get("timeout_fraction")).isEqualTo(0.3);
        assertThat(m.get("refused_fraction")).isEqualTo(0.15);
        assertThat(m.get("other_failure_fraction")).isEqualTo(0.05);
        assertThat(m.get("unfinished")).isEqualTo(0L);
        assertThat((double) m.get("p99_us")).isBetween(985.0, 1000.0);
    }

    private static ScenarioResult s11(double offered, double goodput, double timeouts, double p99Us) {
        Map<String, Object> at2x = new LinkedHashMap<>();
        at2x.put("offered_per_s", offered);
        at2x.put("goodput_per_s", goodput);
        at2x.put("p99_us", p99Us);
        at2x.put("refused_fraction", 0.4);
        at2x.put("timeout_fraction", timeouts);
        Map<String, Object> rates = new LinkedHashMap<>();
        rates.put("2x", at2x);
        Map<String, Object> metrics = new LinkedHashMap<>();
        metrics.put("capacity_per_s", 2_000L);
        metrics.put("unloaded_p50_us", 600.0);
        metrics.put("rates", rates);
        return ScenarioResult.ok("s11", "homa-rpc", "", metrics);
    }

    private static Targets.Check s11Check(ScenarioResult result) {
        return Targets.check(List.of(result)).stream().filter(c -> c.target().startsWith("S11")).findFirst().orElseThrow();
    }

    @Test
    void shouldCheckTheS11TargetAndNameWhatMissed() {
        assertThat(s11Check(s11(3_900, 1_900, 0, 5_000)).met()).isTrue();
        Targets.Check missed = s11Check(s11(3_900, 1_500, 0.01, 9_000));
        assertThat(missed.met()).isFalse();
        assertThat(missed.gap()).contains("goodput 75.0% of the capacity").contains("1.00% timed out").contains("15.0x");
        assertThat(Targets.check(List.of()).stream().filter(c -> c.target().startsWith("S11")).findFirst().orElseThrow()
                .met()).isNull();
    }

    @Test
    void shouldRenderATableOfSystemsAndRates() {
        BenchReport report = new BenchReport(Map.of("mode", "quick"), Map.of("s11", Scenario.S11.description()),
                List.of(s11(3_900, 1_900, 0, 5_000)), List.of(), Targets.check(List.of()), List.of());
        String md = ReportWriter.markdown(report);
        assertThat(md).contains("## S11 overload").contains("| homa-rpc | 2,000 | 600 | 2x |").contains("8.3x");
    }

    @Test
    void shouldParseTheScalingVariantAndLeaveItOutByDefault() {
        assertThat(Scenario.fromId("s11-scaling")).isEqualTo(Scenario.S11_SCALING);
        assertThat(Scenario.S11_SCALING.id()).isEqualTo("s11-scaling");
        assertThat(Scenario.defaultIds()).endsWith("s6,s10,s11");
        assertThat(Scenario.S11.notApplicable(SystemKind.UDP)).isNotNull();
        assertThat(Scenario.S11.notApplicable(SystemKind.HOMA_RPC)).isNull();
    }

    @Test
    void shouldCheckTheNumberOfHomaLoops() {
        assertThat(HomaLoops.check(0)).isZero();
        assertThat(HomaLoops.check(1)).isEqualTo(1);
        assertThat(HomaLoops.check(2)).isEqualTo(2);
        assertThatThrownBy(() -> HomaLoops.check(65)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--homa-loops must be between 1 and 64");
        assertThatThrownBy(() -> HomaLoops.check(-1)).isInstanceOf(IllegalArgumentException.class);
    }
}
