package io.homa.bench.scenario;

import io.homa.bench.cpu.CpuCost;
import io.homa.bench.cpu.CpuSampler;
import io.homa.bench.report.ScenarioResult;
import io.homa.bench.systems.EchoClient;
import io.homa.bench.systems.EchoProtocol;
import io.homa.bench.systems.FailureKind;
import io.homa.bench.systems.SystemKind;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;

/**
 * S11, overload: a handler that spends {@value #SPIN_US} µs of CPU per call, run where each system
 * runs blocking work ({@link EchoProtocol#SPIN}), on the first server (pinned to one core like the
 * other scenarios' servers, so its capacity is about one core's: 2,000 calls/s). For each system:
 * the unloaded round trip (1 outstanding), the capacity (closed loop, enough outstanding calls to
 * keep every handler thread busy), then Poisson arrivals at 0.5x, 1x, 1.5x and 2x that capacity,
 * every call with a deadline given the system's way ({@link EchoClient#call(int, byte[], long)}).
 * Each rate counts what became of the calls issued in its window: answered, refused by the server,
 * timed out, or failed otherwise. Before each rate the server is left to go idle, so that work a
 * system queued at one rate does not run in the next one's window (or the next system's).
 *
 * <p>{@link #scaling} is S11's scaling variant: the same handler on a server that is not pinned,
 * closed loop, with each process's CPU use.
 */
public final class OverloadScenario {
    /** CPU time each call costs the server's handler, µs. */
    public static final int SPIN_US = 500;
    /** Request (and response) length, bytes. */
    public static final int REQUEST_BYTES = 100;
    /** The offered rates as multiples of the capacity, with their report keys. */
    public static final Map<String, Double> RATES = rates();
    /** Cap on calls in flight in the open loop: far above any rate times the deadline, so no arrival is skipped. */
    static final int MAX_OUTSTANDING = 50_000;
    /** The server counts as idle when it used less than this fraction of a core over a settle sample. */
    static final double IDLE_CPU_FRACTION = 0.15;
    /** One settle sample. */
    static final long SETTLE_SAMPLE_MS = 100;

    /**
     * S11's durations.
     *
     * @param unloadedWarmupMs warm-up before the unloaded round trip (1 outstanding)
     * @param unloadedMs its window
     * @param capacityWarmupMs warm-up before the closed-loop capacity
     * @param capacityMs its window
     * @param capacityOutstanding calls in flight for the capacity: above the handler threads (one per
     *     core of the server, one on its one CPU) so that each always has the next call waiting,
     *     and within the bound on blocking calls of Homa's RPC layer (4 per thread) so that the
     *     capacity is measured without refusals
     * @param overloadWarmupMs Poisson arrivals at the highest rate once, unmeasured, before the
     *     first rate: refusals, deadlines and full queues take code paths that neither the warm-up
     *     nor the closed loop took, and on the server's one core the JIT compilers' work on them
     *     would otherwise share the core with the handler in the first windows
     * @param rateWarmupMs Poisson arrivals at each rate before its window (queues fill meanwhile)
     * @param rateMs each rate's window
     * @param deadlineMs every call's deadline in the Poisson phases
     * @param settleMaxMs longest wait for the server to go idle before a rate
     * @param scalingWarmupMs warm-up of each closed loop of the scaling variant
     * @param scalingMs its window
     * @param scalingOutstanding calls in flight in the scaling variant
     */
    public record Plan(long unloadedWarmupMs, long unloadedMs, long capacityWarmupMs, long capacityMs,
            int capacityOutstanding, long overloadWarmupMs, long rateWarmupMs, long rateMs, long deadlineMs, long settleMaxMs,
            long scalingWarmupMs, long scalingMs, int scalingOutstanding) {
        /** A few seconds per system: CI's smoke test. */
        public static Plan quick() {
            return new Plan(100, 300, 200, 500, 4, 300, 150, 600, 500, 2_000, 300, 800, 32);
        }

        /** About 40 s per system. */
        public static Plan full() {
            return new Plan(500, 2_000, 1_000, 3_000, 4, 5_000, 1_000, 5_000, 1_000, 15_000, 1_000, 5_000, 32);
        }

        /** The plan of a run mode ({@code quick} or {@code full}). */
        public static Plan of(String mode) {
            return "full".equals(mode) ? full() : quick();
        }
    }

    private final Plan plan;
    private final long drainMs;
    private final List<CpuSampler.Target> server;
    private final List<CpuSampler.Target> cpuSampled;

    /**
     * @param server the server process S11 loads, watched until it is idle before each rate;
     *     empty: a fixed pause instead
     */
    public OverloadScenario(Plan plan, long drainMs, List<CpuSampler.Target> server) {
        this(plan, drainMs, server, List.of());
    }

