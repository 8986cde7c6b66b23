package io.homa.bench.scenario;

import io.homa.bench.cpu.CpuCost;
import io.homa.bench.cpu.CpuSampler;
import io.homa.bench.report.ScenarioResult;
import io.homa.bench.systems.EchoClient;
import io.homa.bench.systems.EchoProtocol;
import io.homa.bench.systems.SystemKind;
import io.homa.workloads.Workload;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/** Runs the scenarios against connected clients; one method per scenario. */
public final class ScenarioRunner {
    /** Short message length of S1-S3 and the incast request. */
    public static final int SMALL_BYTES = 100;
    /** Long message length of S2 and S4. */
    public static final int LARGE_BYTES = 1024 * 1024;
    /** Incast response length. */
    public static final int INCAST_RESPONSE_BYTES = 10_000;
    /** Lengths at which S5 measures unloaded round trips (the slowdown baseline). */
    public static final int[] CALIBRATION_LENGTHS = {8, 100, 1_000, 10_000, 100_000, 1_000_000};
    /** Cap on calls in flight in the Poisson load of S5. */
    public static final int S5_MAX_OUTSTANDING = 1_000;

    private final RunPlan plan;
    private final Map<SystemKind, EchoClient> clients;
    private final double s5LoadFraction;
    private final Map<String, Double> s5RatesPerSecond;
    private Function<SystemKind, List<Long>> countedPids;

    /**
     * @param s5LoadFraction the Poisson rate in S5 as a fraction of the system's measured maximum, (0, 1]
     */
    public ScenarioRunner(RunPlan plan, Map<SystemKind, EchoClient> clients, double s5LoadFraction) {
        this(plan, clients, s5LoadFraction, Map.of());
    }

    /**
     * @param s5LoadFraction the Poisson rate in S5 as a fraction of the system's measured maximum, (0, 1]
     * @param s5RatesPerSecond per workload name (w1..w5), an absolute Poisson rate in calls per second that
     *     replaces the fraction for that workload, so that every system gets the same offered load; each &gt; 0
     * @throws IllegalArgumentException for a fraction outside (0, 1] or a rate that is not positive and finite
     */
    public ScenarioRunner(RunPlan plan, Map<SystemKind, EchoClient> clients, double s5LoadFraction,
            Map<String, Double> s5RatesPerSecond) {
        this(plan, clients, s5LoadFraction, s5RatesPerSecond, List.of());
    }

    /**
     * @param countedPids processes whose system calls S4 counts (the client's and the first
     *     server's), empty for none
     */
    public ScenarioRunner(RunPlan plan, Map<SystemKind, EchoClient> clients, double s5LoadFraction,
            Map<String, Double> s5RatesPerSecond, List<Long> countedPids) {
        if (!(s5LoadFraction > 0 && s5LoadFraction <= 1)) {
            throw new IllegalArgumentException("--s5-load must be in (0, 1], was " + s5LoadFraction);
        }
        s5RatesPerSecond.forEach((workload, rate) -> {
            if (!(rate > 0 && rate < Double.POSITIVE_INFINITY)) {
                throw new IllegalArgumentException("--s5-rps " + workload + " must be a positive number of calls per second, was " + rate);
            }
        });
        this.plan = plan;
        this.clients = clients;
        this.s5LoadFraction = s5LoadFraction;
        this.s5RatesPerSecond = Map.copyOf(s5RatesPerSecond);
        List<Long> pids = List.copyOf(countedPids);
        this.countedPids = system -> pids;
    }

    /** The processes whose system calls S4 counts for each system (its client's and its server's); empty for none. */
    public ScenarioRunner syscallPids(Function<SystemKind, List<Long>> pids) {
        this.countedPids = pids;
        return this;
    }

    /**
     * Where S6 reads the network's packet counters per priority class ({sent, dropped}), before and
     * after each fan-out: the testbed's queues ({@code --net=testbed}); none on loopback.
     */
    public ScenarioRunner networkCounters(Supplier<Map<Integer, long[]>> counters) {
        this.networkCounters = counters;
        return this;
    }

    private Supplier<Map<Integer, long[]>> networkCounters = Map::of;

