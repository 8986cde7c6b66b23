package io.homa.bench;

import tools.jackson.databind.json.JsonMapper;
import io.homa.bench.scenario.ClosedLoop;
import io.homa.bench.scenario.OpenLoop;
import io.homa.bench.systems.EchoProtocol;
import io.homa.bench.systems.EchoClient;
import io.homa.bench.systems.SystemKind;
import io.homa.workloads.Workload;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * A load process on another host of the testbed (S5 with {@code --s5-client-hosts} or
 * {@code --s5-all-to-all}): connects one system's client to one server or several (each call then
 * goes to one of them, drawn uniformly), runs an open loop of one workload at a Poisson rate, and prints
 * one line {@code RESULT <json>} with every recorded length and round trip ({@link OpenLoop.Result}),
 * then exits. Started by the load generator ({@link AgentProcess}).
 */
@Command(name = "homa-bench-agent", mixinStandardHelpOptions = true,
        description = "Open-loop load from one testbed host, for the load generator (started by it).")
public final class LoadAgent implements Callable<Integer> {
    /** The line prefix the load generator reads. */
    public static final String RESULT_PREFIX = "RESULT ";
    /** Rate of the open-loop part of the warm-up, calls per second, of the workload's shorter half. */
    static final double WARMUP_SHORT_CALLS_PER_S = 1_500;

    @Option(names = "--system", required = true, description = "System id.")
    String system;

    @Option(names = "--server", required = true, description = "A server's IPv4 address and port, a.b.c.d:port; repeatable: each call goes to one of them, drawn uniformly.")
    List<String> servers;

    @Option(names = "--workload", required = true, description = "w1..w5.")
    String workload;

    @Option(names = "--rps", required = true, description = "Poisson rate, calls per second.")
    double ratePerSecond;

    @Option(names = "--warmup-ms", description = "Load before the window.")
    long warmupMs = 1_000;

    @Option(names = "--measure-ms", description = "The window.")
    long measureMs = 10_000;

    @Option(names = "--timeout-ms", description = "A call not answered within it fails.")
    long timeoutMs = 10_000;

    @Option(names = "--max-outstanding", description = "Arrivals beyond this many calls in flight are skipped.")
    int maxOutstanding = 256;

    @Option(names = "--start-at-epoch-ms", description = "Wall-clock time (ms since the epoch) at which the open loop starts, so that every agent's window is the same; until then the agent warms up with a closed loop of the workload's messages (JIT, connections). 0: at once.")
    long startAtEpochMs;

    @Option(names = "--seed", description = "Random seed of arrivals and lengths.")
    long seed = 42;

    @CommandLine.Mixin
    SettingsOptions options = new SettingsOptions();

    public static void main(String[] args) {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
        System.exit(new CommandLine(new LoadAgent()).setCaseInsensitiveEnumValuesAllowed(true).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        List<InetSocketAddress> addresses = servers.stream().map(server -> {
            int colon = server.lastIndexOf(':');
            return new InetSocketAddress(server.substring(0, colon), Integer.parseInt(server.substring(colon + 1)));
        }).toList();
        Workload w = Workload.load(workload);
        try (EchoClient client = SystemKind.fromId(system).connect(addresses, options.settings())) {
            long warmupUntilMs = startAtEpochMs - System.currentTimeMillis();
            if (warmupUntilMs > 100) {
                ClosedLoop[] warm = new ClosedLoop[addresses.size()];
                for (int target = 0; target < warm.length; target++) {
                    warm[target] = new ClosedLoop(client, target,
                            () -> EchoProtocol.echoRequest(w.sample(ThreadLocalRandom.current())), 4, timeoutMs);
                }
                // Half closed-loop with the workload's messages (every packet path), half the open
                // loop itself with the shorter half of the workload at a high rate: at a loaded
                // link's few calls per second the per-call paths would otherwise reach the C2
                // compiler only minutes into the window, and compile there on the measured core.
                long closedMs = (warmupUntilMs - 100) / 2;
                ClosedLoop.runTogether(0, closedMs, timeoutMs, warm);
                long openMs = startAtEpochMs - System.currentTimeMillis() - 500;
                if (openMs > 100) {
                    new OpenLoop(client, addresses.size() == 1 ? 0 : OpenLoop.ANY_TARGET,
                            u -> w.sample((u & 0x7fff_ffff) / (double) (1L << 32)), WARMUP_SHORT_CALLS_PER_S,
                            maxOutstanding, timeoutMs, seed ^ 0x5DEECE66DL).run(0, openMs, 0);
                }
            }
            long waitMs = startAtEpochMs - System.currentTimeMillis();
            if (waitMs > 0) {
                Thread.sleep(waitMs);
            }
            OpenLoop.Result result = new OpenLoop(client, addresses.size() == 1 ? 0 : OpenLoop.ANY_TARGET, OpenLoop.lengthsOf(w),
                    ratePerSecond, maxOutstanding, timeoutMs, seed).run(warmupMs, measureMs, timeoutMs);
            System.out.println(RESULT_PREFIX + JsonMapper.builder().build().writeValueAsString(result));
            System.out.flush();
        }
        return 0;
    }
}
