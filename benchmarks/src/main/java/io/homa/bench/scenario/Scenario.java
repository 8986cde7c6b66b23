package io.homa.bench.scenario;

import io.homa.bench.systems.SystemKind;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The scenarios S1-S6, S10 and S11 of the benchmark, S11's opt-in scaling variant and the rack-only S9. */
public enum Scenario {
    S1("unloaded 100 B echo round trip, 1 outstanding: p50 / p99 / p99.9"),
    S2("head-of-line: 100 B echoes measured while the same client streams 1 MiB echoes to the same server"),
    S3("throughput: 100 B echoes, 32 outstanding: RPCs/s"),
    S4("large messages: 1 MiB echoes, 4 outstanding: goodput"),
    S5("workloads W1-W5 (capped at 1,000,000 B), Poisson arrivals at a fraction of the measured maximum: "
            + "RTT and slowdown per decile of message length"),
    S6("incast: N concurrent RPCs (100 B requests, 10 KB responses) fanned out to several server processes: "
            + "completion time and failures per N"),
    /** Opt-in, rack only: the paper's tests of congestion control and TCP coexistence (issue 36). */
    S9("on the rack, one FIFO class for Homa and TCP, the server's downlink the bottleneck: W5 of TCP at 50% of the"
            + " link from one host beside Homa's W5 at 40% from the others (congestion control on, off, and on without"
            + " TCP), and an incast of Homa's W5 from every client host (congestion control on and off): achieved over"
            + " offered per protocol, Homa's switch drops, its shortest decile's p99 and goodput", false),
    S10("streaming, each system's own streams to one server: a server stream of " + StreamingScenario.SMALL_BYTES
            + " B items (items/s), server and client streams of 64 KiB items (Gbit/s of payload), and ping-pong of "
            + StreamingScenario.SMALL_BYTES + " B items over one open bidirectional stream (p50 / p99 per exchange)"),
    S11("overload: a handler that spends " + OverloadScenario.SPIN_US + " µs of CPU per call (run where each system"
            + " runs blocking work) on a server pinned to one core; its capacity (closed loop), then Poisson arrivals"
            + " at 0.5x, 1x, 1.5x and 2x of it, every call with a deadline: goodput, p99 of answered calls, refused and"
            + " timed-out fractions"),
    /** Opt-in: the server not pinned, closed loop, throughput and CPU use per process (see {@code --homa-loops}). */
    S11_SCALING("S11's handler on a server not pinned to a core (on the handler scheduler, then on the event loop),"
            + " closed loop: throughput and each process's CPU use", false);

    private final String description;
    private final boolean byDefault;

    Scenario(String description) {
        this(description, true);
    }

    Scenario(String description, boolean byDefault) {
        this.description = description;
        this.byDefault = byDefault;
    }

    /** The command-line id, e.g. {@code s11-scaling}. */
    public String id() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    public String description() {
        return description;
    }

    /**
     * Whether the scenario is a closed loop of calls over a window (S1-S4), measured in slices with
     * the systems taking turns ({@link ScenarioRunner#interleave}); S5, S6, S10 and S11 have their own shapes.
     */
    public boolean closedLoop() {
        return this != S5 && this != S6 && this != S9 && this != S10 && this != S11 && this != S11_SCALING;
    }

    /** Why this scenario does not apply to a system, or {@code null} when it does. */
    public String notApplicable(SystemKind system) {
        if (this == S9 && system != SystemKind.HOMA) {
            return "S9 is one experiment of Homa's message layer beside the TCP system (--s9-tcp-system); its five runs"
                    + " are under homa";
        }
        if (system == SystemKind.UDP && (this == S2 || this == S4)) {
            return "1 MiB does not fit in one UDP datagram (the floor carries at most "
                    + SystemKind.UDP.maxMessageBytes() + " B)";
        }
        if (system.floor() && this == S5) {
            return "S5 compares the RPC systems (workload messages up to 1,000,000 B; the floors have no "
                    + "multiplexing or segmentation)";
        }
        if (this == S10 && (system == SystemKind.HOMA || system == SystemKind.HOMA_AUTH)) {
            return "the Homa message layer has no streams (one message each way per call); S10 streams through"
                    + " Homa's RPC layer (homa-rpc)";
        }
        if (this == S10 && system.floor()) {
            return "the floors have no streams, only ping-pong of single messages";
        }
        if (system.floor() && (this == S11 || this == S11_SCALING)) {
            return "S11 needs a server that does CPU work per call; the floors only echo";
        }
        return null;
    }

    /**
     * Looks up a scenario by id.
     *
     * @throws IllegalArgumentException naming {@code --scenarios} and the allowed ids
     */
    public static Scenario fromId(String id) {
        String key = id == null ? "" : id.trim().toUpperCase(Locale.ROOT).replace('-', '_');
        for (Scenario scenario : values()) {
            if (scenario.name().equals(key)) {
                return scenario;
            }
        }
        throw new IllegalArgumentException("--scenarios: unknown scenario '" + id + "'; allowed: " + ids());
    }

    /** All ids, comma-separated. */
    public static String ids() {
        return Arrays.stream(values()).map(Scenario::id).collect(Collectors.joining(","));
    }

    /** The ids a run measures when {@code --scenarios} is not given: all but the opt-in ones, comma-separated. */
    public static String defaultIds() {
        return Arrays.stream(values()).filter(s -> s.byDefault).map(Scenario::id).collect(Collectors.joining(","));
    }
}
