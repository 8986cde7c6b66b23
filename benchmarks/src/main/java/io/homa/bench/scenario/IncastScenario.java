package io.homa.bench.scenario;

import static io.homa.bench.scenario.ScenarioRunner.INCAST_RESPONSE_BYTES;

import io.homa.bench.cpu.CpuCost;
import io.homa.bench.cpu.CpuSampler;
import io.homa.bench.report.ScenarioResult;
import io.homa.bench.systems.EchoClient;
import io.homa.bench.systems.EchoProtocol;
import io.homa.bench.systems.SystemKind;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.HdrHistogram.Histogram;

/**
 * S6: bursts of N concurrent calls (100 B request, 10 KB response) spread round-robin over the
 * servers. Like every other scenario it first runs unmeasured: as many rounds of every N as it
 * measures, and at least {@link RunPlan#s6WarmupMs()}. Its pattern (many calls at once, incast
 * marking, RESENDs while servers are busy) takes code paths no closed loop does: measured at once,
 * the first bursts would time the JIT compilers of the client and the servers, not the system.
 */
final class IncastScenario {
    private final RunPlan plan;
    private final Supplier<Map<Integer, long[]>> networkCounters;
    private final List<CpuSampler.Target> cpuSampled;

    /**
     * @param networkCounters the network's packet counters per priority class ({sent, dropped}),
     *     read before and after each N (see {@link ScenarioRunner#networkCounters})
     * @param cpuSampled the client and every server the bursts go to, whose CPU time over each N's
     *     measured bursts gives its CPU per call; empty: none
     */
    IncastScenario(RunPlan plan, Supplier<Map<Integer, long[]>> networkCounters, List<CpuSampler.Target> cpuSampled) {
        this.plan = plan;
        this.networkCounters = networkCounters;
        this.cpuSampled = List.copyOf(cpuSampled);
    }


    /** One S6 burst: when its last call ended, how many failed, the first failure. */
    private record Burst(double completionMs, int failed, String firstError) {}

    /**
     * Issues {@code fanout} concurrent calls spread round-robin over the servers and waits for all.
     *
     * @param perCall where each successful call's latency goes, or null (warm-up)
     */
    private Burst burst(EchoClient client, byte[] request, int fanout, Histogram perCall) {
        AtomicInteger failed = new AtomicInteger();
        AtomicLong lastEnd = new AtomicLong();
        AtomicReference<String> error = new AtomicReference<>();
        CompletableFuture<?>[] calls = new CompletableFuture<?>[fanout];
        long start = System.nanoTime();
        for (int i = 0; i < fanout; i++) {
            CompletableFuture<byte[]> call;
            try {
                call = client.call(i % client.targets(), request);
            } catch (RuntimeException e) {
                call = CompletableFuture.failedFuture(e);
            }
            calls[i] = call.orTimeout(plan.s6TimeoutMs(), TimeUnit.MILLISECONDS).handle((response, e) -> {
                long end = System.nanoTime();
                lastEnd.accumulateAndGet(end, Math::max);
                if (e == null && response.length == INCAST_RESPONSE_BYTES) {
                    if (perCall != null) {
                        synchronized (perCall) {
                            LatencyStats.record(perCall, end - start);
                        }
                    }
                } else {
                    failed.incrementAndGet();
                    error.compareAndSet(null, e == null ? "response of " + response.length + " bytes"
                            : ClosedLoop.describe(e));
                }
                return null;
            });
        }
        CompletableFuture.allOf(calls).join();
        return new Burst((lastEnd.get() - start) / 1e6, failed.get(), error.get());
    }