    /**
     * @param cpuSampled the client and the server, whose CPU time over each rate's window gives its
     *     CPU per answered call ({@code cpu_us_per_call_client}, {@code cpu_us_per_call_server});
     *     empty: none
     */
    public OverloadScenario(Plan plan, long drainMs, List<CpuSampler.Target> server, List<CpuSampler.Target> cpuSampled) {
        this.plan = plan;
        this.drainMs = drainMs;
        this.server = List.copyOf(server);
        this.cpuSampled = List.copyOf(cpuSampled);
    }

    private static Map<String, Double> rates() {
        Map<String, Double> rates = new LinkedHashMap<>();
        rates.put("0.5x", 0.5);
        rates.put("1x", 1.0);
        rates.put("1.5x", 1.5);
        rates.put("2x", 2.0);
        return java.util.Collections.unmodifiableMap(rates);
    }

    /** How each system runs S11's handler, for the report. */
    public static String handler(SystemKind system) {
        return switch (system) {
            case HOMA_RPC, HOMA_RPC_AUTH -> "blocking RpcMethod on the dispatcher's scheduler (one thread per core, as the"
                    + " starter with homa.server.threads = cores; max-blocking-calls at its default, 4 per thread);"
                    + " the deadline travels with the call and a request whose deadline passed is not started";
            case HOMA, HOMA_AUTH -> "subscribeOn the CPU pool in the handler; no deadline on the wire: the caller"
                    + " cancels the call when it passes";
            case GRPC -> "the CPU pool (the handler hops there from the event loop, or from gRPC's own executor with"
                    + " --no-grpc-direct-executor); the deadline is sent (grpc-timeout) and a call cancelled before"
                    + " its turn is not started";
            case GRPC_HOMA -> "grpc's handler: the CPU pool (it hops there from the Homa transport's event loop, or from"
                    + " homa-grpc's default pool with --no-grpc-direct-executor); the deadline travels with the call (the"
                    + " RPC layer's envelope and the gRPC prelude) and a call cancelled before its turn is not started";
            case RSOCKET -> "subscribeOn the CPU pool in the handler; no deadline on the wire: the caller's timeout"
                    + " cancels the request (CANCEL frame), and a cancelled call not yet started is not run";
            case UDP, TCP -> "n/a";
        };
    }

    /** S11 for one system. */
    public ScenarioResult run(SystemKind system, EchoClient client) {
        byte[] request = EchoProtocol.spinRequest(REQUEST_BYTES, SPIN_US, false);
        Map<String, Object> metrics = new LinkedHashMap<>();
        metrics.put("spin_us", SPIN_US);
        metrics.put("request_bytes", REQUEST_BYTES);
        metrics.put("deadline_ms", plan.deadlineMs());
        metrics.put("handler", handler(system));

        ClosedLoop unloaded = new ClosedLoop(client, 0, () -> request, 1, plan.deadlineMs() * 10);
        ClosedLoop.runTogether(plan.unloadedWarmupMs(), plan.unloadedMs(), drainMs, unloaded);
        Histogram unloadedLatency = unloaded.latency();
        if (unloadedLatency.getTotalCount() == 0) {
            return ScenarioResult.failed("s11", system.id(), "no unloaded call completed"
                    + (unloaded.firstError() == null ? "" : "; first error: " + unloaded.firstError()));
        }
        metrics.put("unloaded_p50_us", LatencyStats.us(unloadedLatency.getValueAtPercentile(50)));
        metrics.put("unloaded_p99_us", LatencyStats.us(unloadedLatency.getValueAtPercentile(99)));

        ClosedLoop saturated = new ClosedLoop(client, 0, () -> request, plan.capacityOutstanding(), plan.deadlineMs() * 10);
        ClosedLoop.runTogether(plan.capacityWarmupMs(), plan.capacityMs(), drainMs, saturated);
        double capacity = saturated.completedInWindow() / (plan.capacityMs() / 1000.0);
        if (saturated.completedInWindow() == 0) {
            return ScenarioResult.failed("s11", system.id(), "no call completed in the closed loop"
                    + (saturated.firstError() == null ? "" : "; first error: " + saturated.firstError()));
        }
        metrics.put("capacity_per_s", Math.round(capacity));
        metrics.put("capacity_outstanding", plan.capacityOutstanding());
        metrics.put("capacity_p50_us", LatencyStats.us(saturated.latency().getValueAtPercentile(50)));
        metrics.put("capacity_failures", saturated.failed());

        double highest = RATES.values().stream().mapToDouble(Double::doubleValue).max().orElseThrow();
        openLoop(client, request, capacity * highest, 10).run(0, plan.overloadWarmupMs(), plan.deadlineMs() + drainMs);

        Map<String, Object> rates = new LinkedHashMap<>();
        StringBuilder note = new StringBuilder();
        long seed = 11;
        for (Map.Entry<String, Double> rate : RATES.entrySet()) {
            long settledMs = settle();
            double target = capacity * rate.getValue();
            CpuCost cpu = new CpuCost(cpuSampled);
            OpenLoop.Result result = openLoop(client, request, target, seed++)
                    .run(plan.rateWarmupMs(), plan.rateMs(), plan.deadlineMs() + drainMs, cpu::start, cpu::stop);
            Map<String, Object> figures = rateMetrics(result, target, capacity);
            figures.put("settle_ms", settledMs);
            // Per call answered within the window: what the CPU of the window bought.
            figures.putAll(cpu.perCall(result.answeredInWindow()));
            rates.put(rate.getKey(), figures);
            if (result.firstError() != null && note.isEmpty()) {
                note.append("first failed call (").append(rate.getKey()).append("): ").append(result.firstError());
            }
        }
        metrics.put("rates", rates);
        metrics.put("settle_ms_after", settle());
        return ScenarioResult.ok("s11", system.id(), note.toString(), metrics);
    }

