package io.homa.bench;

import io.homa.bench.cpu.CpuSampler;
import io.homa.bench.cpu.JitPriority;
import io.homa.bench.scenario.OpenLoop;
import io.homa.bench.scenario.ScenarioRunner;
import io.homa.bench.systems.SystemKind;
import io.homa.bench.systems.SystemSettings;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import tools.jackson.databind.json.JsonMapper;

/**
 * S5's open loop from several testbed hosts at once ({@code --s5-client-hosts},
 * {@code --s5-all-to-all}): one {@link LoadAgent} process per client host, each at its share of the
 * rate to its own servers, their results merged into one {@link OpenLoop.Result} (every recorded
 * call, failures and skips summed), with the CPU use of the agents and the given processes over
 * their common window ({@link CpuSampler}).
 */
final class AgentProcess {
    /** Time an agent's JVM gets to start and connect before the warm-up counts, ms. */
    static final long AGENT_START_MS = 4_000;
    /**
     * Longest closed-loop warm-up of an agent, ms: each agent is a fresh JVM, and three of them on
     * one core still spent a fifth of a core each in the C2 compiler during a window that began 5 s
     * after they started, which made that core the bottleneck of the whole rack.
     */
    static final long MAX_AGENT_WARMUP_MS = 25_000;

    /** Each agent's output read on a thread of its own, so that no pool holds an agent back. */
    private static final Executor THREAD_PER_AGENT = task -> {
        Thread thread = new Thread(task, "load-agent-output");
        thread.setDaemon(true);
        thread.start();
    };

    private AgentProcess() {}

    /**
     * Runs the agents and merges what they measured, sampling CPU use over their common window.
     *
     * @param hosts the client hosts (each gets {@code ratePerSecond / hosts.size()})
     * @param serversOf the servers a client host calls, by host (each call to one of them, drawn uniformly)
     * @param settings the run's settings (each agent binds its own host's address)
     * @param ratePerSecond calls per second of all agents together
     * @param measureMs every agent's window
     * @param cpuSampled processes sampled over the window besides the agents (role {@code agent});
     *     empty: none sampled
     * @throws UncheckedIOException if an agent cannot start or reports nothing
     */
    static ScenarioRunner.RemoteLoad.Outcome run(Testbed testbed, List<Integer> hosts, Placement placement,
            SystemKind system, SystemSettings settings, IntFunction<List<InetSocketAddress>> serversOf, String workload,
            double ratePerSecond, long warmupMs, long measureMs, long timeoutMs, long seed, Path logDir,
            List<CpuSampler.Target> cpuSampled) {
        Group group = new Group(system.id() + "-" + workload, system, hosts, settings, serversOf, workload, ratePerSecond,
                0);
        Outcome outcome = runGroups(testbed, placement, List.of(group), warmupMs, measureMs, timeoutMs, seed, logDir,
                cpuSampled, null);
        return new ScenarioRunner.RemoteLoad.Outcome(outcome.results().get(0), outcome.cpu());
    }

    /**
     * Load agents of one system with one workload, on some hosts (S9 runs several groups at once:
     * TCP from one host, Homa from the others).
     *
     * @param label names the agents' logs: {@code agent-<label>-h<host>.log}
     * @param hosts the client hosts (each gets {@code ratePerSecond / hosts.size()})
     * @param settings the agents' settings (each agent binds its own host's address)
     * @param serversOf the servers a client host calls, by host (each call to one of them, drawn uniformly)
     * @param ratePerSecond calls per second of the group's agents together
     * @param maxOutstanding each agent's cap on calls in flight (arrivals beyond it are skipped), or 0
     *     for the agent's default
     */
    record Group(String label, SystemKind system, List<Integer> hosts, SystemSettings settings,
            IntFunction<List<InetSocketAddress>> serversOf, String workload, double ratePerSecond, int maxOutstanding) {}

    /**
     * What groups of agents measured.
     *
     * @param results each group's agents merged ({@link #merge}), in the order of the groups
     * @param cpu CPU use over the common window of the sampled processes and every agent; null when not sampled
     */
    record Outcome(List<OpenLoop.Result> results, CpuSampler.@org.jspecify.annotations.Nullable Usage cpu) {}