    /** Network counters {sent, dropped} per priority class: {@code after - before}, class by class. */
    public static Map<Integer, long[]> classDelta(Map<Integer, long[]> before, Map<Integer, long[]> after) {
        Map<Integer, long[]> delta = new LinkedHashMap<>();
        after.forEach((priority, counts) -> {
            long[] earlier = before.getOrDefault(priority, new long[2]);
            delta.put(priority, new long[] {counts[0] - earlier[0], counts[1] - earlier[1]});
        });
        return delta;
    }

    /** S5's Poisson load run from elsewhere (other hosts) instead of from this process's client. */
    public interface RemoteLoad {
        /**
         * What the load processes measured.
         *
         * @param result every call recorded in the window, with failures and skipped arrivals
         * @param cpu CPU use over the window of the sampled processes and the load processes; null
         *     when not sampled
         */
        record Outcome(OpenLoop.Result result, CpuSampler.@Nullable Usage cpu) {}

        /**
         * @param ratePerSecond calls per second of every load process together
         * @param measureMs the window of every load process ({@link S5Window})
         * @param cpuSampled processes whose CPU use to sample over the window besides the load
         *     processes (role {@code agent}); empty for no sampling
         */
        Outcome run(SystemKind system, String workload, double ratePerSecond, long measureMs, long seed,
                List<CpuSampler.Target> cpuSampled);
    }

    private RemoteLoad remoteLoad;
    private double remoteRateFactor = 1;

    /**
     * Runs S5's load phase through {@code load} (its calibration and maximum stay local).
     *
     * @param rateFactor calls per second the load processes offer in all for each call per second of
     *     S5's rate, &gt; 0: 1, or with {@code --s5-all-to-all} hosts / 2 (each host offers half of it)
     */
    public ScenarioRunner s5RemoteLoad(double rateFactor, RemoteLoad load) {
        if (!(rateFactor > 0 && rateFactor < Double.POSITIVE_INFINITY)) {
            throw new IllegalArgumentException("rateFactor must be positive and finite, was " + rateFactor);
        }
        this.remoteLoad = load;
        this.remoteRateFactor = rateFactor;
        return this;
    }

    private int s5MinCalls;

    /**
     * Each S5 workload's window lasts long enough for {@code minCalls} recorded calls at the offered
     * rate, all load processes together ({@link S5Window}); 0 (the default): the plan's window.
     *
     * @throws IllegalArgumentException outside 0..{@link S5Window#MAX_MIN_CALLS}
     */
    public ScenarioRunner s5MinCalls(int minCalls) {
        this.s5MinCalls = S5Window.checkMinCalls(minCalls);
        return this;
    }

    private Function<SystemKind, List<CpuSampler.Target>> cpuSampled = system -> List.of();

    /** Processes whose CPU use (and every core's) S5 samples over each workload's window; empty (the default): none. */
    public ScenarioRunner cpuSampled(List<CpuSampler.Target> targets) {
        List<CpuSampler.Target> copy = List.copyOf(targets);
        return cpuSampledBySystem(system -> copy);
    }

    /** As {@link #cpuSampled(List)}, the processes by system (the client and the servers S5 loads). */
    public ScenarioRunner cpuSampledBySystem(Function<SystemKind, List<CpuSampler.Target>> targets) {
        this.cpuSampled = targets;
        return this;
    }

    private Function<SystemKind, List<CpuSampler.Target>> cpuServers = system -> List.of();

    /**
     * Each system's server processes by index, role {@code server} (index 0 the one S1-S4, S10 and
     * S11 call; S6 calls them all): each measured window's CPU time of this process (the client)
     * and of those servers gives the scenario's CPU per call or per MiB ({@link CpuCost}). None (the
     * default): no CPU figures.
     */
    public ScenarioRunner cpuServers(Function<SystemKind, List<CpuSampler.Target>> servers) {
        this.cpuServers = servers;
        return this;
    }

    /** This process as the client side of a CPU sample. */
    public static CpuSampler.Target self() {
        return new CpuSampler.Target("client", ProcessHandle.current().pid());
    }

    /** What a window of {@code system} samples: this process and its first {@code servers} servers; empty without servers. */
    List<CpuSampler.Target> cpuTargets(SystemKind system, int servers) {
        List<CpuSampler.Target> known = cpuServers.apply(system);
        if (known.isEmpty()) {
            return List.of();
        }
        List<CpuSampler.Target> targets = new ArrayList<>();
        targets.add(self());
        targets.addAll(known.subList(0, Math.min(servers, known.size())));
        return targets;
    }

    private Function<SystemKind, List<CpuSampler.Target>> overloadServer = system -> List.of();