    /** One rate's figures; fractions are of the calls issued in the window. */
    /** Poisson arrivals of S11's request at {@code perSecond}, every call with the plan's deadline. */
    private OpenLoop openLoop(EchoClient client, byte[] request, double perSecond, long seed) {
        return new OpenLoop(client, 0, u -> REQUEST_BYTES, perSecond, MAX_OUTSTANDING, plan.deadlineMs(), seed)
                .requests(length -> request)
                .withDeadlines();
    }

    static Map<String, Object> rateMetrics(OpenLoop.Result result, double targetPerSecond, double capacityPerSecond) {
        Map<String, Object> m = new LinkedHashMap<>();
        double seconds = result.windowSeconds();
        long issued = result.issuedInWindow();
        long refused = result.failedInWindowByKind().getOrDefault(FailureKind.REFUSED.id(), 0L);
        long timedOut = result.failedInWindowByKind().getOrDefault(FailureKind.TIMEOUT.id(), 0L);
        long other = result.failedInWindowByKind().getOrDefault(FailureKind.OTHER.id(), 0L);
        m.put("target_per_s", Math.round(targetPerSecond));
        m.put("offered_per_s", round1(issued / seconds));
        // Answers that arrived within the window: what the server delivered while it ran at this rate.
        m.put("goodput_per_s", round1(result.answeredInWindow() / seconds));
        m.put("goodput_of_capacity", capacityPerSecond > 0 ? round3(result.answeredInWindow() / seconds / capacityPerSecond) : 0.0);
        if (result.recorded() > 0) {
            Histogram latency = LatencyStats.newHistogram();
            for (int i = 0; i < result.recorded(); i++) {
                LatencyStats.record(latency, result.rttNs()[i]);
            }
            m.put("p50_us", LatencyStats.us(latency.getValueAtPercentile(50)));
            m.put("p99_us", LatencyStats.us(latency.getValueAtPercentile(99)));
            m.put("max_us", LatencyStats.us(latency.getMaxValue()));
        }
        m.put("refused_fraction", fraction(refused, issued));
        m.put("timeout_fraction", fraction(timedOut, issued));
        m.put("other_failure_fraction", fraction(other, issued));
        m.put("issued", issued);
        m.put("answered", result.recorded());
        m.put("answered_in_window", result.answeredInWindow());
        m.put("refused", refused);
        m.put("timed_out", timedOut);
        m.put("other_failures", other);
        // Calls neither answered nor failed by the end of the drain (none while the drain outlasts the deadline).
        m.put("unfinished", Math.max(0, issued - result.recorded() - refused - timedOut - other));
        m.put("skipped", result.skipped());
        m.put("window_s", seconds);
        if (result.firstError() != null) {
            m.put("first_error", result.firstError());
        }
        return m;
    }

    /**
     * Waits until the server used less than {@link #IDLE_CPU_FRACTION} of a core over
     * {@link #SETTLE_SAMPLE_MS}, at most {@link Plan#settleMaxMs()}: work a system queued (a
     * handler pool's backlog that no deadline stops) must not run in the next window.
     *
     * @return how long it waited, ms
     */
    long settle() {
        long startNs = System.nanoTime();
        if (server.isEmpty()) {
            ClosedLoop.sleepMs(SETTLE_SAMPLE_MS);
            return SETTLE_SAMPLE_MS;
        }
        long deadlineNs = startNs + plan.settleMaxMs() * 1_000_000;
        while (System.nanoTime() < deadlineNs) {
            CpuSampler sampler = new CpuSampler(server);
            sampler.start();
            ClosedLoop.sleepMs(SETTLE_SAMPLE_MS);
            CpuSampler.@Nullable Usage usage = sampler.stop();
            if (usage == null || usage.processes().stream()
                    .allMatch(p -> p.missing() || p.cpuFraction() < IDLE_CPU_FRACTION)) {
                break;
            }
        }
        return (System.nanoTime() - startNs) / 1_000_000;
    }

