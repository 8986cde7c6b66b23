package io.homa.bench;

import io.homa.bench.cpu.CpuSampler;
import io.homa.bench.report.BenchReport;
import io.homa.bench.report.Charts;
import io.homa.bench.report.Environment;
import io.homa.bench.report.Ratios;
import io.homa.bench.report.ReportWriter;
import io.homa.bench.report.ScenarioResult;
import io.homa.bench.report.Targets;
import io.homa.bench.scenario.RunPlan;
import io.homa.bench.scenario.Scenario;
import io.homa.bench.scenario.S5Slowdowns;
import io.homa.bench.scenario.S5Window;
import io.homa.bench.scenario.ScenarioRunner;
import io.homa.bench.systems.EchoClient;
import io.homa.bench.systems.SystemKind;
import io.homa.bench.systems.SystemSettings;
import io.homa.bench.trace.TimetraceReport;
import io.homa.workloads.Workload;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The side-by-side load generator: starts echo servers of every selected system in separate,
 * pinned JVMs, runs the selected scenarios against each system from this (pinned) process, and
 * writes {@code report.json}, {@code report.md} and PNG charts.
 *
 * <p>Exit code 0 when the report was written and every selected (scenario, system) ran or is
 * not applicable; 1 when one failed or the report is missing; 2 for bad arguments. Speed figures
 * never change the exit code.
 */
@Command(name = "homa-bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Runs Homa, gRPC-java, RSocket-java and UDP/TCP floors side by side on scenarios S1-S6, S10 and S11 and writes a report.")
public final class LoadGenerator implements Callable<Integer> {
    /** The two modes. */
    public enum Mode {
        QUICK, FULL
    }

    /** Where the processes run. */
    public enum Net {
        /** Every process on 127.0.0.1. */
        LOOPBACK,
        /** The client on host 1 of the emulated rack, servers on the others ({@link Testbed}). */
        TESTBED
    }

    @Option(names = "--net", description = "loopback, or testbed: the rack benchmarks/testbed.sh built (run.sh then starts this process on host 1; servers go on hosts 2..H; every Homa endpoint paced at the link rate). Default: ${DEFAULT-VALUE}.")
    Net net = Net.LOOPBACK;

    @Option(names = "--mode", description = "quick (about 2 minutes) or full (10-15 minutes). Default: ${DEFAULT-VALUE}.")
    Mode mode = Mode.QUICK;

    @Option(names = "--systems", split = ",", description = "Systems, comma-separated: homa, homa-rpc, grpc, grpc-homa (gRPC over Homa), rsocket, udp, tcp, and the opt-in homa-auth and homa-rpc-auth (Homa with packet authentication, to measure its cost in the same run). Default: all but the opt-in ones.")
    List<String> systems = List.of(SystemKind.defaultIds().split(","));

    @Option(names = "--scenarios", split = ",", description = "Scenarios, comma-separated: s1..s6, s10 (streaming), s11, and the opt-in s11-scaling (S11's handler on a server not pinned to a core: throughput and CPU use). Default: all but the opt-in one.")
    List<String> scenarios = List.of(Scenario.defaultIds().split(","));

    @Option(names = "--out", description = "Report directory. Default: ${DEFAULT-VALUE}.")
    Path out = Path.of("benchmarks", "target", "report");

    @Option(names = "--workloads", split = ",", description = "S5 workloads (w1..w5). Default: all.")
    List<String> workloads = Workload.NAMES;

    @Option(names = "--s5-load", description = "S5 Poisson rate as a fraction of each system's measured maximum, (0, 1]. Default: ${DEFAULT-VALUE}.")
    double s5Load = 0.5;

    @Option(names = "--s5-rps", split = ",", paramLabel = "WORKLOAD=RATE",
            description = "S5 Poisson rate in calls/s per workload, e.g. w1=15000,w3=8000: the same offered load for every system (replaces --s5-load for those workloads, to compare two builds at equal load).")
    Map<String, Double> s5Rps = new LinkedHashMap<>();

    @Option(names = "--homa-timetrace", description = "Every Homa transport of the run (client, servers, load agents) records a timetrace and writes it to OUT/timetrace/ when it closes; S5 workloads whose load came from agents (--s5-client-hosts, --s5-all-to-all) get a table of where the shortest decile's time goes, at p50 and p99. Default: off.")
    boolean homaTimetrace;

    @Option(names = "--homa-busy-poll-us", description = "Busy poll of every Homa transport's event loop before it sleeps, µs, 0..1000 (0 = off). Default: the transport's (" + io.homa.reactive.HomaTransportConfig.DEFAULT_BUSY_POLL_NS / 1_000 + ").")
    Long homaBusyPollUs;

    @Option(names = "--homa-loops", paramLabel = "N", description = "Event loops of every Homa transport (client, servers, load agents), 1..64, or 0 for the transport's default (one per processor the process may use: one for a pinned process). Compare S11's scaling variant with 1 and 2. Default: ${DEFAULT-VALUE}.")
    int homaLoops = io.homa.bench.systems.HomaLoops.TRANSPORT_DEFAULT;

    @Option(names = "--s5-min-calls", paramLabel = "N", description = "Each S5 workload's window lasts until at least N calls are recorded (all load processes together): the plan's window, or N / the offered rate plus a margin when longer, computed before the window starts. 0..10000000, 0 = off. Default: ${DEFAULT-VALUE}.")
    int s5MinCalls;

    @Option(names = "--s6-fanouts", split = ",", description = "S6's values of N, comma-separated, each 1..10000. Default: the mode's (quick 10,100,1000; full 10,50,100,200,500,1000).")
    List<Integer> s6Fanouts;

    @Option(names = "--servers", description = "Server processes (S6 fans out over all of them; S1-S5 use the first), 1..8. Default: ${DEFAULT-VALUE}.")
    int servers = 3;