    /** The server process S11 loads, by system, which it waits to go idle before each rate; empty (the default): a fixed pause. */
    public ScenarioRunner overloadServer(Function<SystemKind, List<CpuSampler.Target>> server) {
        this.overloadServer = server;
        return this;
    }

    /** S11, overload, for one system; see {@link OverloadScenario}. */
    public ScenarioResult s11(SystemKind system) {
        return new OverloadScenario(OverloadScenario.Plan.of(plan.mode()), plan.callTimeoutMs(), overloadServer.apply(system),
                cpuTargets(system, 1)).run(system, client(system));
    }

    /**
     * S10, streaming, for several systems taking turns slice by slice; see {@link StreamingScenario}.
     * A system whose client has no streams fails (S10 is n/a for those: {@link Scenario#notApplicable}).
     */
    public Map<SystemKind, ScenarioResult> s10(List<SystemKind> systems) {
        Map<SystemKind, io.homa.bench.systems.EchoStreams> streams = new LinkedHashMap<>();
        Map<SystemKind, ScenarioResult> results = new LinkedHashMap<>();
        for (SystemKind system : systems) {
            io.homa.bench.systems.EchoStreams s = client(system).streams();
            if (s == null) {
                results.put(system, ScenarioResult.failed(Scenario.S10.id(), system.id(), "the client has no streams"));
            } else {
                streams.put(system, s);
            }
        }
        Map<SystemKind, ScenarioResult> measured = new StreamingScenario(StreamingScenario.Plan.of(plan.mode()),
                system -> cpuTargets(system, 1)).run(streams);
        for (SystemKind system : systems) {
            ScenarioResult result = measured.get(system);
            if (result != null) {
                results.put(system, result);
            }
        }
        return results;
    }

    private EchoClient client(SystemKind system) {
        EchoClient client = clients.get(system);
        if (client == null) {
            throw new IllegalStateException("no client for " + system.id());
        }
        return client;
    }

    private static Supplier<byte[]> fixed(int lengthBytes) {
        byte[] request = EchoProtocol.echoRequest(lengthBytes);
        return () -> request;
    }

    /** Runs a scenario body and adds the change of the client's protocol counters (if any) to its metrics. */
    public ScenarioResult withCounters(SystemKind system, java.util.function.Supplier<ScenarioResult> body) {
        Map<String, Long> before = client(system).counters();
        return withCounterChange(system, before, body.get());
    }

    /** {@code result} with {@code client_counters}: how the system's client counters moved since {@code before}. */
    private ScenarioResult withCounterChange(SystemKind system, Map<String, Long> before, ScenarioResult result) {
        if (!before.isEmpty() && result.status().equals(ScenarioResult.OK)) {
            Map<String, Long> after = client(system).counters();
            Map<String, Long> delta = new LinkedHashMap<>();
            after.forEach((name, value) -> {
                long change = value - before.getOrDefault(name, 0L);
                if (change != 0) {
                    delta.put(name, change);
                }
            });
            result.metrics().put("client_counters", delta);
        }
        return result;
    }

    /**
     * Warms up a system (JIT, pools, connections): small and medium echoes to the first server,
     * closed loop, and S6's calls (100 B requests, 10 KB responses) to every other server, which
     * only S6 calls: measured cold, its bursts timed those servers' JIT compilers, not the system.
     */
    public void warmup(SystemKind system) {
        EchoClient client = client(system);
        int medium = Math.min(64 * 1024, system.maxMessageBytes());
        List<ClosedLoop> loops = new ArrayList<>();
        loops.add(new ClosedLoop(client, 0, fixed(SMALL_BYTES), 16, plan.callTimeoutMs()));
        loops.add(new ClosedLoop(client, 0, fixed(medium), 1, plan.callTimeoutMs()));
        byte[] incast = EchoProtocol.request(SMALL_BYTES, INCAST_RESPONSE_BYTES);
        for (int target = 1; target < client.targets(); target++) {
            loops.add(new ClosedLoop(client, target, () -> incast, 16, plan.callTimeoutMs()));
        }
        ClosedLoop.runTogether(0, plan.warmupMs(), plan.callTimeoutMs(), loops.toArray(ClosedLoop[]::new));
    }

