package io.homa.bench.scenario;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * S9's figures (issue 36, the paper's own tests of congestion control and TCP coexistence on the
 * rack): each run's metrics from what its load agents measured and what the rack's counters moved,
 * and the report's table over the runs. Pure functions, so that each is tested without a rack.
 */
public final class S9Metrics {
    /** The runs, in the order they are run and reported. */
    public static final List<String> RUNS = List.of("cc_on_with_tcp", "cc_off_with_tcp", "cc_on_alone", "incast_cc_on",
            "incast_cc_off");

    /** The figures every run's metrics hold, null where the run has none (TCP's in a run without TCP). */
    public static final List<String> REQUIRED = List.of("homa_achieved_fraction", "tcp_achieved_fraction",
            "homa_drops_fraction", "short_p99_us", "goodput_gbps");

    private S9Metrics() {}

    /** The congestion control a run asks for: {@code rtt} for the {@code _on} runs, else {@code off}. */
    public static io.homa.engine.CongestionControl congestionControl(String run) {
        return run.contains("cc_on") ? io.homa.engine.CongestionControl.RTT : io.homa.engine.CongestionControl.OFF;
    }

    /** Whether a run loads the server's link with TCP beside Homa. */
    public static boolean withTcp(String run) {
        return run.endsWith("_with_tcp");
    }

    /** Whether a run is an incast of Homa from every client host. */
    public static boolean incast(String run) {
        return run.startsWith("incast_");
    }

    /**
     * Achieved over offered, by bytes: the response bytes answered within the window (whenever
     * issued) over the request bytes that arrived in it; NaN when nothing was offered.
     */
    public static double achievedFraction(OpenLoop.Result result) {
        return result.offeredBytesInWindow() <= 0 ? Double.NaN
                : (double) result.answeredBytesInWindow() / result.offeredBytesInWindow();
    }

    /** Packets lost over packets sent; NaN when none were sent. */
    public static double dropsFraction(long sent, long lost) {
        return sent <= 0 ? Double.NaN : (double) lost / sent;
    }

    /** Goodput: response bytes answered within the window, Gbit/s. */
    public static double goodputGbps(OpenLoop.Result result) {
        return result.windowSeconds() <= 0 ? Double.NaN : result.answeredBytesInWindow() * 8.0 / result.windowSeconds() / 1e9;
    }