    /** Runs S6 for {@code system} through its {@code client}. */
    ScenarioResult run(SystemKind system, EchoClient client) {
        byte[] request = EchoProtocol.request(ScenarioRunner.SMALL_BYTES, INCAST_RESPONSE_BYTES);
        long warmupEndNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(plan.s6WarmupMs());
        int warmupRounds = 0;
        do {
            for (int fanout : plan.s6Fanouts()) {
                burst(client, request, fanout, null);
                ClosedLoop.sleepMs(50);
            }
        } while (++warmupRounds < plan.s6Repetitions() || System.nanoTime() - warmupEndNs < 0);
        List<Map<String, Object>> rows = new ArrayList<>();
        long totalOk = 0;
        String firstError = null;
        // CPU over each N's measured bursts, from before its first to after the pause that follows
        // its last (what a burst leaves to do, acknowledgements and clean-up, is done by then).
        CpuCost allCpu = new CpuCost(cpuSampled);
        for (int fanout : plan.s6Fanouts()) {
            Map<Integer, long[]> networkBefore = networkCounters.get();
            double[] completionMs = new double[plan.s6Repetitions()];
            Histogram perCall = LatencyStats.newHistogram();
            long failures = 0;
            long okBefore = totalOk;
            CpuCost cpu = new CpuCost(cpuSampled);
            cpu.start();
            for (int rep = 0; rep < plan.s6Repetitions(); rep++) {
                Burst burst = burst(client, request, fanout, perCall);
                completionMs[rep] = burst.completionMs();
                failures += burst.failed();
                totalOk += fanout - burst.failed();
                if (firstError == null) {
                    firstError = burst.firstError();
                }
                ClosedLoop.sleepMs(50);
            }
            allCpu.add(cpu.stop());
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("n", fanout);
            row.put("repetitions", plan.s6Repetitions());
            row.put("completion_median_ms", LatencyStats.round2(LatencyStats.percentile(completionMs.clone(), completionMs.length, 50)));
            row.put("completion_max_ms", LatencyStats.round2(LatencyStats.percentile(completionMs.clone(), completionMs.length, 100)));
            row.put("failures", failures);
            row.put("calls", (long) fanout * plan.s6Repetitions());
            if (perCall.getTotalCount() > 0) {
                row.put("call_p50_us", LatencyStats.us(perCall.getValueAtPercentile(50)));
                row.put("call_p99_us", LatencyStats.us(perCall.getValueAtPercentile(99)));
            }
            row.putAll(cpu.perCall(totalOk - okBefore));
            Map<Integer, long[]> networkAfter = networkCounters.get();
            if (!networkBefore.isEmpty() && !networkAfter.isEmpty()) {
                long dropped = 0;
                Map<String, Long> sentByClass = new LinkedHashMap<>();
                for (Map.Entry<Integer, long[]> entry : ScenarioRunner.classDelta(networkBefore, networkAfter).entrySet()) {
                    dropped += entry.getValue()[1];
                    sentByClass.put("priority" + entry.getKey(), entry.getValue()[0]);
                }
                row.put("network_dropped_packets", dropped);
                row.put("network_packets_by_class", sentByClass);
            }
            rows.add(row);
        }
        Map<String, Object> metrics = new LinkedHashMap<>();
        metrics.put("servers", client.targets());
        metrics.put("response_bytes", INCAST_RESPONSE_BYTES);
        metrics.put("fanouts", rows);
        Map<String, Object> last = rows.get(rows.size() - 1);
        metrics.put("max_n", last.get("n"));
        metrics.put("completion_ms_at_max_n", last.get("completion_median_ms"));
        metrics.put("failures_at_max_n", last.get("failures"));
        metrics.put("failures", rows.stream().mapToLong(row -> (Long) row.get("failures")).sum());
        // Every N together, per call answered: the client and every server the bursts went to.
        metrics.putAll(allCpu.perCall(totalOk));
        if (last.containsKey("network_dropped_packets")) {
            metrics.put("network_dropped_packets_at_max_n", last.get("network_dropped_packets"));
            metrics.put("network_dropped_packets", rows.stream()
                    .mapToLong(row -> (Long) row.getOrDefault("network_dropped_packets", 0L)).sum());
        }
        String note = firstError == null ? "" : "first failure: " + firstError;
        return totalOk == 0
                ? ScenarioResult.failed(Scenario.S6.id(), system.id(), "every incast call failed; " + note)
                : ScenarioResult.ok(Scenario.S6.id(), system.id(), note, metrics);
    }
}