    /**
     * S11's scaling variant for one system: the server (not pinned) runs the handler as S11 does
     * ({@code scheduler}), then on the event loop ({@code loop}, a reactive handler: what more
     * event loops spread over cores), each closed loop with {@link Plan#scalingOutstanding()}
     * calls in flight, spread over {@code clients}: several client endpoints, since the kernel
     * spreads a server's requests over its loops' sockets by the clients' addresses (one client
     * endpoint calls one server from one socket, as one gRPC channel is one connection);
     * throughput, latency and each process's CPU use over the window.
     *
     * @param cpuSampled the client and the server process
     * @param homaLoops the run's {@code --homa-loops} (0: the transport's default), reported
     */
    public ScenarioResult scaling(SystemKind system, List<EchoClient> clients, List<CpuSampler.Target> cpuSampled,
            int homaLoops) {
        Map<String, Object> metrics = new LinkedHashMap<>();
        metrics.put("spin_us", SPIN_US);
        metrics.put("outstanding", plan.scalingOutstanding());
        metrics.put("clients", clients.size());
        if (system.homa()) {
            metrics.put("homa_loops", homaLoops == 0 ? "transport default" : homaLoops);
        }
        String note = "";
        boolean any = false;
        int perClient = Math.max(1, plan.scalingOutstanding() / clients.size());
        for (boolean inline : new boolean[] {false, true}) {
            byte[] request = EchoProtocol.spinRequest(REQUEST_BYTES, SPIN_US, inline);
            ClosedLoop[] loops = new ClosedLoop[clients.size()];
            for (int i = 0; i < loops.length; i++) {
                loops[i] = new ClosedLoop(clients.get(i), 0, () -> request, perClient, plan.deadlineMs() * 10);
            }
            CpuSampler sampler = new CpuSampler(cpuSampled);
            ClosedLoop.runTogether(plan.scalingWarmupMs(), plan.scalingMs(), drainMs, sampler::start, sampler::stop, loops);
            Histogram latency = LatencyStats.newHistogram();
            long completed = 0;
            long failed = 0;
            String firstError = null;
            for (ClosedLoop loop : loops) {
                latency.add(loop.latency());
                completed += loop.completedInWindow();
                failed += loop.failed();
                if (firstError == null) {
                    firstError = loop.firstError();
                }
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("rpcs_per_s", Math.round(completed / (plan.scalingMs() / 1000.0)));
            m.putAll(LatencyStats.summary(latency, ""));
            m.put("failures", failed);
            if (sampler.usage() != null) {
                m.put("cpu", sampler.usage().toMetrics());
                CpuCost cost = new CpuCost(List.of());
                cost.add(sampler.usage());
                m.putAll(cost.perCall(completed));
            }
            metrics.put(inline ? "loop" : "scheduler", m);
            any |= completed > 0;
            if (firstError != null && note.isEmpty()) {
                note = failed + " failed calls, first: " + firstError;
            }
        }
        if (!any) {
            return ScenarioResult.failed("s11-scaling", system.id(), "no call completed" + (note.isEmpty() ? "" : "; " + note));
        }
        return ScenarioResult.ok("s11-scaling", system.id(), note, metrics);
    }

    private static double fraction(long part, long whole) {
        return whole == 0 ? 0.0 : Math.round(part * 10_000.0 / whole) / 10_000.0;
    }

    private static double round1(double value) {
        return Math.round(value * 10) / 10.0;
    }

    private static double round3(double value) {
        return Math.round(value * 1000) / 1000.0;
    }

    /** A short summary of an S11 result for the progress log. */
    public static String summary(ScenarioResult result) {
        StringBuilder text = new StringBuilder(String.format(Locale.ROOT, "capacity %,.0f/s, unloaded p50 %.0f µs",
                result.number("capacity_per_s"), result.number("unloaded_p50_us")));
        if (result.metrics().get("rates") instanceof Map<?, ?> rates) {
            rates.forEach((key, value) -> {
                if (value instanceof Map<?, ?> m) {
                    text.append(String.format(Locale.ROOT, "; %s: goodput %s/s, p99 %s µs, refused %s, timeouts %s", key,
                            m.get("goodput_per_s"), m.get("p99_us"), m.get("refused_fraction"), m.get("timeout_fraction")));
                }
            });
        }
        return text.toString();
    }
}