    /**
     * The p99 round trip of the shortest decile of the recorded calls (the tenth with the shortest
     * messages, at least one call), µs; NaN without calls.
     */
    public static double shortestDecileP99Us(OpenLoop.Result result) {
        int n = result.recorded();
        if (n == 0) {
            return Double.NaN;
        }
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> Integer.compare(result.lengthsBytes()[a], result.lengthsBytes()[b]));
        int decile = Math.max(1, n / 10);
        double[] rtt = new double[decile];
        for (int i = 0; i < decile; i++) {
            rtt[i] = result.rttNs()[order[i]];
        }
        return LatencyStats.us(LatencyStats.percentile(rtt, decile, 99));
    }

    /**
     * Packets of one protocol between the window's start and the end of the run.
     *
     * @param sent packets the senders' kernels sent
     * @param lost of those, packets no receiver got (the rack's drops)
     */
    public record Packets(long sent, long lost) {}

    /**
     * One run's metrics.
     *
     * @param run one of {@link #RUNS}
     * @param homa what Homa's agents measured (merged)
     * @param homaOfferedPerSecond Homa's Poisson rate, calls/s, all its agents together
     * @param tcp what the TCP system's agents measured, or null in a run without TCP
     * @param homaPackets Homa's packets (UDP), or null where the rack's counters could not be read
     * @param tcpPackets TCP's packets, or null likewise
     * @param switchDrops packets every switch port dropped over the same interval, -1 if unknown
     * @param queuedAtStart packets queued in the rack when the window started (what the counts can
     *     miss: each was counted as sent before the window and received in it), -1 if unknown
     * @param cpu the CPU sampler's metrics over the window ({@code cpu_bound} in it), or null
     */
    public static Map<String, Object> run(String run, OpenLoop.Result homa, double homaOfferedPerSecond,
            OpenLoop.@Nullable Result tcp, double tcpOfferedPerSecond, @Nullable Packets homaPackets,
            @Nullable Packets tcpPackets, long switchDrops, long queuedAtStart, @Nullable Map<String, Object> cpu) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("run", run);
        m.put("congestion_control", congestionControl(run).name().toLowerCase(Locale.ROOT));
        m.put("with_tcp", tcp != null);
        m.put("homa_achieved_fraction", round4(achievedFraction(homa)));
        m.put("tcp_achieved_fraction", tcp == null ? null : round4(achievedFraction(tcp)));
        m.put("homa_drops_fraction", homaPackets == null ? null : round6(dropsFraction(homaPackets.sent(), homaPackets.lost())));
        m.put("short_p99_us", round1(shortestDecileP99Us(homa)));
        m.put("goodput_gbps", round4(goodputGbps(homa)));
        m.put("tcp_goodput_gbps", tcp == null ? null : round4(goodputGbps(tcp)));
        m.put("homa_offered_rpcs_per_s", round1(homaOfferedPerSecond));
        m.put("homa_offered_mbps", round1(homa.offeredBytesInWindow() * 8.0 / homa.windowSeconds() / 1e6));
        m.put("homa_calls", homa.recorded());
        m.put("homa_failures", homa.failed());
        m.put("homa_skipped_arrivals", homa.skipped());
        if (tcp != null) {
            m.put("tcp_offered_rpcs_per_s", round1(tcpOfferedPerSecond));
            m.put("tcp_offered_mbps", round1(tcp.offeredBytesInWindow() * 8.0 / tcp.windowSeconds() / 1e6));
            m.put("tcp_calls", tcp.recorded());
            m.put("tcp_failures", tcp.failed());
            m.put("tcp_skipped_arrivals", tcp.skipped());
        }
        if (homaPackets != null) {
            m.put("homa_packets_sent", homaPackets.sent());
            m.put("homa_switch_drops", homaPackets.lost());
        }
        if (tcpPackets != null) {
            m.put("tcp_packets_sent", tcpPackets.sent());
            m.put("tcp_packets_lost", tcpPackets.lost());
        }
        if (switchDrops >= 0) {
            m.put("switch_qdisc_drops", switchDrops);
        }
        if (queuedAtStart >= 0) {
            m.put("queued_packets_at_start", queuedAtStart);
        }
        m.put("measure_ms", Math.round(homa.windowSeconds() * 1000));
        if (homa.firstError() != null) {
            m.put("homa_first_error", homa.firstError());
        }
        if (tcp != null && tcp.firstError() != null) {
            m.put("tcp_first_error", tcp.firstError());
        }
        if (cpu != null) {
            m.put("cpu", cpu);
        }
        // The five figures are always there (null where a run has none); the others only when known.
        m.entrySet().removeIf(e -> e.getValue() == null && !REQUIRED.contains(e.getKey()));
        return m;
    }

    /** The report's table: its header. */
    public static final List<String> TABLE_HEADER = List.of("run", "congestion control asked", "TCP",
            "Homa offered Mbit/s", "Homa achieved", "TCP achieved", "Homa switch drops", "TCP lost", "switch drops (all)",
            "short p99 µs", "Homa goodput Gbit/s", "Homa calls (failed)", "CPU (cores)");

    /** The report's table: one row per run's metrics, in the order given. */
    public static List<List<String>> tableRows(List<Map<String, Object>> runs) {
        List<List<String>> rows = new ArrayList<>();
        for (Map<String, Object> m : runs) {
            Object tcpAchieved = m.get("tcp_achieved_fraction");
            String homaDrops = m.containsKey("homa_switch_drops")
                    ? m.get("homa_switch_drops") + " of " + m.get("homa_packets_sent") + " (" + percent(m.get("homa_drops_fraction"), 3) + ")"
                            + (m.containsKey("queued_packets_at_start") ? " ±" + m.get("queued_packets_at_start") : "")
                    : "n/a";
            String tcpLost = !Boolean.TRUE.equals(m.get("with_tcp")) ? "–"
                    : m.containsKey("tcp_packets_lost") ? m.get("tcp_packets_lost") + " of " + m.get("tcp_packets_sent") : "n/a";
            String cores = "n/a";
            if (m.get("cpu") instanceof Map<?, ?> cpu && cpu.get("cores") instanceof List<?> list) {
                List<String> each = new ArrayList<>();
                list.forEach(core -> each.add(percent(core, 0)));
                cores = String.join(" / ", each) + (Boolean.TRUE.equals(cpu.get("cpu_bound")) ? " (CPU-bound)" : "");
            }
            rows.add(List.of(String.valueOf(m.get("run")), String.valueOf(m.get("congestion_control")),
                    Boolean.TRUE.equals(m.get("with_tcp")) ? "yes" : "no", number(m.get("homa_offered_mbps")),
                    percent(m.get("homa_achieved_fraction"), 1), tcpAchieved == null ? "–" : percent(tcpAchieved, 1),
                    homaDrops, tcpLost, m.containsKey("switch_qdisc_drops") ? String.valueOf(m.get("switch_qdisc_drops")) : "n/a",
                    number(m.get("short_p99_us")), number(m.get("goodput_gbps")),
                    m.get("homa_calls") + " (" + m.get("homa_failures") + ")", cores));
        }
        return rows;
    }

    static String percent(@Nullable Object value, int decimals) {
        if (!(value instanceof Number n) || Double.isNaN(n.doubleValue())) {
            return "n/a";
        }
        return String.format(Locale.ROOT, "%." + decimals + "f%%", n.doubleValue() * 100);
    }

    static String number(@Nullable Object value) {
        if (!(value instanceof Number n) || Double.isNaN(n.doubleValue())) {
            return "n/a";
        }
        double v = n.doubleValue();
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? String.format(Locale.ROOT, "%,d", (long) v)
                : String.format(Locale.ROOT, Math.abs(v) < 1 ? "%.4f" : "%,.1f", v);
    }

    private static @Nullable Double round1(double v) {
        return Double.isNaN(v) ? null : Math.round(v * 10) / 10.0;
    }

    private static @Nullable Double round4(double v) {
        return Double.isNaN(v) ? null : Math.round(v * 10_000) / 10_000.0;
    }

    private static @Nullable Double round6(double v) {
        return Double.isNaN(v) ? null : Math.round(v * 1_000_000) / 1_000_000.0;
    }
}