    /**
     * Runs groups of agents at once, every agent's window the same, and merges each group's results.
     *
     * @param cpuSampled processes sampled over the window besides the agents (role {@code agent});
     *     empty: none sampled
     * @param atWindowStart run when the window starts (e.g. reading the network's counters), or null
     * @throws UncheckedIOException if an agent cannot start or reports nothing
     */
    static Outcome runGroups(Testbed testbed, Placement placement, List<Group> groups, long warmupMs, long measureMs,
            long timeoutMs, long seed, Path logDir, List<CpuSampler.Target> cpuSampled,
            @org.jspecify.annotations.Nullable Runnable atWindowStart) {
        List<Process> processes = new ArrayList<>();
        List<List<CompletableFuture<OpenLoop.Result>>> agents = new ArrayList<>();
        // Every window starts at the same instant: JVM start-up (a few seconds here), then a
        // closed-loop warm-up of the workload's messages until then.
        long startAtEpochMs = System.currentTimeMillis() + AGENT_START_MS + Math.min(warmupMs * 25, MAX_AGENT_WARMUP_MS);
        int index = 0;
        try {
            for (Group group : groups) {
                List<CompletableFuture<OpenLoop.Result>> groupAgents = new ArrayList<>();
                agents.add(groupAgents);
                for (int host : group.hosts()) {
                    List<String> command = new ArrayList<>(testbed.hostPrefix(host));
                    command.addAll(placement.clientPrefix());
                    command.add(ServerProcess.javaCommand());
                    command.addAll(ServerProcess.JVM_OPTIONS);
                    command.addAll(List.of("-cp", System.getProperty("java.class.path"), LoadAgent.class.getName(),
                            "--system=" + group.system().id()));
                    for (InetSocketAddress server : group.serversOf().apply(host)) {
                        command.add("--server=" + server.getAddress().getHostAddress() + ":" + server.getPort());
                    }
                    command.addAll(List.of("--workload=" + group.workload(),
                            "--rps=" + group.ratePerSecond() / group.hosts().size(),
                            "--warmup-ms=" + warmupMs, "--measure-ms=" + measureMs, "--timeout-ms=" + timeoutMs,
                            "--seed=" + (seed * 31 + index++), "--start-at-epoch-ms=" + startAtEpochMs));
                    if (group.maxOutstanding() > 0) {
                        command.add("--max-outstanding=" + group.maxOutstanding());
                    }
                    command.addAll(ServerProcess.settingsArguments(group.settings().withBindHost(testbed.address(host))));
                    Path log = logDir.resolve("agent-" + group.label() + "-h" + host + ".log");
                    Process process = new ProcessBuilder(command)
                            .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
                    processes.add(process);
                    long limitMs = warmupMs + measureMs + 2 * timeoutMs + 60_000;
                    groupAgents.add(CompletableFuture.supplyAsync(() -> result(process, log, limitMs), THREAD_PER_AGENT));
                }
            }
        } catch (IOException e) {
            processes.forEach(Process::destroyForcibly);
            throw new UncheckedIOException(e);
        }
        CpuSampler.Usage cpu = null;
        long windowStartEpochMs = startAtEpochMs + warmupMs; // each agent's open loop warms up first
        if (!cpuSampled.isEmpty()) {
            List<CpuSampler.Target> targets = new ArrayList<>(cpuSampled);
            // The JVM's pid: ip netns exec and taskset exec the command that follows them.
            processes.forEach(process -> targets.add(new CpuSampler.Target("agent", process.pid())));
            CpuSampler sampler = new CpuSampler(targets);
            List<Long> pids = targets.stream().map(CpuSampler.Target::pid).toList();
            sleepUntilEpochMs(windowStartEpochMs);
            if (atWindowStart != null) {
                atWindowStart.run();
            }
            JitPriority.lower(pids);
            sampler.start();
            sleepUntilEpochMs(windowStartEpochMs + measureMs);
            cpu = sampler.stop();
            JitPriority.restore(pids);
        } else if (atWindowStart != null) {
            sleepUntilEpochMs(windowStartEpochMs);
            atWindowStart.run();
        }
        List<OpenLoop.Result> results = new ArrayList<>();
        for (List<CompletableFuture<OpenLoop.Result>> groupAgents : agents) {
            results.add(merge(groupAgents.stream().map(CompletableFuture::join).toList()));
        }
        return new Outcome(results, cpu);
    }

    private static void sleepUntilEpochMs(long epochMs) {
        try {
            for (long left = epochMs - System.currentTimeMillis(); left > 0; left = epochMs - System.currentTimeMillis()) {
                Thread.sleep(left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while load agents ran", e);
        }
    }

    /** The result an agent prints, read to the end of its output. */
    private static OpenLoop.Result result(Process process, Path log, long limitMs) {
        try {
            String result = null;
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                    if (line.startsWith(LoadAgent.RESULT_PREFIX)) {
                        result = line.substring(LoadAgent.RESULT_PREFIX.length());
                    }
                }
            }
            if (!process.waitFor(limitMs, TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
            }
            if (result == null) {
                throw new UncheckedIOException(new IOException("a load agent reported no result; see " + log));
            }
            return JsonMapper.builder().build().readValue(result, OpenLoop.Result.class);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while a load agent ran", e);
        }
    }

    /** One result holding every call of {@code results}, counts summed, the first error kept. */
    static OpenLoop.Result merge(List<OpenLoop.Result> results) {
        int total = results.stream().mapToInt(OpenLoop.Result::recorded).sum();
        int[] lengths = new int[total];
        long[] rtts = new long[total];
        int at = 0;
        long issued = 0;
        long failed = 0;
        long skipped = 0;
        long answered = 0;
        long answeredBytes = 0;
        long offeredBytes = 0;
        Map<String, Long> failedByKind = new LinkedHashMap<>();
        String firstError = null;
        for (OpenLoop.Result r : results) {
            System.arraycopy(r.lengthsBytes(), 0, lengths, at, r.recorded());
            System.arraycopy(r.rttNs(), 0, rtts, at, r.recorded());
            at += r.recorded();
            issued += r.issuedInWindow();
            failed += r.failed();
            skipped += r.skipped();
            answered += r.answeredInWindow();
            answeredBytes += r.answeredBytesInWindow();
            offeredBytes += r.offeredBytesInWindow();
            if (r.failedInWindowByKind() != null) {
                r.failedInWindowByKind().forEach((kind, n) -> failedByKind.merge(kind, n, Long::sum));
            }
            if (firstError == null) {
                firstError = r.firstError();
            }
        }
        double window = results.stream().mapToDouble(OpenLoop.Result::windowSeconds).max().orElse(1);
        return new OpenLoop.Result(Arrays.copyOf(lengths, total), Arrays.copyOf(rtts, total), total, issued, failed,
                skipped, window, firstError, failedByKind, answered, answeredBytes, offeredBytes);
    }
}