    private static Map<String, Object> loopMetrics(ClosedLoop loop, long measureMs, String prefix) {
        Map<String, Object> metrics = new LinkedHashMap<>();
        double seconds = measureMs / 1000.0;
        metrics.put(prefix + "rpcs_per_s", Math.round(loop.completedInWindow() / seconds));
        metrics.putAll(LatencyStats.summary(loop.latency(), prefix));
        metrics.put(prefix + "failures", loop.failed());
        return metrics;
    }

    private static ScenarioResult finish(Scenario scenario, SystemKind system, Map<String, Object> metrics,
            ClosedLoop... loops) {
        StringBuilder note = new StringBuilder();
        for (ClosedLoop loop : loops) {
            if (loop.firstError() != null && note.isEmpty()) {
                note.append(loop.failed()).append(" failed calls, first: ").append(loop.firstError());
            }
            if (loop.completedInWindow() == 0) {
                return ScenarioResult.failed(scenario.id(), system.id(),
                        "no call completed in the measurement window" + (note.isEmpty() ? "" : "; " + note));
            }
        }
        return ScenarioResult.ok(scenario.id(), system.id(), note.toString(), metrics);
    }

    /**
     * A closed-loop scenario (S1-S4) of one system, run alone: its slices one after another (see
     * {@link #interleave}). S1: 100 B echoes, 1 outstanding. S2: the same, measured while 1 MiB
     * echoes stream on the same client to the same server. S3: 100 B echoes, 32 outstanding. S4:
     * 1 MiB echoes, 4 outstanding; goodput counts response payload bytes (one direction).
     *
     * @throws IllegalArgumentException for S5 or S6
     */
    public ScenarioResult closedLoop(Scenario scenario, SystemKind system) {
        Measurement measurement = measurement(scenario, system);
        interleave(List.of(measurement));
        return measurement.result();
    }

    /**
     * A closed-loop scenario (S1-S4) of one system, not yet run; what each measures: {@link #closedLoop}.
     *
     * @throws IllegalArgumentException for S5 or S6
     */
    public Measurement measurement(Scenario scenario, SystemKind system) {
        EchoClient client = client(system);
        return switch (scenario) {
            case S1 -> new Measurement(scenario, system, plan.s1MeasureMs(),
                    new ClosedLoop(client, 0, fixed(SMALL_BYTES), 1, plan.callTimeoutMs()));
            case S2 -> new Measurement(scenario, system, plan.s2MeasureMs(),
                    new ClosedLoop(client, 0, fixed(SMALL_BYTES), 1, plan.callTimeoutMs()),
                    new ClosedLoop(client, 0, fixed(LARGE_BYTES), plan.s2LargeOutstanding(), plan.callTimeoutMs()));
            case S3 -> new Measurement(scenario, system, plan.s3MeasureMs(),
                    new ClosedLoop(client, 0, fixed(SMALL_BYTES), 32, plan.callTimeoutMs()));
            case S4 -> new Measurement(scenario, system, plan.s4MeasureMs(),
                    new ClosedLoop(client, 0, fixed(LARGE_BYTES), 4, plan.callTimeoutMs()));
            case S5, S6, S9, S10, S11, S11_SCALING -> throw new IllegalArgumentException(scenario.id() + " is not a closed-loop scenario");
        };
    }

    /**
     * Runs the measurements' slices ({@link RunPlan#slices()}) in turns: the first slice of every
     * system, then the second, each turn starting one system later. The load of a shared host
     * drifts over minutes (another system's figure measured a minute later is measured on another
     * machine); in turns, that drift weighs on every system of the run alike.
     */
    public void interleave(List<Measurement> measurements) {
        int count = measurements.size();
        for (int slice = 0; slice < plan.slices(); slice++) {
            for (int i = 0; i < count; i++) {
                measurements.get((i + slice) % count).slice();
            }
        }
    }

    /**
     * One system's closed-loop scenario, measured in {@link RunPlan#slices()} slices of its window.
     * The first slice runs {@link RunPlan#scenarioWarmupMs()} unmeasured first, later ones a fifth
     * of it (the system is warm; only its calls had stopped); calls in flight drain at each slice's
     * end, so slices of different systems never overlap. Figures are over all slices together.
     */
    public final class Measurement {
        private final Scenario scenario;
        private final SystemKind system;
        private final long sliceMs;
        private final ClosedLoop[] loops;
        private final Map<String, Long> countersBefore;
        private int slicesRun;
        private @Nullable RuntimeException crash;
        /** S4's system calls: counted in every slice, and the bytes carried while they were counted. */
        private SyscallCounter counter;
        private long countedBytesAtStart;
        private boolean syscallsCounted = true;
        private long syscalls;
        private long sends;
        private long receives;
        private long countedBytes;
        /** CPU time of the client and the system's server over every slice's window, and the calls and bytes in it. */
        private final CpuCost cpu;
        private long completedAtCpuStart;
        private long bytesAtCpuStart;
        private long cpuCalls;
        private long cpuBytes;
        private boolean cpuNow;
        private boolean countingNow;
        private boolean cpuWithPerf;

