package io.homa.bench;

import io.homa.bench.cpu.CpuSampler;
import io.homa.bench.report.ScenarioResult;
import io.homa.bench.scenario.OpenLoop;
import io.homa.bench.scenario.S9Metrics;
import io.homa.bench.scenario.Scenario;
import io.homa.bench.systems.SystemKind;
import io.homa.bench.systems.SystemSettings;
import io.homa.reactive.HomaTransportConfig;
import io.homa.workloads.Workload;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * S9 (issue 36): the paper's tests of congestion control and of TCP coexistence, on the rack only.
 * The switch gives Homa no priority over TCP (Homa's priorities off, so Homa and TCP share the
 * lowest class's FIFO of every port), and the first server's host downlink is the bottleneck. Five
 * runs ({@link S9Metrics#RUNS}), each with a server process of its own on that host (Homa's message
 * layer and the TCP system) and load agents on every other host:
 * <ul>
 *   <li>bandwidth split: the TCP system's W5 at 50% of the link from the first client host, Homa's
 *       W5 at 40% from the others; congestion control asked on ({@code rtt}) and off, and on
 *       without TCP;</li>
 *   <li>incast: Homa's W5 from every client host at once, offered at twice the link with each
 *       agent's calls in flight capped ({@code --s9-incast-outstanding}): every agent keeps that many
 *       calls outstanding, which overfills the port; congestion control on and off.</li>
 * </ul>
 * Every Homa process of a run is asked for the run's congestion control
 * ({@link SystemSettings#homaCongestionControl()}). Homa runs without UDP segmentation offload in
 * S9, so that a datagram is a packet for the rack's per-protocol counts
 * ({@link Testbed#protocolCounts()}), read when the window starts and after every agent ended.
 */
final class S9Scenario {
    /** TCP's share of the link in the bandwidth split. */
    static final double TCP_LINK_LOAD = 0.5;
    /** Homa's share of the link in the bandwidth split (all its client hosts together). */
    static final double HOMA_LINK_LOAD = 0.4;
    /** Homa's offered load in the incast, of the link: above it, so that every agent keeps its cap of calls in flight. */
    static final double INCAST_LINK_LOAD = 2.0;
    /** The workload of every run. */
    static final String WORKLOAD = "w5";

    private final Testbed testbed;
    private final Placement placement;
    private final SystemSettings settings;
    private final SystemKind tcpSystem;
    private final long warmupMs;
    private final long measureMs;
    private final long timeoutMs;
    private final int incastOutstanding;
    private final List<String> serverJvmOptions;
    private final Path out;
    private final Consumer<String> progress;

    /**
     * @param settings the run's settings; S9 turns Homa's priorities and UDP segmentation offload off
     *     and sets the congestion control per run
     * @param tcpSystem the TCP system beside Homa ({@code tcp} or {@code grpc})
     * @param warmupMs each agent's open-loop warm-up before the window (its closed-loop warm-up is
     *     {@link AgentProcess}'s)
     */
    S9Scenario(Testbed testbed, Placement placement, SystemSettings settings, SystemKind tcpSystem, long warmupMs,
            long measureMs, long timeoutMs, int incastOutstanding, List<String> serverJvmOptions, Path out,
            Consumer<String> progress) {
        this.testbed = testbed;
        this.placement = placement;
        this.settings = new SystemSettings(settings.homaLinkMbps(), settings.homaMtuBytes(), settings.grpcDirectExecutor(),
                false, settings.homaSecurity(), HomaTransportConfig.PriorityTos.OFF, settings.homaIncastMarking(),
                settings.bindHost(), settings.homaIncastBufferBytes(), settings.homaBusyPollNs(), settings.homaTimetraceDir(),
                settings.homaLoops(), settings.homaCongestionControl());
        this.tcpSystem = tcpSystem;
        this.warmupMs = warmupMs;
        this.measureMs = measureMs;
        this.timeoutMs = timeoutMs;
        this.incastOutstanding = incastOutstanding;
        this.serverJvmOptions = List.copyOf(serverJvmOptions);
        this.out = out;
        this.progress = progress;
    }

    /**
     * Checks what S9 needs of the run's options.
     *
     * @throws IllegalArgumentException naming the option
     */
    static void check(@Nullable Testbed testbed, SystemKind tcpSystem, int incastOutstanding, long measureMs) {
        if (testbed == null) {
            throw new IllegalArgumentException("--scenarios=s9 runs on the rack only (one FIFO class shared by Homa and"
                    + " TCP, a switch port as the bottleneck): bring it up with benchmarks/testbed.sh up and run"
                    + " benchmarks/run.sh full --net=testbed --scenarios=s9");
        }
        if (testbed.hosts() < 3) {
            throw new IllegalArgumentException("--scenarios=s9 needs a rack of at least 3 hosts (a server host and two"
                    + " client hosts: TCP from one, Homa from the others), this one has " + testbed.hosts());
        }
        if (tcpSystem != SystemKind.TCP && tcpSystem != SystemKind.GRPC) {
            throw new IllegalArgumentException("--s9-tcp-system must be tcp or grpc, was " + tcpSystem.id());
        }
        if (incastOutstanding < 1 || incastOutstanding > 1_000) {
            throw new IllegalArgumentException("--s9-incast-outstanding must be between 1 and 1000, was " + incastOutstanding);
        }
        if (measureMs < 500 || measureMs > 600_000) {
            throw new IllegalArgumentException("--s9-measure-ms must be between 500 and 600000, was " + measureMs);
        }
    }

    /** The five runs, one after another: one result under {@code homa} holding every run's metrics. */
    ScenarioResult run() {
        int serverHost = testbed.serverHost(0);
        List<Integer> clientHosts = new ArrayList<>();
        for (int host = 1; host <= testbed.hosts(); host++) {
            if (host != serverHost) {
                clientHosts.add(host);
            }
        }
        Workload w5 = Workload.load(WORKLOAD);
        List<Map<String, Object>> runs = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        long seed = 9;
        for (String name : S9Metrics.RUNS) {
            try {
                runs.add(run(name, serverHost, clientHosts, w5, seed++));
                Map<String, Object> m = runs.get(runs.size() - 1);
                progress.accept(String.format(Locale.ROOT, "S9 %s: Homa achieved %s, TCP %s, Homa drops %s, short p99 %s µs,"
                        + " goodput %s Gbit/s", name, m.get("homa_achieved_fraction"), m.get("tcp_achieved_fraction"),
                        m.get("homa_drops_fraction"), m.get("short_p99_us"), m.get("goodput_gbps")));
            } catch (RuntimeException | IOException e) {
                failures.add(name + ": " + e);
                progress.accept("S9 " + name + " failed: " + e);
            }
        }
        Map<String, Object> metrics = new LinkedHashMap<>();
        metrics.put("runs", runs);
        metrics.put("tcp_system", tcpSystem.id());
        metrics.put("workload", WORKLOAD);
        metrics.put("server_host", testbed.address(serverHost));
        metrics.put("tcp_hosts", List.of(testbed.address(clientHosts.get(0))));
        metrics.put("homa_hosts", clientHosts.subList(1, clientHosts.size()).stream().map(testbed::address).toList());
        metrics.put("incast_hosts", clientHosts.stream().map(testbed::address).toList());
        metrics.put("measure_ms", measureMs);
        metrics.put("incast_outstanding_per_host", incastOutstanding);
        metrics.put("homa_priorities", "off (one FIFO class for Homa and TCP)");
        metrics.put("homa_gso", "off (a datagram is a packet for the drop counts)");
        metrics.put("drop_counting", "per protocol from every host's /proc/net/snmp (UDP: OutDatagrams accepted by the"
                + " NIC queue minus InDatagrams + InErrors + NoPorts; TCP: OutSegs + RetransSegs minus InSegs), from the window's start"
                + " to after every agent ended, low by up to the packets in flight when it started"
                + " (queued_packets_at_start: the rack's queues just after that reading); switch_qdisc_drops: every switch port's bfifo drops over the same interval");
        if (runs.isEmpty()) {
            return ScenarioResult.failed(Scenario.S9.id(), SystemKind.HOMA.id(), String.join("; ", failures));
        }
        String note = "congestion control: each run's (congestion_control), applied to every Homa engine of the run"
                + (failures.isEmpty() ? "" : "; failed runs: " + String.join("; ", failures));
        return failures.isEmpty() ? ScenarioResult.ok(Scenario.S9.id(), SystemKind.HOMA.id(), note, metrics)
                : new ScenarioResult(Scenario.S9.id(), SystemKind.HOMA.id(), ScenarioResult.FAILED, note, metrics);
    }

    private Map<String, Object> run(String name, int serverHost, List<Integer> clientHosts, Workload w5, long seed)
            throws IOException {
        SystemSettings runSettings = settings.withHomaCongestionControl(S9Metrics.congestionControl(name));
        boolean withTcp = S9Metrics.withTcp(name);
        boolean incast = S9Metrics.incast(name);
        List<SystemKind> served = withTcp ? List.of(SystemKind.HOMA, tcpSystem) : List.of(SystemKind.HOMA);
        try (ServerProcess server = ServerProcess.start(served, runSettings.withBindHost(testbed.address(serverHost)),
                testbed.hostPrefix(serverHost), placement, serverJvmOptions, out.resolve("server-s9-" + name + ".log"))) {
            progress.accept("S9 " + name + ": server process up on host " + serverHost + " (pid " + server.pid()
                    + "), congestion control: " + runSettings.homaCongestionControl());
            List<AgentProcess.Group> groups = new ArrayList<>();
            double homaRate;
            double tcpRate = 0;
            // The split and its run without TCP: Homa from every client host but TCP's; the incast: from all of them.
            List<Integer> homaHosts = incast ? clientHosts : clientHosts.subList(1, clientHosts.size());
            if (incast) {
                homaRate = LoadGenerator.linkRate(w5, testbed, INCAST_LINK_LOAD);
            } else {
                homaRate = LoadGenerator.linkRate(w5, testbed, HOMA_LINK_LOAD);
            }
            InetSocketAddress homaServer = server.address(SystemKind.HOMA);
            groups.add(new AgentProcess.Group("s9-" + name + "-homa", SystemKind.HOMA, homaHosts, runSettings,
                    host -> List.of(homaServer), WORKLOAD, homaRate, incast ? incastOutstanding : 0));
            if (withTcp) {
                tcpRate = LoadGenerator.linkRate(w5, testbed, TCP_LINK_LOAD);
                InetSocketAddress tcpServer = server.address(tcpSystem);
                groups.add(new AgentProcess.Group("s9-" + name + "-" + tcpSystem.id(), tcpSystem,
                        List.of(clientHosts.get(0)), runSettings, host -> List.of(tcpServer), WORKLOAD, tcpRate, 0));
            }
            AtomicReference<Testbed.ProtocolCounts> atStart = new AtomicReference<>();
            long[] switchDropsAtStart = {-1};
            long[] queuedAtStart = {-1};
            AgentProcess.Outcome outcome = AgentProcess.runGroups(testbed, placement, groups, warmupMs, measureMs,
                    timeoutMs, seed, out, List.of(new CpuSampler.Target("server", server.pid())), () -> {
                        atStart.set(testbed.protocolCounts());
                        switchDropsAtStart[0] = testbed.switchDrops();
                        queuedAtStart[0] = testbed.queuedPackets();
                    });
            Testbed.ProtocolCounts atEnd = testbed.protocolCounts();
            long switchDropsAtEnd = testbed.switchDrops();
            Testbed.ProtocolCounts window = atStart.get() == null || atEnd == null ? null : atEnd.minus(atStart.get());
            OpenLoop.Result homa = outcome.results().get(0);
            OpenLoop.Result tcp = withTcp ? outcome.results().get(1) : null;
            return S9Metrics.run(name, homa, homaRate, tcp, tcpRate,
                    window == null ? null : new S9Metrics.Packets(window.udpSent(), window.udpLost()),
                    window == null || !withTcp ? null : new S9Metrics.Packets(window.tcpSent(), window.tcpLost()),
                    switchDropsAtStart[0] < 0 || switchDropsAtEnd < 0 ? -1 : switchDropsAtEnd - switchDropsAtStart[0],
                    queuedAtStart[0],
                    outcome.cpu() == null ? null : outcome.cpu().toMetrics());
        }
    }
}