    @Option(names = "--homa-link-mbps", description = "Pacer rate of every Homa transport, Mbit/s, 0 = no pacing, -1 = the transport's auto. Default: the testbed's link rate with --net=testbed, else the transport's auto (" + io.homa.reactive.HomaTransportConfig.LOOPBACK_LINK_MBPS + " on loopback, with a grant window of " + io.homa.reactive.HomaTransportConfig.LOOPBACK_RTT_BYTES + " bytes).")
    Integer homaLinkMbps;

    @Option(names = "--homa-priority-tos", description = "Homa priorities in the IP TOS byte: auto (off on loopback, on elsewhere), on or off (to measure what the testbed's priority queues buy). Default: ${DEFAULT-VALUE}.")
    io.homa.reactive.HomaTransportConfig.PriorityTos homaPriorityTos = io.homa.reactive.HomaTransportConfig.PriorityTos.AUTO;

    @Option(names = "--homa-congestion-control", description = "Congestion control of every Homa engine (homa.protocol.congestion-control): rtt (per-peer RTT probes size the unscheduled and grant windows) or off. Default: ${DEFAULT-VALUE}.")
    io.homa.engine.CongestionControl homaCongestionControl = io.homa.engine.CongestionControl.OFF;

    @Option(names = "--no-homa-incast-marking", negatable = true, description = "INCAST marking of Homa requests above the engine's incast threshold (S6). Default: ${DEFAULT-VALUE}.")
    boolean homaIncastMarking = true;

    @Option(names = "--s5-link-load", description = "With --net=testbed: S5 Poisson rate per workload as this fraction of the link's capacity, (0, 1] (each RPC's request and response carry the sampled length, so each direction of the client's link is loaded this much; the paper's Figure 8 uses 0.5 and 0.8). Replaces --s5-load.")
    Double s5LinkLoad;

    @Option(names = "--s5-client-hosts", description = "With --net=testbed: S5's Poisson load comes from this many client hosts at once (every host but the first server's, host 1 first), one load process each at its share of the rate, all to the first server: several senders share its switch port, as in the paper's Figure 8. Default: 0 (the load generator alone).")
    int s5ClientHosts;

    @Option(names = "--s5-all-to-all", description = "With --net=testbed: S5's Poisson load comes from every host at once, each calling the servers of all the other hosts (one drawn uniformly per call; a server runs on every host), the paper's all-to-all variant of Figure 8. With --s5-link-load F every host sends at half the single-client rate, so that each direction of every link carries F of its capacity (requests from the others and responses to its own calls). Default: off.")
    boolean s5AllToAll;

    @Option(names = "--s9-tcp-system", description = "S9 (rack only): the TCP system beside Homa, tcp (the harness's TCP floor) or grpc. Default: ${DEFAULT-VALUE}.")
    String s9TcpSystem = SystemKind.TCP.id();

    @Option(names = "--s9-measure-ms", paramLabel = "MS", description = "S9: each run's window, ms, 500..600000. Default: quick 3000, full 10000.")
    Long s9MeasureMs;

    @Option(names = "--s9-incast-outstanding", paramLabel = "N", description = "S9's incast: calls each client host keeps in flight (Homa's W5, offered at twice the link), 1..1000. Default: ${DEFAULT-VALUE}.")
    int s9IncastOutstanding = 8;

    @Option(names = "--homa-mtu-bytes", description = "MTU of every Homa engine, 256..65535, or 0 for the transport's default, the device's (65,535 on loopback). Default: ${DEFAULT-VALUE}.")
    int homaMtuBytes = SystemSettings.defaults().homaMtuBytes();

    @Option(names = "--no-homa-gso", negatable = true, description = "UDP GSO on send and GRO on receive for every Homa transport, where the kernel has them. Default: ${DEFAULT-VALUE}.")
    boolean homaGso = true;

    @Option(names = "--homa-security", converter = SettingsOptions.SecurityModeConverter.class, description = "Packet authentication of every Homa transport (client and servers): off, authenticate (AES-256-GCM tag, 41-byte trailer) or encrypt. Default: ${DEFAULT-VALUE}.")
    io.homa.reactive.HomaSecurityConfig.Mode homaSecurity = io.homa.reactive.HomaSecurityConfig.Mode.OFF;

    @Option(names = "--no-grpc-direct-executor", negatable = true, description = "gRPC handlers and callbacks on its event loops (as gRPC's own benchmarks). Default: ${DEFAULT-VALUE}.")
    boolean grpcDirectExecutor = true;

    @Option(names = "--no-pin", negatable = true, description = "Pin client to CPU 0 and servers to CPU 1 with taskset when possible. Default: ${DEFAULT-VALUE}.")
    boolean pin = true;

    @Option(names = "--server-jvm-option", description = "Extra JVM option for the server processes (repeatable), e.g. to profile them with JFR.")
    List<String> serverJvmOptions = List.of();