        private Measurement(Scenario scenario, SystemKind system, long measureMs, ClosedLoop... loops) {
            this.scenario = scenario;
            this.system = system;
            this.sliceMs = Math.max(1, measureMs / plan.slices());
            this.loops = loops;
            this.countersBefore = client(system).counters();
            this.cpu = new CpuCost(cpuTargets(system, 1));
        }

        /** The system measured. */
        public SystemKind system() {
            return system;
        }

        private void slice() {
            if (crash != null) {
                return;
            }
            long warmupMs = slicesRun == 0 ? plan.scenarioWarmupMs() : plan.scenarioWarmupMs() / 5;
            try {
                ClosedLoop.runTogether(warmupMs, sliceMs, plan.callTimeoutMs(), this::windowStarts, this::windowEnds, loops);
                slicesRun++;
            } catch (RuntimeException e) {
                crash = e;
            }
        }

        /**
         * S4 counts its system calls with perf, which costs the processes it watches CPU time on
         * each system call and context switch (more for a system that makes more of them): with
         * several slices, perf runs in the first slice only and the CPU is sampled in the others;
         * with one slice (quick mode) both in it ({@code cpu_with_perf}).
         */
        private void windowStarts() {
            List<Long> pids = countedPids.apply(system);
            countingNow = false;
            if (scenario == Scenario.S4 && syscallsCounted && !pids.isEmpty() && (slicesRun == 0 || plan.slices() == 1)) {
                countedBytesAtStart = loops[0].bytesInWindow(); // perf counts from its start; start() then waits 200 ms
                counter = SyscallCounter.start(pids);
                countingNow = true;
            }
            cpuNow = counter == null || plan.slices() == 1;
            if (cpuNow) {
                // After perf's start (which waits for it): only the window's own CPU time counts.
                cpuWithPerf |= counter != null;
                completedAtCpuStart = completedInWindow();
                bytesAtCpuStart = loops[0].bytesInWindow();
                cpu.start();
            }
        }

        private long completedInWindow() {
            long completed = 0;
            for (ClosedLoop loop : loops) {
                completed += loop.completedInWindow();
            }
            return completed;
        }

        private void windowEnds() {
            if (cpuNow) {
                cpu.stop();
                cpuCalls += completedInWindow() - completedAtCpuStart;
                cpuBytes += loops[0].bytesInWindow() - bytesAtCpuStart;
            }
            if (!countingNow) {
                return;
            }
            if (counter == null) {
                syscallsCounted = false;
                return;
            }
            long bytes = loops[0].bytesInWindow() - countedBytesAtStart;
            SyscallCounter.Counts counts = counter.stop();
            counter = null;
            if (counts == null) {
                syscallsCounted = false;
                return;
            }
            syscalls += counts.total();
            sends += counts.sends();
            receives += counts.receives();
            countedBytes += bytes;
        }

        /** The scenario's figures over every slice run, with how the client's counters moved. */
        public ScenarioResult result() {
            if (crash != null) {
                return ScenarioResult.failed(scenario.id(), system.id(), "crashed: " + crash);
            }
            long windowMs = sliceMs * slicesRun;
            ClosedLoop first = loops[0];
            Map<String, Object> metrics = switch (scenario) {
                case S1 -> {
                    Map<String, Object> m = loopMetrics(first, windowMs, "");
                    m.put("distribution_us", LatencyStats.distribution(first.latency()));
                    yield m;
                }
                case S2 -> {
                    ClosedLoop large = loops[1];
                    Map<String, Object> m = loopMetrics(first, windowMs, "");
                    m.put("distribution_us", LatencyStats.distribution(first.latency()));
                    m.put("large_outstanding", plan.s2LargeOutstanding());
                    m.put("large_rpcs_per_s", round1(large.completedInWindow() / (windowMs / 1000.0)));
                    m.put("large_goodput_gbps", gbps(large.bytesInWindow(), windowMs));
                    m.put("large_failures", large.failed());
                    yield m;
                }
                case S3 -> loopMetrics(first, windowMs, "");
                case S4 -> {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("goodput_gbps", gbps(first.bytesInWindow(), windowMs));
                    if (syscallsCounted && countedBytes > 0) {
                        // Both processes, per MiB of messages carried: each echo carries its request and its response.
                        double mib = 2.0 * countedBytes / LARGE_BYTES;
                        m.put("syscalls_per_mib", round1(syscalls / mib));
                        m.put("send_syscalls_per_mib", round1(sends / mib));
                        m.put("receive_syscalls_per_mib", round1(receives / mib));
                    }
                    m.putAll(loopMetrics(first, windowMs, ""));
                    yield m;
                }
                case S5, S6, S9, S10, S11, S11_SCALING -> throw new IllegalStateException("unreachable");
            };
            // Per call completed in the windows (S2: the short and the 1 MiB calls); S4 also per MiB of
            // responses, the bytes its goodput counts.
            metrics.putAll(cpu.perCall(cpuCalls));
            if (scenario == Scenario.S4) {
                metrics.putAll(cpu.perMib(cpuBytes));
                if (cpuWithPerf && cpu.measured()) {
                    metrics.put("cpu_with_perf", true);
                }
            }
            metrics.put("slices", slicesRun);
            return withCounterChange(system, countersBefore, finish(scenario, system, metrics, loops));
        }
    }

    static double gbps(long bytes, long ms) {
        return Math.round(bytes * 8.0 / (ms / 1000.0) / 1e9 * 1000) / 1000.0;
    }

    static double round1(double value) {
        return Math.round(value * 10) / 10.0;
    }

    /** S5 measurements of one system before slowdowns are computed. */
    public record S5Raw(SystemKind system, Map<Integer, Double> calibrationP50Ns, Map<String, S5Workload> workloads) {}

    /**
     * One workload's measurements.
     *
     * @param offeredPerSecond S5's Poisson rate, calls per second (with {@code --s5-all-to-all}
     *     each host offers half of it)
     * @param minCalls {@code --s5-min-calls}, 0 when off
     * @param cpu CPU use over the window; null when not sampled
     */
    public record S5Workload(double maxPerSecond, double offeredPerSecond, OpenLoop.Result result, int minCalls,
            CpuSampler.@Nullable Usage cpu) {
        /** Without {@code --s5-min-calls} and CPU figures. */
        public S5Workload(double maxPerSecond, double offeredPerSecond, OpenLoop.Result result) {
            this(maxPerSecond, offeredPerSecond, result, 0, null);
        }
    }

    /** The longest window of {@link #s5LoadGenerator}, ms: its cost per call is steady long before. */
    static final long LOAD_GENERATOR_MAX_MS = 3_000;

    /**
     * The load generator's own CPU per call in S5: the same Poisson loop, at {@code ratesPerSecond}
     * of each workload, to a client that answers every call at once with its request (the loop's
     * arrivals, request bytes, timeouts and recording, and no system), sampled the same way over a
     * window of S5's length (at most {@value #LOAD_GENERATOR_MAX_MS} ms). Every system's client
     * figure in S5 holds this much. Per workload: {@code rate_per_s}, {@code window_s} and
     * {@code cpu_us_per_call_client}; empty when the CPU is not sampled.
     */
    public Map<String, Object> s5LoadGenerator(List<Workload> workloads, Map<String, Double> ratesPerSecond) {
        Map<String, Object> byWorkload = new LinkedHashMap<>();
        List<CpuSampler.Target> self = List.of(self());
        EchoClient answersAtOnce = new EchoClient() {
            @Override
            public CompletableFuture<byte[]> call(int target, byte[] request) {
                return CompletableFuture.completedFuture(request); // an echo request's answer has its length
            }

            @Override
            public int targets() {
                return 1;
            }

            @Override
            public void close() {}
        };
        long seed = 42;
        for (Workload workload : workloads) {
            Double rate = ratesPerSecond.get(workload.name());
            if (rate == null || !(rate > 0)) {
                continue;
            }
            CpuCost cpu = new CpuCost(self);
            long windowMs = Math.min(LOAD_GENERATOR_MAX_MS, S5Window.measureMs(plan.s5LoadMs(), s5MinCalls, rate));
            OpenLoop.Result result = new OpenLoop(answersAtOnce, 0, OpenLoop.lengthsOf(workload), rate, S5_MAX_OUTSTANDING,
                    plan.callTimeoutMs(), seed++).run(plan.scenarioWarmupMs(), windowMs, plan.callTimeoutMs(), cpu::start,
                    cpu::stop);
            Map<String, Object> perCall = cpu.perCall(result.recorded());
            if (perCall.containsKey("cpu_us_per_call_client")) {
                Map<String, Object> figures = new LinkedHashMap<>();
                figures.put("rate_per_s", round1(rate));
                figures.put("window_s", windowMs / 1000.0);
                figures.put("cpu_us_per_call_client", perCall.get("cpu_us_per_call_client"));
                byWorkload.put(workload.name(), figures);
            }
        }
        return byWorkload;
    }