    private final PrintStream log = System.out;
    private long startNs;

    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        CommandLine commandLine = new CommandLine(new LoadGenerator()).setCaseInsensitiveEnumValuesAllowed(true);
        commandLine.setExecutionExceptionHandler((error, line, parsed) -> {
            if (error instanceof IllegalArgumentException) { // a bad option value, named in the message
                line.getErr().println(error.getMessage());
                line.usage(line.getErr());
                return 2;
            }
            throw error;
        });
        int code = commandLine.execute(args);
        System.exit(code);
    }

    private void progress(String message) {
        log.printf(Locale.ROOT, "[%6.1fs] %s%n", (System.nanoTime() - startNs) / 1e9, message);
    }

    @Override
    public Integer call() throws Exception {
        startNs = System.nanoTime();
        List<SystemKind> systemKinds = systems.stream().map(SystemKind::fromId).distinct().toList();
        List<Scenario> scenarioList = scenarios.stream().map(Scenario::fromId).distinct().sorted().toList();
        List<Workload> workloadList;
        try {
            workloadList = workloads.stream().map(Workload::load).toList();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--workloads: " + e.getMessage(), e);
        }
        if (servers < 1 || servers > 8) {
            throw new IllegalArgumentException("--servers must be between 1 and 8, was " + servers);
        }
        if (!(s5Load > 0 && s5Load <= 1)) {
            throw new IllegalArgumentException("--s5-load must be in (0, 1], was " + s5Load);
        }
        S5Window.checkMinCalls(s5MinCalls);
        io.homa.bench.systems.HomaLoops.check(homaLoops);
        for (String name : s5Rps.keySet()) {
            if (!Workload.NAMES.contains(name)) {
                throw new IllegalArgumentException("--s5-rps: unknown workload " + name + ", expected one of " + Workload.NAMES);
            }
        }
        Testbed testbed = null;
        if (net == Net.TESTBED) {
            testbed = Testbed.load(System.getenv().getOrDefault("HOMA_TESTBED_PREFIX", "homa"));
            testbed.checkOnHostOne();
        }
        if (s5LinkLoad != null) {
            if (testbed == null) {
                throw new IllegalArgumentException("--s5-link-load needs --net=testbed (a link of known capacity)");
            }
            if (!(s5LinkLoad > 0 && s5LinkLoad <= 1)) {
                throw new IllegalArgumentException("--s5-link-load must be in (0, 1], was " + s5LinkLoad);
            }
            for (Workload workload : workloadList) {
                s5Rps.putIfAbsent(workload.name(), linkRate(workload, testbed, s5LinkLoad));
            }
        }
        if (s5ClientHosts != 0 && (testbed == null || s5ClientHosts < 1 || s5ClientHosts > testbed.hosts() - 1)) {
            throw new IllegalArgumentException("--s5-client-hosts needs --net=testbed and must be between 1 and the"
                    + " testbed's hosts - 1, was " + s5ClientHosts);
        }
        if (s5AllToAll && (testbed == null || s5ClientHosts != 0)) {
            throw new IllegalArgumentException("--s5-all-to-all needs --net=testbed and excludes --s5-client-hosts");
        }
        if (scenarioList.contains(Scenario.S9)) {
            SystemKind tcpSystem;
            try {
                tcpSystem = SystemKind.fromId(s9TcpSystem);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--s9-tcp-system must be tcp or grpc, was " + s9TcpSystem, e);
            }
            S9Scenario.check(testbed, tcpSystem, s9IncastOutstanding,
                    s9MeasureMs(mode == Mode.FULL ? RunPlan.full() : RunPlan.quick()));
        }
        int linkMbps = homaLinkMbps != null ? homaLinkMbps
                : testbed != null ? testbed.linkMbps() : SystemSettings.defaults().homaLinkMbps();
        // On the testbed, heads share one priority class's FIFO of the switch port (the incast
        // buffer is the port's); on loopback the transport sizes it from its socket.
        SystemSettings settings = new SystemSettings(linkMbps, homaMtuBytes, grpcDirectExecutor, homaGso, homaSecurity,
                homaPriorityTos, homaIncastMarking, testbed != null ? testbed.address(1) : SystemSettings.LOOPBACK_HOST,
                testbed != null ? testbed.classBufferBytes() : io.homa.reactive.HomaTransportConfig.AUTO_INCAST_BUFFER)
                .withHomaLoops(homaLoops)
                .withHomaCongestionControl(homaCongestionControl);
        Path traceDir = out.resolve("timetrace");
        long busyPollNs = homaBusyPollUs == null ? SystemSettings.TRANSPORT_DEFAULT : homaBusyPollUs * 1_000;
        SystemSettings clientSettings = settings.withHomaDiagnostics(busyPollNs,
                homaTimetrace ? traceDir.resolve("client").toString() : "");
        settings = settings.withHomaDiagnostics(busyPollNs,
                homaTimetrace ? traceDir.resolve(TimetraceReport.SERVERS).toString() : "");
        if (homaTimetrace) {
            TimetraceReport.clear(traceDir);
        }
        RunPlan plan = mode == Mode.FULL ? RunPlan.full() : RunPlan.quick();
        if (s6Fanouts != null) {
            plan = plan.withS6Fanouts(s6Fanouts);
        }
        ScenarioRunner.class.getName(); // fail fast on a broken class path
        int cores = Runtime.getRuntime().availableProcessors();
        Placement placement = Placement.decide(pin, cores);
        Files.createDirectories(out);
        Files.deleteIfExists(out.resolve(ReportWriter.JSON_FILE));
        Files.deleteIfExists(out.resolve(ReportWriter.MARKDOWN_FILE));
        progress("mode " + plan.mode() + ", systems " + systemKinds.stream().map(SystemKind::id).toList()
                + ", scenarios " + scenarioList.stream().map(Scenario::id).toList() + "; " + placement.description());

        int serverCount = scenarioList.contains(Scenario.S6) ? servers : 1;
        List<ScenarioResult> results = new ArrayList<>();
        Map<String, Object> idle = new LinkedHashMap<>();
        Map<String, Object> s5LoadGeneratorCpu = new LinkedHashMap<>();
        if (scenarioList.contains(Scenario.S9)) {
            // S9 first, with server processes and load agents of its own (rack only; checked above).
            results.add(new S9Scenario(testbed, placement, settings.withHomaDiagnostics(busyPollNs, ""),
                    SystemKind.fromId(s9TcpSystem), plan.scenarioWarmupMs(), s9MeasureMs(plan), plan.callTimeoutMs(),
                    s9IncastOutstanding, serverJvmOptions, out, this::progress).run());
            progress(summary(results.get(results.size() - 1)));
            for (SystemKind system : systemKinds) {
                String na = Scenario.S9.notApplicable(system);
                if (na != null) {
                    results.add(ScenarioResult.notApplicable(Scenario.S9.id(), system.id(), na));
                }
            }
        }
        // Every other scenario: servers of every system, their clients here.
        List<Scenario> general = scenarioList.stream().filter(s -> s != Scenario.S9).toList();
        if (!general.isEmpty()) {
            List<ServerSet> serverSets = new ArrayList<>(); // one, once started
            Map<SystemKind, EchoClient> clients = new EnumMap<>(SystemKind.class);
            Map<SystemKind, String> connectErrors = new EnumMap<>(SystemKind.class);
            Thread cleanup = new Thread(() -> serverSets.forEach(ServerSet::close));
            Runtime.getRuntime().addShutdownHook(cleanup);
            try {
                Testbed rackOrNull = testbed;
                SystemSettings serverSettings = settings;
                // Each system's first server in a process of its own; S6's further ones shared (ServerSet).
                ServerSet.Launcher launcher = (systemsServed, index, name) -> {
                    List<String> extra = serverJvmOptions.stream().map(o -> o.replace("{index}", name)).toList();
                    int host = rackOrNull == null ? 0 : rackOrNull.serverHost(index);
                    return ServerProcess.start(systemsServed,
                            rackOrNull == null ? serverSettings : serverSettings.withBindHost(rackOrNull.address(host)),
                            rackOrNull == null ? List.of() : rackOrNull.hostPrefix(host), placement, extra,
                            out.resolve("server-" + name + ".log"));
                };
                ServerSet serverSet = ServerSet.start(systemKinds, serverCount, launcher);
                serverSets.add(serverSet);
                List<Integer> serverHosts = new ArrayList<>(); // the testbed host of each server index (0: loopback)
                for (int i = 0; i < serverCount; i++) {
                    serverHosts.add(testbed == null ? 0 : testbed.serverHost(i));
                }
                if (s5AllToAll) {
                    // A server on every host: the hosts that have none yet (host 1, the load generator's, at least).
                    for (int host = 1; host <= testbed.hosts(); host++) {
                        if (!serverHosts.contains(host)) {
                            serverHosts.add(host);
                            String name = Integer.toString(serverSet.count());
                            serverSet.addShared(ServerProcess.start(systemKinds, settings.withBindHost(testbed.address(host)),
                                    testbed.hostPrefix(host), placement, List.of(), out.resolve("server-" + name + ".log")));
                        }
                    }
                }
                progress(serverSet.all().size() + " server process(es) up: pids " + serverSet.pids());
                for (SystemKind system : systemKinds) {
                    try {
                        // S1-S6 call the first serverCount servers (all-to-all's extra ones serve only its agents).
                        clients.put(system, system.connect(serverSet.addresses(system, serverCount), clientSettings));
                    } catch (Exception e) {
                        connectErrors.put(system, "client could not connect: " + e);
                        progress(system.id() + ": " + connectErrors.get(system));
                    }
                }
                int s5Servers = s5AllToAll ? serverSet.count() : 1;
                ScenarioRunner runner = new ScenarioRunner(plan, clients, s5Load, s5Rps);
                runner.s5MinCalls(s5MinCalls)
                        .syscallPids(system -> List.of(ProcessHandle.current().pid(), serverSet.process(system, 0).pid()))
                        .cpuServers(system -> serverSet.cpuTargets(system, serverCount))
                        .cpuSampledBySystem(system -> cpuTargets(serverSet.cpuTargets(system, s5Servers)))
                        .overloadServer(system -> serverSet.cpuTargets(system, 1));
                if (testbed != null) {
                    runner.networkCounters(testbed::classCounters);
                }
                if (s5ClientHosts > 0 || s5AllToAll) {
                    // --s5-client-hosts: that many hosts (not the first server's) call the first server.
                    // --s5-all-to-all: every host calls the servers of all the other hosts, at half the
                    // single-client rate each (see the option): H/2 times the rate in all.
                    Testbed rack = testbed;
                    List<Integer> clientHosts = new ArrayList<>();
                    for (int host = 1; host <= rack.hosts() && (s5AllToAll || clientHosts.size() < s5ClientHosts); host++) {
                        if (s5AllToAll || host != serverHosts.get(0)) {
                            clientHosts.add(host);
                        }
                    }
                    int calledServers = s5AllToAll ? serverSet.count() : 1;
                    double rateFactor = s5AllToAll ? rack.hosts() / 2.0 : 1;
                    List<Integer> hosts = List.copyOf(serverHosts);
                    RunPlan agentPlan = plan;
                    runner.s5RemoteLoad(rateFactor, (system, workload, rate, measureMs, seed, cpuSampled) -> AgentProcess.run(
                            rack, clientHosts, placement, system, serverSettings.withHomaDiagnostics(busyPollNs,
                                    homaTimetrace ? TimetraceReport.agentsDir(traceDir, system.id(), workload).toString() : ""),
                            host -> {
                                List<java.net.InetSocketAddress> servers = new ArrayList<>();
                                for (int i = 0; i < calledServers; i++) {
                                    if (hosts.get(i) != host) {
                                        servers.add(serverSet.address(system, i));
                                    }
                                }
                                return servers;
                            }, workload, rate, agentPlan.scenarioWarmupMs(), measureMs, agentPlan.callTimeoutMs(), seed, out,
                            cpuSampled));
                }
                for (SystemKind system : clients.keySet()) {
                    try {
                        runner.warmup(system);
                    } catch (RuntimeException e) {
                        progress(system.id() + ": warm-up failed: " + e);
                    }
                }
                progress("warm-up done");
                for (Scenario scenario : general) {
                    List<ScenarioRunner.S5Raw> s5 = new ArrayList<>();
                    // S1-S4: every system's window in slices, the systems taking turns (ScenarioRunner.interleave).
                    Map<SystemKind, ScenarioResult> sliced = new LinkedHashMap<>();
                    if (scenario.closedLoop()) {
                        List<ScenarioRunner.Measurement> measurements = new ArrayList<>();
                        for (SystemKind system : systemKinds) {
                            if (scenario.notApplicable(system) == null && !connectErrors.containsKey(system)) {
                                try {
                                    measurements.add(runner.measurement(scenario, system));
                                } catch (RuntimeException e) {
                                    sliced.put(system, ScenarioResult.failed(scenario.id(), system.id(), "crashed: " + e));
                                }
                            }
                        }
                        runner.interleave(measurements);
                        for (ScenarioRunner.Measurement measurement : measurements) {
                            sliced.put(measurement.system(), measurement.result());
                        }
                    }
                    Map<SystemKind, ScenarioResult> streaming = scenario == Scenario.S10
                            ? s10(runner, systemKinds, connectErrors)
                            : Map.of();
                    Map<SystemKind, ScenarioResult> scaling = scenario == Scenario.S11_SCALING
                            ? s11Scaling(plan, placement, cores, systemKinds, settings, clientSettings, connectErrors)
                            : Map.of();
                    for (SystemKind system : systemKinds) {
                        String na = scenario.notApplicable(system);
                        if (na != null) {
                            results.add(ScenarioResult.notApplicable(scenario.id(), system.id(), na));
                            continue;
                        }
                        if (connectErrors.containsKey(system)) {
                            results.add(ScenarioResult.failed(scenario.id(), system.id(), connectErrors.get(system)));
                            continue;
                        }
                        if (scenario == Scenario.S5) {
                            try {
                                s5.add(runner.s5(system, workloadList));
                                progress("S5 " + system.id() + " measured");
                            } catch (RuntimeException e) {
                                results.add(ScenarioResult.failed(scenario.id(), system.id(), "crashed: " + e));
                            }
                            continue;
                        }
                        ScenarioResult result = switch (scenario) {
                            case S6 -> run(scenario, system, () -> runner.withCounters(system, () -> runner.s6(system)));
                            case S11 -> run(scenario, system, () -> runner.s11(system));
                            case S10 -> streaming.get(system);
                            case S11_SCALING -> scaling.get(system);
                            default -> sliced.get(system);
                        };
                        results.add(result);
                        progress(summary(result));
                    }
                    if (!s5.isEmpty()) {
                        for (ScenarioResult result : S5Slowdowns.results(s5, s5Load)) {
                            results.add(result);
                            progress(summary(result));
                        }
                        if (s5ClientHosts == 0 && !s5AllToAll) {
                            // The load generator's own share of every system's client CPU, at each workload's rate.
                            Map<String, Object> own = runner.s5LoadGenerator(workloadList, s5Rates(s5));
                            if (!own.isEmpty()) {
                                s5LoadGeneratorCpu.putAll(own);
                                progress("S5 load generator alone (a client that answers at once): " + own);
                            }
                        }
                    }
                }
                // After every scenario: every client connected and warm, the JIT compilers done with them.
                idle.putAll(idleBaseline(plan, serverSet));
                progress("idle CPU (every client connected, no calls): " + idle);
            } finally {
                clients.values().forEach(client -> {
                    try {
                        client.close();
                    } catch (RuntimeException e) {
                        // best effort
                    }
                });
                serverSets.forEach(ServerSet::close);
                Runtime.getRuntime().removeShutdownHook(cleanup);
            }
        }
        if (homaTimetrace) {
            // Every process has written its trace now: the servers' as they stopped.
            TimetraceReport.attach(results, traceDir).forEach(this::progress);
        }

        List<String> workloadNames = workloadList.stream().map(Workload::name).toList();
        List<String> charts = new ArrayList<>();
        try {
            charts = Charts.write(results, scenarioList.contains(Scenario.S5) ? workloadNames : List.of(), out);
        } catch (IOException | RuntimeException | Error e) {
            progress("charts could not be written: " + e);
        }
        Map<String, Object> header = header(plan, placement, cores, settings, serverCount, systemKinds, testbed);
        if (!idle.isEmpty()) {
            header.put("idle_cpu", idle);
        }
        if (!s5LoadGeneratorCpu.isEmpty()) {
            header.put("s5_load_generator_cpu", s5LoadGeneratorCpu);
        }
        Map<String, String> scenarioDescriptions = new LinkedHashMap<>();
        scenarioList.forEach(s -> scenarioDescriptions.put(s.id(), s.description()));
        BenchReport report = new BenchReport(header, scenarioDescriptions, results,
                Ratios.compute(results, workloadNames), Targets.check(results), charts);
        ReportWriter.write(report, out);
        progress("report: " + out.resolve(ReportWriter.MARKDOWN_FILE).toAbsolutePath() + " and " + ReportWriter.JSON_FILE
                + ", " + charts.size() + " charts");
        List<String> problems = verify(out, scenarioList, systemKinds);
        if (!problems.isEmpty()) {
            problems.forEach(p -> System.err.println("FAILED: " + p));
            return 1;
        }
        progress("every selected scenario ran for every system");
        return 0;
    }

    /** S9's window: {@code --s9-measure-ms}, else 10 s in full mode and 3 s in quick mode. */
    long s9MeasureMs(RunPlan plan) {
        return s9MeasureMs != null ? s9MeasureMs : "full".equals(plan.mode()) ? 10_000 : 3_000;
    }

    /**
     * S10 for every system it applies to and that connected, the systems taking turns slice by
     * slice ({@link io.homa.bench.scenario.StreamingScenario}); a crash fails every one of them.
     */
    private static Map<SystemKind, ScenarioResult> s10(ScenarioRunner runner, List<SystemKind> systemKinds,
            Map<SystemKind, String> connectErrors) {
        List<SystemKind> measured = systemKinds.stream()
                .filter(s -> Scenario.S10.notApplicable(s) == null && !connectErrors.containsKey(s)).toList();
        try {
            return runner.s10(measured);
        } catch (RuntimeException e) {
            Map<SystemKind, ScenarioResult> results = new EnumMap<>(SystemKind.class);
            measured.forEach(s -> results.put(s, ScenarioResult.failed(Scenario.S10.id(), s.id(), "crashed: " + e)));
            return results;
        }
    }

    /**
     * Client endpoints (connections) of each system in S11's scaling variant: a server's loops
     * share its clients, by their addresses for Homa (SO_REUSEPORT) and by connection for gRPC and
     * RSocket, so one client would keep one loop busy; with eight, two loops are both busy
     * unless all eight land on one (1 in 128).
     */
    private static final int S11_SCALING_CLIENTS = 8;

    /**
     * S11's scaling variant: for each system in turn, a server process of its own, not pinned to a
     * core (whatever the placement of the others), the system's clients connected to it
     * ({@link io.homa.bench.scenario.OverloadScenario#scaling}); the process stops afterwards.
     */
    private Map<SystemKind, ScenarioResult> s11Scaling(RunPlan plan, Placement placement, int cores,
            List<SystemKind> systemKinds, SystemSettings settings, SystemSettings clientSettings,
            Map<SystemKind, String> connectErrors) {
        Map<SystemKind, ScenarioResult> results = new EnumMap<>(SystemKind.class);
        List<SystemKind> measured = systemKinds.stream()
                .filter(s -> Scenario.S11_SCALING.notApplicable(s) == null && !connectErrors.containsKey(s)).toList();
        if (measured.isEmpty()) {
            return results;
        }
        // A child process inherits this process's affinity: with the client pinned to CPU 0, a server
        // started without taskset would run on CPU 0 alone. So it is given every CPU explicitly.
        Placement unpinned = placement.pinned()
                ? new Placement(true, placement.clientCpus(), "0-" + (cores - 1), "server on every CPU (S11 scaling)")
                : placement;
        io.homa.bench.scenario.OverloadScenario overload = new io.homa.bench.scenario.OverloadScenario(
                io.homa.bench.scenario.OverloadScenario.Plan.of(plan.mode()), plan.callTimeoutMs(), List.of());
        // Each system's server in a process of its own, up only while that system is measured.
        for (SystemKind system : measured) {
            try (ServerProcess server = ServerProcess.start(List.of(system), settings, List.of(), unpinned, List.of(),
                    out.resolve("server-s11-scaling-" + system.id() + ".log"))) {
                progress("S11 scaling: unpinned server process of " + system.id() + " up: pid " + server.pid());
                List<CpuSampler.Target> sampled = List.of(ScenarioRunner.self(), new CpuSampler.Target("server", server.pid()));
                List<EchoClient> clients = new ArrayList<>();
                try {
                    for (int i = 0; i < S11_SCALING_CLIENTS; i++) {
                        clients.add(system.connect(List.of(server.address(system)), clientSettings));
                    }
                    results.put(system, overload.scaling(system, clients, sampled, homaLoops));
                } catch (Exception e) {
                    results.put(system, ScenarioResult.failed(Scenario.S11_SCALING.id(), system.id(), "crashed: " + e));
                } finally {
                    for (EchoClient client : clients) {
                        try {
                            client.close();
                        } catch (Exception e) {
                            progress("S11 scaling: closing a " + system.id() + " client failed: " + e);
                        }
                    }
                }
            } catch (IOException e) {
                results.put(system, ScenarioResult.failed(Scenario.S11_SCALING.id(), system.id(),
                        "unpinned server process did not start: " + e.getMessage()));
            }
        }
        return results;
    }

    /**
     * The processes whose CPU use S5 samples for a system: this one (the client) and the system's
     * servers S5 loads (the JVM's pid: {@code ip netns exec} and {@code taskset} exec the command
     * that follows them).
     */
    private static List<CpuSampler.Target> cpuTargets(List<CpuSampler.Target> servers) {
        List<CpuSampler.Target> targets = new ArrayList<>();
        targets.add(ScenarioRunner.self());
        targets.addAll(servers);
        return targets;
    }

    /**
     * Each S5 workload's offered rate: the one every system got (--s5-rps, or the link load's), else
     * the mean of the systems' (each a fraction of its own maximum).
     */
    private static Map<String, Double> s5Rates(List<ScenarioRunner.S5Raw> raws) {
        Map<String, double[]> sums = new LinkedHashMap<>();
        for (ScenarioRunner.S5Raw raw : raws) {
            raw.workloads().forEach((name, w) -> {
                double[] sum = sums.computeIfAbsent(name, k -> new double[2]);
                sum[0] += w.offeredPerSecond();
                sum[1]++;
            });
        }
        Map<String, Double> rates = new LinkedHashMap<>();
        sums.forEach((name, sum) -> rates.put(name, sum[0] / sum[1]));
        return rates;
    }

    /**
     * The CPU the run's processes use when no call runs, every client connected and warm: this
     * process (every system's client in it) and each server process, as fractions of one core
     * over a window of 0.5 s (quick) or 3 s (full) after the last scenario (and a pause of 0.2 s,
     * full 1 s, for what it left running). The client's bounds what the
     * idle clients of the other systems add to a system's window; a system's own server idles
     * outside its windows.
     */
    private static Map<String, Object> idleBaseline(RunPlan plan, ServerSet servers) {
        List<CpuSampler.Target> targets = new ArrayList<>();
        targets.add(ScenarioRunner.self());
        servers.pids().forEach((name, pid) -> targets.add(new CpuSampler.Target(name, pid)));
        CpuSampler sampler = new CpuSampler(targets);
        CpuSampler.Usage usage;
        try {
            Thread.sleep("full".equals(plan.mode()) ? 1_000 : 200); // what the last scenario left running
            sampler.start();
            Thread.sleep("full".equals(plan.mode()) ? 3_000 : 500);
            usage = sampler.stop();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            usage = null;
        }
        Map<String, Object> idle = new LinkedHashMap<>();
        if (usage == null) {
            return idle;
        }
        idle.put("window_s", Math.round(usage.windowSeconds() * 1000) / 1000.0);
        Map<String, Object> servers0 = new LinkedHashMap<>();
        for (CpuSampler.ProcessUsage process : usage.processes()) {
            Object value = process.missing() ? "missing" : Math.round(process.cpuFraction() * 10_000) / 10_000.0;
            if (process.role().equals("client")) {
                idle.put("client_cpu_fraction", value);
            } else {
                servers0.put(process.role(), value);
            }
        }
        idle.put("server_cpu_fraction", servers0);
        return idle;
    }

    private static ScenarioResult run(Scenario scenario, SystemKind system, Supplier<ScenarioResult> body) {
        try {
            return body.get();
        } catch (RuntimeException e) {
            return ScenarioResult.failed(scenario.id(), system.id(), "crashed: " + e);
        }
    }

    private static String summary(ScenarioResult r) {
        String head = r.scenario().toUpperCase(Locale.ROOT) + " " + r.system() + ": ";
        if (!r.status().equals(ScenarioResult.OK)) {
            return head + r.status() + " " + r.note();
        }
        return head + switch (r.scenario()) {
            case "s1", "s2" -> String.format(Locale.ROOT, "p50 %.1f µs, p99 %.1f µs, p99.9 %.1f µs", r.number("p50_us"),
                    r.number("p99_us"), r.number("p99.9_us"));
            case "s3" -> String.format(Locale.ROOT, "%,.0f RPCs/s, p50 %.1f µs", r.number("rpcs_per_s"), r.number("p50_us"));
            case "s4" -> String.format(Locale.ROOT, "%.3f Gbit/s, p50 %.1f µs", r.number("goodput_gbps"), r.number("p50_us"));
            case "s6" -> String.format(Locale.ROOT, "N=%.0f in %.1f ms, %.0f failed calls in all", r.number("max_n"),
                    r.number("completion_ms_at_max_n"), r.number("failures"));
            case "s10" -> io.homa.bench.scenario.StreamingScenario.summary(r);
            case "s11" -> io.homa.bench.scenario.OverloadScenario.summary(r);
            default -> "done" + (r.note().isEmpty() ? "" : " (" + r.note() + ")");
        };
    }

    /**
     * The Poisson rate, calls/s, that loads a link to {@code load} of its capacity with a workload's
     * messages: its mean length plus per-packet headers (IP, UDP and Homa DATA, about 80 B per MTU).
     */
    static double linkRate(Workload workload, Testbed testbed, double load) {
        double payloadPerPacket = testbed.mtuBytes() - 80.0;
        double wireBytes = workload.meanLengthBytes() * (1 + 80.0 / payloadPerPacket) + 80;
        return Math.round(load * testbed.linkMbps() * 1e6 / 8 / wireBytes * 10) / 10.0;
    }

    private String s5RpsText() {
        return String.join(",", s5Rps.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList());
    }

    private Map<String, Object> header(RunPlan plan, Placement placement, int cores, SystemSettings settings,
            int serverCount, List<SystemKind> systemKinds, Testbed testbed) {
        Map<String, Object> header = new LinkedHashMap<>();
        header.put("mode", plan.mode());
        header.put("date", OffsetDateTime.now().truncatedTo(ChronoUnit.SECONDS).toString());
        header.put("duration_s", Math.round((System.nanoTime() - startNs) / 1e8) / 10.0);
        header.put("command", "benchmarks/run.sh " + plan.mode() + " --systems=" + String.join(",", systems)
                + " --scenarios=" + String.join(",", scenarios) + " --s5-load=" + s5Load
                + (s5Rps.isEmpty() ? "" : " --s5-rps=" + s5RpsText())
                + (s5MinCalls == 0 ? "" : " --s5-min-calls=" + s5MinCalls) + " --servers=" + servers
                + (s6Fanouts == null ? "" : " --s6-fanouts=" + s6Fanouts.stream().map(String::valueOf).collect(java.util.stream.Collectors.joining(",")))
                + (net == Net.TESTBED ? " --net=testbed" : "")
                + (s5LinkLoad == null ? "" : " --s5-link-load=" + s5LinkLoad)
                + (s5ClientHosts == 0 ? "" : " --s5-client-hosts=" + s5ClientHosts)
                + (s5AllToAll ? " --s5-all-to-all" : "")
                + (scenarios.stream().anyMatch(id -> id.trim().equalsIgnoreCase("s9")) ? " --s9-tcp-system=" + s9TcpSystem
                        + " --s9-measure-ms=" + s9MeasureMs(plan) + " --s9-incast-outstanding=" + s9IncastOutstanding : "")
                + (settings.homaLinkMbps() == io.homa.reactive.HomaTransportConfig.AUTO_LINK_MBPS ? ""
                        : " --homa-link-mbps=" + settings.homaLinkMbps()) + " --homa-mtu-bytes=" + homaMtuBytes + (homaGso ? "" : " --no-homa-gso")
                + (homaPriorityTos == io.homa.reactive.HomaTransportConfig.PriorityTos.AUTO ? ""
                        : " --homa-priority-tos=" + homaPriorityTos.name().toLowerCase(Locale.ROOT))
                + (homaCongestionControl == io.homa.engine.CongestionControl.OFF ? ""
                        : " --homa-congestion-control=" + homaCongestionControl.name().toLowerCase(Locale.ROOT))
                + (homaIncastMarking ? "" : " --no-homa-incast-marking")
                + (homaSecurity == io.homa.reactive.HomaSecurityConfig.Mode.OFF ? "" : " --homa-security=" + homaSecurity.propertyValue())
                + (grpcDirectExecutor ? "" : " --no-grpc-direct-executor")
                + (pin ? "" : " --no-pin")
                + (homaLoops == io.homa.bench.systems.HomaLoops.TRANSPORT_DEFAULT ? "" : " --homa-loops=" + homaLoops));
        header.put("machine", Environment.machine(cores));
        header.put("jdk", Environment.jdk());
        header.put("versions", Environment.versions());
        header.put("placement", placement.description());
        Map<String, Object> s = new LinkedHashMap<>();
        if (testbed == null) {
            s.put("loopback", "127.0.0.1 for every system");
        } else {
            s.put("network", "testbed: " + testbed.description());
        }
        s.put("Homa priorities (IP TOS)", homaPriorityTos.name().toLowerCase(Locale.ROOT)
                + (homaPriorityTos == io.homa.reactive.HomaTransportConfig.PriorityTos.AUTO ? " (off on loopback)" : ""));
        s.put("Homa incast marking", homaIncastMarking ? "on" : "off");
        s.put("Homa congestion control", homaCongestionControl.name().toLowerCase(Locale.ROOT));
        s.put("Homa incast buffer", settings.homaIncastBufferBytes() == io.homa.reactive.HomaTransportConfig.AUTO_INCAST_BUFFER
                ? "the transport's (" + io.homa.reactive.HomaTransportConfig.LOOPBACK_INCAST_BUFFER_FACTOR
                        + " x the socket receive buffer on loopback)"
                : String.format("%,d B (the switch's per-class buffer)", settings.homaIncastBufferBytes()));
        if (s5ClientHosts > 0) {
            s.put("S5 clients", "from " + s5ClientHosts + " client hosts at once (one load process each, its share of"
                    + " the rate) to the first server; calibration and maximum from host 1");
        }
        if (s5AllToAll) {
            s.put("S5 clients", "all-to-all: every host at once (one load process each, half the single-client rate),"
                    + " each call to a server on one of the other hosts, drawn uniformly; calibration and maximum from host 1");
        }
        s.put("server processes", "each system's first server in a process of its own (S1-S5, S10, S11 call it)"
                + (serverCount > 1 ? "; " + (serverCount - 1) + " more shared by every system, which S6 fans out to with"
                        + " the first (" + serverCount + " servers per system)" : ""));
        List<String> serverOptions = new ArrayList<>(ServerProcess.SERVER_JVM_OPTIONS);
        serverOptions.addAll(serverJvmOptions);
        s.put("server JVM options", String.join(" ", serverOptions));
        s.put("client JVM options", String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()));
        s.put("Homa pacer (link-mbps)", switch (settings.homaLinkMbps()) {
            case 0 -> "off";
            case io.homa.reactive.HomaTransportConfig.AUTO_LINK_MBPS -> "auto: "
                    + io.homa.reactive.HomaTransportConfig.LOOPBACK_LINK_MBPS + " Mbit/s on loopback (grant window "
                    + io.homa.reactive.HomaTransportConfig.LOOPBACK_RTT_BYTES + " B), the device's speed elsewhere";
            default -> settings.homaLinkMbps() + " Mbit/s";
        });
        s.put("Homa event loops", settings.homaLoops() == io.homa.bench.systems.HomaLoops.TRANSPORT_DEFAULT
                ? "the transport's default (one per processor the process may use: one when pinned)" : settings.homaLoops() + " per transport (--homa-loops)");
        s.put("Homa UDP GSO/GRO", settings.homaSegmentationOffload() ? "on where the kernel has them" : "off");
        s.put("Homa busy-poll", settings.homaBusyPollNs() == SystemSettings.TRANSPORT_DEFAULT
                ? io.homa.reactive.HomaTransportConfig.DEFAULT_BUSY_POLL_NS / 1000
                        + " µs before an event loop sleeps (the transport's default; epoll only)"
                : settings.homaBusyPollNs() == 0 ? "off (--homa-busy-poll-us=0)"
                : settings.homaBusyPollNs() / 1000 + " µs before an event loop sleeps (--homa-busy-poll-us; epoll only)");
        s.put("Homa timetrace", settings.homaTimetrace()
                ? "on: every Homa transport keeps " + SystemSettings.TIMETRACE_EVENTS + " events per thread, written to timetrace/"
                : "off");
        s.put("Homa MTU", settings.homaMtuBytes() == 0 ? "the device's (65,535 B on loopback"
                + (testbed == null ? "" : ", " + testbed.mtuBytes() + " B on the testbed") + ")" : settings.homaMtuBytes() + " B");
        s.put("Homa packet authentication", settings.homaSecurity().propertyValue()
                + (settings.homaSecurity() == io.homa.reactive.HomaSecurityConfig.Mode.OFF ? "" : " (AES-256-GCM, 41-byte trailer per datagram)"));
        s.put("gRPC executor", settings.grpcDirectExecutor() ? "direct (event loop)" : "default thread pool");
        s.put("S5 load", s5Load + " of each system's measured maximum (closed loop, " + plan.s5MaxOutstanding()
                + " outstanding)" + (s5Rps.isEmpty() ? "" : "; fixed rates for every system, calls/s: " + s5RpsText()));
        s.put("S5 window", s5MinCalls == 0 ? plan.s5LoadMs() + " ms per workload"
                : "at least " + s5MinCalls + " recorded calls per workload (--s5-min-calls; all load processes together):"
                        + " the longer of " + plan.s5LoadMs() + " ms and N / the offered rate plus a tenth (at least 1 s);"
                        + " each workload's window is its measure_ms");
        s.put("plan", plan.toString());
        header.put("settings", s);
        Map<String, String> descriptions = new LinkedHashMap<>();
        systemKinds.forEach(k -> descriptions.put(k.id(), k.description()));
        header.put("systems", descriptions);
        return header;
    }

    /**
     * Checks that the report files exist and hold a result for every selected (scenario,
     * system) with status ok or n/a.
     *
     * @return the problems found; empty when the run is complete
     */
    public static List<String> verify(Path dir, List<Scenario> scenarios, List<SystemKind> systems) {
        List<String> problems = new ArrayList<>();
        Path json = dir.resolve(ReportWriter.JSON_FILE);
        if (!Files.isRegularFile(json) || !Files.isRegularFile(dir.resolve(ReportWriter.MARKDOWN_FILE))) {
            problems.add("report files missing in " + dir.toAbsolutePath());
            return problems;
        }
        Map<String, Object> report;
        try {
            report = ReportWriter.readJson(json);
        } catch (IOException | RuntimeException e) {
            problems.add("report.json unreadable: " + e);
            return problems;
        }
        Map<String, String> status = new LinkedHashMap<>();
        if (report.get("results") instanceof List<?> results) {
            for (Object entry : results) {
                if (entry instanceof Map<?, ?> map) {
                    status.put(map.get("scenario") + "/" + map.get("system"), map.get("status") + " " + map.get("note"));
                }
            }
        }
        for (Scenario scenario : scenarios) {
            for (SystemKind system : systems) {
                String key = scenario.id() + "/" + system.id();
                String value = status.get(key);
                if (value == null) {
                    problems.add(key + ": no result");
                } else if (!value.startsWith(ScenarioResult.OK) && !value.startsWith(ScenarioResult.NOT_APPLICABLE)) {
                    problems.add(key + ": " + value);
                }
            }
        }
        return problems;
    }
}