    /** S5 for one system: unloaded round trips per calibration length, then per workload its maximum and the Poisson load. */
    public S5Raw s5(SystemKind system, List<Workload> workloads) {
        EchoClient client = client(system);
        Map<Integer, Double> calibration = new LinkedHashMap<>();
        for (int length : CALIBRATION_LENGTHS) {
            int samples = length >= 100_000 ? Math.max(3, plan.s5CalibrationSamples() / 10) : plan.s5CalibrationSamples();
            double[] rtts = new double[samples];
            int ok = 0;
            byte[] request = EchoProtocol.echoRequest(length);
            for (int i = 0; i < samples + 2; i++) {
                long start = System.nanoTime();
                try {
                    byte[] response = client.call(0, request).get(plan.callTimeoutMs(), TimeUnit.MILLISECONDS);
                    if (response.length == length && i >= 2) { // the first two are warm-up
                        rtts[ok++] = System.nanoTime() - start;
                    }
                } catch (Exception e) {
                    // counted by absence
                }
            }
            if (ok > 0) {
                calibration.put(length, LatencyStats.percentile(rtts, ok, 50));
            }
        }
        Map<String, S5Workload> results = new LinkedHashMap<>();
        long seed = 42;
        for (Workload workload : workloads) {
            ClosedLoop max = new ClosedLoop(client, 0,
                    () -> EchoProtocol.echoRequest(workload.sample(ThreadLocalRandom.current())),
                    plan.s5MaxOutstanding(), plan.callTimeoutMs());
            ClosedLoop.runTogether(plan.scenarioWarmupMs(), plan.s5MaxMs(), plan.callTimeoutMs(), max);
            double maxPerSecond = max.completedInWindow() / (plan.s5MaxMs() / 1000.0);
            Double fixedRate = s5RatesPerSecond.get(workload.name());
            double offered = fixedRate != null ? fixedRate : Math.max(1, maxPerSecond * s5LoadFraction);
            OpenLoop.Result loaded;
            CpuSampler.@Nullable Usage cpu;
            List<CpuSampler.Target> sampled = cpuSampled.apply(system);
            if (remoteLoad != null) {
                double total = offered * remoteRateFactor;
                RemoteLoad.Outcome outcome = remoteLoad.run(system, workload.name(), total,
                        S5Window.measureMs(plan.s5LoadMs(), s5MinCalls, total), seed++, sampled);
                loaded = outcome.result();
                cpu = outcome.cpu();
            } else {
                CpuSampler sampler = new CpuSampler(sampled);
                Runnable start = sampled.isEmpty() ? () -> {} : sampler::start;
                Runnable stop = sampled.isEmpty() ? () -> {} : sampler::stop;
                loaded = new OpenLoop(client, 0, OpenLoop.lengthsOf(workload),
                        offered, S5_MAX_OUTSTANDING, plan.callTimeoutMs(), seed++)
                        .run(plan.scenarioWarmupMs(), S5Window.measureMs(plan.s5LoadMs(), s5MinCalls, offered),
                                plan.callTimeoutMs(), start, stop);
                cpu = sampler.usage();
            }
            results.put(workload.name(), new S5Workload(maxPerSecond, offered, loaded, s5MinCalls, cpu));
        }
        return new S5Raw(system, calibration, results);
    }

    /**
     * S6: bursts of N concurrent calls spread round-robin over the servers; see {@link IncastScenario}.
     */
    public ScenarioResult s6(SystemKind system) {
        return new IncastScenario(plan, networkCounters, cpuTargets(system, client(system).targets())).run(system, client(system));
    }
}
