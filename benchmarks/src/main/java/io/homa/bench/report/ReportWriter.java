package io.homa.bench.report;

import io.homa.bench.cpu.CpuSampler;
import io.homa.bench.trace.TimetraceReport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/** Writes a {@link BenchReport} as {@code report.json} and {@code report.md}. */
public final class ReportWriter {
    public static final String JSON_FILE = "report.json";
    public static final String MARKDOWN_FILE = "report.md";

    private static final JsonMapper JSON = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();

    private ReportWriter() {}

    /** Writes both files into {@code dir} (created if needed). */
    public static void write(BenchReport report, Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(JSON_FILE), JSON.writeValueAsString(report), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve(MARKDOWN_FILE), markdown(report), StandardCharsets.UTF_8);
    }

    /** Reads a report's JSON back as a tree of maps and lists. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> readJson(Path file) throws IOException {
        return JSON.readValue(Files.readString(file), Map.class);
    }

    static String num(Object value) {
        if (!(value instanceof Number number)) {
            return value == null ? "–" : value.toString();
        }
        double v = number.doubleValue();
        if (Double.isNaN(v)) {
            return "–";
        }
        if (number instanceof Long || number instanceof Integer || v == Math.rint(v) && Math.abs(v) >= 1000) {
            return String.format(Locale.ROOT, "%,d", Math.round(v));
        }
        if (Math.abs(v) >= 100) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        if (Math.abs(v) >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.3g", v);
    }

    static String ratio(Double value) {
        return value == null ? "–" : String.format(Locale.ROOT, "%.2fx", value);
    }

    private static void table(StringBuilder md, List<String> header, List<List<String>> rows) {
        md.append("| ").append(String.join(" | ", header)).append(" |\n|");
        header.forEach(h -> md.append(" --- |"));
        md.append('\n');
        for (List<String> row : rows) {
            md.append("| ").append(String.join(" | ", row)).append(" |\n");
        }
        md.append('\n');
    }

    private static List<ScenarioResult> of(BenchReport report, String scenario) {
        return report.results().stream().filter(r -> r.scenario().equals(scenario)).toList();
    }

    private static List<String> metricRow(ScenarioResult result, List<String> metrics) {
        List<String> row = new ArrayList<>();
        row.add(result.system());
        if (!result.status().equals(ScenarioResult.OK)) {
            row.add(result.status() + (result.note().isEmpty() ? "" : ": " + result.note()));
            for (int i = 1; i < metrics.size(); i++) {
                row.add("");
            }
            return row;
        }
        for (String metric : metrics) {
            row.add(num(result.metrics().get(metric)));
        }
        return row;
    }

    /** The Markdown text of a report. */
    @SuppressWarnings("unchecked")
    public static String markdown(BenchReport report) {
        StringBuilder md = new StringBuilder();
        Map<String, Object> h = report.header();
        md.append("# Homa side by side with gRPC-java and RSocket-java\n\n");
        md.append("Mode **").append(h.get("mode")).append("**, ").append(h.get("date")).append(", command `")
                .append(h.get("command")).append("`, ").append(h.get("duration_s")).append(" s.\n\n");
        List<List<String>> env = new ArrayList<>();
        if (h.get("machine") instanceof Map<?, ?> machine) {
            machine.forEach((k, v) -> env.add(List.of("machine " + k, String.valueOf(v))));
        }
        env.add(List.of("JDK", String.valueOf(h.get("jdk"))));
        if (h.get("versions") instanceof Map<?, ?> versions) {
            versions.forEach((k, v) -> env.add(List.of(String.valueOf(k), String.valueOf(v))));
        }
        env.add(List.of("CPU placement", String.valueOf(h.get("placement"))));
        if (h.get("settings") instanceof Map<?, ?> settings) {
            settings.forEach((k, v) -> env.add(List.of(String.valueOf(k), String.valueOf(v))));
        }
        table(md, List.of("", ""), env);

        md.append("## Systems\n\n");
        if (h.get("systems") instanceof Map<?, ?> systems) {
            systems.forEach((k, v) -> md.append("- `").append(k).append("`: ").append(v).append('\n'));
        }
        md.append("\n## Scenarios\n\n");
        report.scenarios().forEach((k, v) -> md.append("- **").append(k.toUpperCase(Locale.ROOT)).append("** ")
                .append(v).append('\n'));
        md.append('\n');

        md.append("## Ratios (Homa / peer)\n\n");
        md.append("Below 1 is better for Homa when lower is better (latency, slowdown, time), above 1 when higher is "
                + "better (RPCs/s, Gbit/s). Floors: `udp` and `tcp` ping-pong.\n\n");
        List<List<String>> ratioRows = new ArrayList<>();
        for (Ratios.Row row : report.ratios()) {
            List<String> cells = new ArrayList<>(List.of(row.scenario().toUpperCase(Locale.ROOT),
                    row.metric() + (row.lowerIsBetter() ? " (lower better)" : " (higher better)"), row.homaSystem(),
                    num(row.homa())));
            for (String peer : Ratios.PEERS) {
                cells.add(num(row.peers().get(peer)));
            }
            for (String peer : Ratios.PEERS) {
                cells.add(ratio(row.ratios().get(peer)));
            }
            ratioRows.add(cells);
        }
        List<String> ratioHeader = new ArrayList<>(List.of("scenario", "metric", "Homa system", "Homa"));
        Ratios.PEERS.forEach(ratioHeader::add);
        Ratios.PEERS.forEach(p -> ratioHeader.add("Homa/" + p));
        table(md, ratioHeader, ratioRows);

        List<Ratios.Overhead> overhead = Ratios.authenticationOverhead(report.results(), List.of());
        if (!overhead.isEmpty()) {
            md.append("## Packet authentication overhead (same run)\n\n");
            md.append("Each Homa system beside its twin with `homa.security.mode=authenticate` (AES-256-GCM tag in a "
                    + "41-byte trailer per datagram, checked before the engine): `with / without`, so below 1 is a cost "
                    + "where higher is better, above 1 where lower is better.\n\n");
            List<List<String>> overheadRows = new ArrayList<>();
            for (Ratios.Overhead row : overhead) {
                overheadRows.add(List.of(row.scenario().toUpperCase(Locale.ROOT),
                        row.metric() + (row.lowerIsBetter() ? " (lower better)" : " (higher better)"), row.system(),
                        num(row.plain()), num(row.authenticated()), ratio(row.ratio())));
            }
            table(md, List.of("scenario", "metric", "system", "without", "with authentication", "with / without"),
                    overheadRows);
        }

        markdownGrpcOverHoma(report, md);

        md.append("## Targets of the issues (Homa message layer; S11: the RPC layer; gRPC over Homa)\n\n");
        List<List<String>> targetRows = new ArrayList<>();
        for (Targets.Check check : report.targets()) {
            targetRows.add(List.of(check.target(), check.measured(),
                    check.met() == null ? "not measured" : check.met() ? "met" : "**missed**", check.gap()));
        }
        table(md, List.of("target", "measured", "result", "gap"), targetRows);

        markdownCpu(report, md);

        md.append("## S1 unloaded 100 B echo\n\n");
        List<String> s1 = List.of("p50_us", "p90_us", "p99_us", "p99.9_us", "max_us", "rpcs_per_s", "failures");
        table(md, List.of("system", "p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "max µs", "RPCs/s", "failures"),
                of(report, "s1").stream().map(r -> metricRow(r, s1)).toList());

        md.append("## S2 head-of-line: 100 B echoes while 1 MiB echoes stream\n\n");
        Map<String, Double> s1p99 = new LinkedHashMap<>();
        of(report, "s1").forEach(r -> s1p99.put(r.system(), r.number("p99_us")));
        List<List<String>> s2Rows = new ArrayList<>();
        for (ScenarioResult r : of(report, "s2")) {
            List<String> row = metricRow(r, List.of("p50_us", "p99_us", "p99.9_us", "large_goodput_gbps", "failures"));
            Double base = s1p99.get(r.system());
            row.add(4, r.status().equals(ScenarioResult.OK) && base != null && base > 0
                    ? String.format(Locale.ROOT, "%.1fx", r.number("p99_us") / base) : "");
            s2Rows.add(row);
        }
        table(md, List.of("system", "short p50 µs", "short p99 µs", "short p99.9 µs", "p99 vs S1",
                "1 MiB goodput Gbit/s", "failures"), s2Rows);

        md.append("## S3 throughput: 100 B echoes, 32 outstanding\n\n");
        List<String> s3 = List.of("rpcs_per_s", "p50_us", "p99_us", "failures");
        table(md, List.of("system", "RPCs/s", "p50 µs", "p99 µs", "failures"),
                of(report, "s3").stream().map(r -> metricRow(r, s3)).toList());

        md.append("## S4 large messages: 1 MiB echoes, 4 outstanding\n\n");
        md.append("Goodput counts the response payload (one direction); the requests carry as many bytes the other way. "
                + "System calls: the client's and the server's processes over the window (perf stat on the syscall "
                + "tracepoints; n/a without perf), per MiB of requests and responses carried.\n\n");
        List<String> s4 = List.of("goodput_gbps", "rpcs_per_s", "p50_us", "p99_us", "failures", "syscalls_per_mib",
                "send_syscalls_per_mib", "receive_syscalls_per_mib");
        table(md, List.of("system", "goodput Gbit/s", "RPCs/s", "p50 µs", "p99 µs", "failures", "syscalls/MiB",
                        "sends/MiB", "receives/MiB"),
                of(report, "s4").stream().map(r -> metricRow(r, s4)).toList());

        markdownS5(report, md);
        markdownS6(report, md);
        markdownS9(report, md);
        markdownS10(report, md);
        markdownS11(report, md);
        markdownS11Scaling(report, md);

        List<ScenarioResult> counted = report.results().stream()
                .filter(r -> r.metrics().get("client_counters") instanceof Map<?, ?>).toList();
        if (!counted.isEmpty()) {
            md.append("## Homa client engine counters per scenario (where the time goes)\n\n");
            md.append("Change of the client transport's engine counters over each scenario (warm-up included). "
                    + "RESENDs and retransmissions mean lost datagrams (loopback socket buffers overflowing) "
                    + "recovered after the resend interval.\n\n");
            List<String> keys = List.of("rpcs_completed", "sent_data", "received_data", "sent_grant", "received_grant",
                    "resends_sent", "received_resend", "retransmitted_data_packets", "timeouts", "received_busy",
                    "dropped_datagrams", "received_rpc_unknown");
            List<String> counterHeader = new ArrayList<>(List.of("scenario", "system"));
            counterHeader.addAll(keys);
            List<List<String>> counterRows = new ArrayList<>();
            for (ScenarioResult r : counted) {
                Map<?, ?> counters = (Map<?, ?>) r.metrics().get("client_counters");
                List<String> row = new ArrayList<>(List.of(r.scenario().toUpperCase(Locale.ROOT), r.system()));
                for (String key : keys) {
                    Object value = counters.get(key);
                    row.add(value == null ? "0" : num(value));
                }
                counterRows.add(row);
            }
            table(md, counterHeader, counterRows);
        }

        if (!report.charts().isEmpty()) {
            md.append("## Charts\n\n");
            for (String chart : report.charts()) {
                md.append("![").append(chart).append("](").append(chart).append(")\n\n");
            }
        }
        List<ScenarioResult> notes = report.results().stream().filter(r -> !r.note().isEmpty()).toList();
        if (!notes.isEmpty()) {
            md.append("## Notes\n\n");
            for (ScenarioResult r : notes) {
                md.append("- ").append(r.scenario().toUpperCase(Locale.ROOT)).append(' ').append(r.system())
                        .append(" (").append(r.status()).append("): ").append(r.note()).append('\n');
            }
            md.append('\n');
        }
        return md.toString();
    }

    /** The CPU table, with how it was measured and the idle baseline, when any figure has CPU. */
    static void markdownCpu(BenchReport report, StringBuilder md) {
        if (report.cpu() == null || report.cpu().isEmpty()) {
            return;
        }
        md.append("## CPU per call\n\n");
        md.append("CPU time (user + system, every thread: handlers, event loops, GC, JIT compiler) of the client process "
                + "and of the system's server process, from /proc at the start and the end of each measured window only "
                + "(not warm-ups, not S5's maximum-rate search, not S11's capacity search), in µs per call completed in "
                + "the windows (S2: the short and the 1 MiB calls; S5: calls recorded; S11: calls answered within the "
                + "window), per MiB of payload carried one way for S4 (its responses) and S10's 64 KiB streams, per item "
                + "for S10's 100 B server stream, per exchange for its ping-pong. Server: the system's own server "
                + "process; S6 adds the shared servers it fans out to. Client: the load generator's process, which "
                + "holds every system's client (the others idle meanwhile; see the idle baseline). Ratios: the system's "
                + "figure / RSocket's, below 1 is less CPU than RSocket.\n\n");
        List<List<String>> rows = new ArrayList<>();
        for (CpuTable.Row row : report.cpu()) {
            rows.add(List.of(row.scenario().toUpperCase(Locale.ROOT), row.figure(), row.per(), row.system(),
                    num(row.clientUs()), num(row.serverUs()), num(row.totalUs()), ratio(row.clientVsPeer()),
                    ratio(row.serverVsPeer()), ratio(row.totalVsPeer())));
        }
        table(md, List.of("scenario", "figure", "per", "system", "client µs", "server µs", "total µs", "client / rsocket",
                "server / rsocket", "total / rsocket"), rows);
        if (report.header().get("idle_cpu") instanceof Map<?, ?> idle) {
            md.append("Idle baseline (after the last scenario, every client connected, no call running, ")
                    .append(num(idle.get("window_s"))).append(" s): client process ")
                    .append(idle.get("client_cpu_fraction") instanceof Number f ? percentOfCore(f) : "–");
            if (idle.get("server_cpu_fraction") instanceof Map<?, ?> servers) {
                List<String> parts = new ArrayList<>();
                servers.forEach((name, f) -> parts.add("server-" + name + " "
                        + (f instanceof Number n ? percentOfCore(n) : String.valueOf(f))));
                md.append("; ").append(String.join(", ", parts));
            }
            md.append(" (of one core; /proc counts in clock ticks, 10 ms).\n\n");
        }
        if (report.header().get("s5_load_generator_cpu") instanceof Map<?, ?> own && !own.isEmpty()) {
            List<String> parts = new ArrayList<>();
            own.forEach((workload, figures) -> {
                if (figures instanceof Map<?, ?> f) {
                    parts.add(workload.toString().toUpperCase(Locale.ROOT) + " " + num(f.get("cpu_us_per_call_client"))
                            + " µs at " + num(f.get("rate_per_s")) + "/s");
                }
            });
            md.append("S5's load generator alone (the same Poisson loop to a client that answers every call at once: "
                    + "arrivals, request bytes, timeouts, recording), per call: ").append(String.join(", ", parts))
                    .append(". Every system's S5 client figure holds this much.\n\n");
        }
        boolean withPerf = report.results().stream().anyMatch(r -> Boolean.TRUE.equals(r.metrics().get("cpu_with_perf")));
        if (withPerf) {
            md.append("S4 in one slice (quick mode): its CPU was sampled while perf counted the system calls, which "
                    + "costs the watched processes time on each system call and context switch.\n\n");
        }
    }

    /** A fraction of one core as a percentage to 0.1%. */
    static String percentOfCore(Number fraction) {
        return String.format(Locale.ROOT, "%.1f%%", fraction.doubleValue() * 100);
    }

    private static void markdownS5(BenchReport report, StringBuilder md) {
        List<ScenarioResult> s5 = of(report, "s5");
        if (s5.isEmpty()) {
            return;
        }
        md.append("## S5 workloads at a fixed fraction of each system's measured maximum\n\n");
        md.append("Slowdown = round trip / the best unloaded round trip of any RPC system for that length "
                + "(measured at 8 B .. 1 MB, interpolated log-log). Deciles split the recorded calls by length, "
                + "shortest first, 10% of the calls each (as the x-axis of the paper's Figure 8). Window: the Poisson "
                + "window's length (with `--s5-min-calls`, long enough for that many calls at the offered rate). CPU "
                + "over the window (from /proc): each core's busy fraction, and each process's CPU time as a "
                + "fraction of one core; CPU-bound: a core busy above "
                + Math.round(CpuSampler.CPU_BOUND_CORE_FRACTION * 100) + "%, where the figures measure the CPU "
                + "more than the systems.\n\n");
        List<String> workloads = s5Workloads(report);
        for (ScenarioResult r : s5) {
            if (!r.status().equals(ScenarioResult.OK)) {
                md.append("- ").append(r.system()).append(": ").append(r.status()).append(' ').append(r.note()).append('\n');
            }
        }
        for (String workload : workloads) {
            md.append("### ").append(workload.toUpperCase(Locale.ROOT)).append("\n\n");
            List<List<String>> rows = new ArrayList<>();
            for (ScenarioResult r : s5) {
                Map<?, ?> w = workload(r, workload);
                if (w == null) {
                    continue;
                }
                List<String> row = new ArrayList<>(List.of(r.system()));
                for (String key : List.of("max_rpcs_per_s", "offered_rpcs_per_s", "achieved_rpcs_per_s", "p50_us",
                        "p99_us", "p50_slowdown", "p99_slowdown", "failures", "skipped_arrivals", "calls")) {
                    row.add(num(w.get(key)));
                }
                row.add(w.get("measure_ms") instanceof Number ms ? num(ms.doubleValue() / 1000) : "–");
                rows.add(row);
            }
            table(md, List.of("system", "max RPCs/s", "offered/s", "achieved/s", "p50 µs", "p99 µs", "p50 slowdown",
                    "p99 slowdown", "failures", "skipped arrivals", "calls", "window s"), rows);
            boolean cpuListed = false;
            for (ScenarioResult r : s5) {
                Map<?, ?> w = workload(r, workload);
                if (w != null && w.get("cpu") instanceof Map<?, ?> cpu) {
                    md.append("- ").append(r.system()).append(": CPU over the window: ").append(cpuLine(cpu)).append('\n');
                    cpuListed = true;
                }
            }
            if (cpuListed) {
                md.append('\n');
            }
            for (ScenarioResult r : s5) {
                Map<?, ?> w = workload(r, workload);
                if (w != null && w.get("timetrace") instanceof Map<?, ?> trace && !TimetraceReport.markdown(trace).isEmpty()) {
                    md.append("Where the time goes, ").append(r.system()).append(", shortest decile (up to ")
                            .append(num(trace.get("max_bytes"))).append(" B), from the timetraces of client and server"
                                    + " (segments of the RPCs around each percentile, averaged):\n\n")
                            .append(TimetraceReport.markdown(trace)).append('\n');
                }
            }
            List<String> header = new ArrayList<>(List.of("decile", "lengths (B)"));
            List<List<Map<?, ?>>> perSystem = new ArrayList<>();
            for (ScenarioResult r : s5) {
                List<Map<?, ?>> deciles = Charts.deciles(r, workload);
                if (!deciles.isEmpty()) {
                    header.add(r.system() + " p50 / p99 slowdown");
                    perSystem.add(deciles);
                }
            }
            if (perSystem.isEmpty()) {
                continue;
            }
            List<List<String>> decileRows = new ArrayList<>();
            for (int d = 0; d < perSystem.get(0).size(); d++) {
                Map<?, ?> first = perSystem.get(0).get(d);
                List<String> row = new ArrayList<>(List.of(String.valueOf(first.get("decile")),
                        num(first.get("min_bytes")) + " – " + num(first.get("max_bytes"))));
                for (List<Map<?, ?>> deciles : perSystem) {
                    Map<?, ?> decile = d < deciles.size() ? deciles.get(d) : null;
                    row.add(decile == null ? "–" : num(decile.get("p50_slowdown")) + " / " + num(decile.get("p99_slowdown")));
                }
                decileRows.add(row);
            }
            table(md, header, decileRows);
        }
    }

    /**
     * One line of a {@link CpuSampler.Usage#toMetrics() cpu} object: "core 0 93%, core 1 41%
     * (CPU-bound: a core above 80%); processes: client 62%, server 35%, agents 12%/11%", each
     * process's share of one core, grouped by role.
     */
    static String cpuLine(Map<?, ?> cpu) {
        StringBuilder line = new StringBuilder(coresLine(cpu));
        line.append(Boolean.TRUE.equals(cpu.get("cpu_bound"))
                ? " (CPU-bound: a core above " + Math.round(CpuSampler.CPU_BOUND_CORE_FRACTION * 100) + "%)"
                : " (no core above " + Math.round(CpuSampler.CPU_BOUND_CORE_FRACTION * 100) + "%)");
        Map<String, List<String>> byRole = new LinkedHashMap<>();
        if (cpu.get("processes") instanceof List<?> processes) {
            for (Object entry : processes) {
                if (entry instanceof Map<?, ?> process) {
                    byRole.computeIfAbsent(String.valueOf(process.get("role")), role -> new ArrayList<>())
                            .add(process.get("cpu_fraction") instanceof Number f ? percent(f) : "exited");
                }
            }
        }
        if (!byRole.isEmpty()) {
            List<String> parts = new ArrayList<>();
            byRole.forEach((role, shares) -> parts.add(role + (shares.size() > 1 ? "s " : " ") + String.join("/", shares)));
            line.append("; processes: ").append(String.join(", ", parts));
        }
        return line.toString();
    }

    /** "core 0 93%, core 1 41%" from a {@code cpu} object; "no cores read" when it has none. */
    static String coresLine(Map<?, ?> cpu) {
        List<String> cores = new ArrayList<>();
        if (cpu.get("cores") instanceof List<?> fractions) {
            for (int i = 0; i < fractions.size(); i++) {
                cores.add("core " + i + " " + (fractions.get(i) instanceof Number f ? percent(f) : "–"));
            }
        }
        return cores.isEmpty() ? "no cores read" : String.join(", ", cores);
    }

    static String percent(Number fraction) {
        return Math.round(fraction.doubleValue() * 100) + "%";
    }

    static Map<?, ?> workload(ScenarioResult r, String workload) {
        if (r.status().equals(ScenarioResult.OK) && r.metrics().get("workloads") instanceof Map<?, ?> map
                && map.get(workload) instanceof Map<?, ?> w) {
            return w;
        }
        return null;
    }

    private static void markdownS6(BenchReport report, StringBuilder md) {
        List<ScenarioResult> s6 = of(report, "s6");
        if (s6.isEmpty()) {
            return;
        }
        md.append("## S6 incast: N concurrent RPCs, 100 B requests, 10 KB responses, fanned out over the server processes\n\n");
        md.append("Median completion time of a burst in ms (all N answered or failed), failed calls in brackets.\n\n");
        List<Integer> fanouts = new ArrayList<>();
        List<String> header = new ArrayList<>(List.of("N"));
        for (ScenarioResult r : s6) {
            header.add(r.system());
            if (r.metrics().get("fanouts") instanceof List<?> rows) {
                for (Object row : rows) {
                    if (row instanceof Map<?, ?> map && map.get("n") instanceof Number n && !fanouts.contains(n.intValue())) {
                        fanouts.add(n.intValue());
                    }
                }
            }
        }
        List<List<String>> rows = new ArrayList<>();
        for (int n : fanouts) {
            List<String> row = new ArrayList<>(List.of(Integer.toString(n)));
            for (ScenarioResult r : s6) {
                String cell = r.status().equals(ScenarioResult.OK) ? "–" : r.status();
                if (r.metrics().get("fanouts") instanceof List<?> list) {
                    for (Object entry : list) {
                        if (entry instanceof Map<?, ?> map && map.get("n") instanceof Number v && v.intValue() == n) {
                            cell = num(map.get("completion_median_ms")) + " (" + num(map.get("failures")) + ")";
                        }
                    }
                }
                row.add(cell);
            }
            rows.add(row);
        }
        table(md, header, rows);
        Object servers = s6.stream().map(r -> r.metrics().get("servers")).filter(Objects::nonNull).findFirst().orElse("?");
        md.append("Server processes: ").append(servers).append(".\n\n");
    }

    /** The S5 workloads of the run's results, first seen first. */
    private static List<String> s5Workloads(BenchReport report) {
        List<String> workloads = new ArrayList<>();
        for (ScenarioResult r : of(report, "s5")) {
            if (r.metrics().get("workloads") instanceof Map<?, ?> map) {
                map.keySet().forEach(k -> {
                    if (!workloads.contains(k.toString())) {
                        workloads.add(k.toString());
                    }
                });
            }
        }
        return workloads;
    }

    /** gRPC over Homa beside the same gRPC code on grpc-netty and beside Homa's RPC layer, when the run has it. */
    private static void markdownGrpcOverHoma(BenchReport report, StringBuilder md) {
        List<Ratios.GrpcOverHoma> rows = Ratios.grpcOverHoma(report.results(), s5Workloads(report));
        if (rows.isEmpty()) {
            return;
        }
        md.append("## gRPC over Homa (same run)\n\n");
        md.append("`grpc-homa` runs `grpc`'s service, method descriptors and client code over Homa (`homa-grpc`): "
                + "against `grpc` the transport is all that differs; against `homa-rpc` (the same transport settings) "
                + "the gRPC layer is. Below 1 is better for `grpc-homa` where lower is better, above 1 where higher "
                + "is better.\n\n");
        List<List<String>> cells = new ArrayList<>();
        for (Ratios.GrpcOverHoma row : rows) {
            cells.add(List.of(row.scenario().toUpperCase(Locale.ROOT),
                    row.metric() + (row.lowerIsBetter() ? " (lower better)" : " (higher better)"), num(row.grpcHoma()),
                    num(row.grpc()), num(row.homaRpc()), ratio(row.vsGrpc()), ratio(row.vsHomaRpc())));
        }
        table(md, List.of("scenario", "metric", "grpc-homa", "grpc", "homa-rpc", "grpc-homa/grpc", "grpc-homa/homa-rpc"),
                cells);
    }

    private static String percent(Object value) {
        return value instanceof Number n ? String.format(Locale.ROOT, "%.1f%%", n.doubleValue() * 100) : "–";
    }

    /** The S10 peers of Homa's RPC layer, in the order of its ratio table's columns. */
    static final List<String> S10_PEERS = List.of("grpc", "rsocket");

    private static void markdownS10(BenchReport report, StringBuilder md) {
        List<ScenarioResult> s10 = of(report, "s10");
        if (s10.isEmpty()) {
            return;
        }
        md.append("## S10 streaming: each system's own streams, one stream at a time to one server\n\n");
        md.append("Server stream of 100 B items: items received per second; server stream of 64 KiB items and client "
                + "stream of 64 KiB chunks: Gbit/s of payload (a client stream counts the chunks the system took from "
                + "its source, each system's flow control keeping it at most about 1 MiB ahead of the server, Homa's RPC layer 2 MiB); "
                + "ping-pong over one open bidirectional stream: send 100 B, wait for the server's echo of it, send the "
                + "next: p50 / p99 per exchange. A stream's consumer asks for items with Reactor's limitRate: ")
                .append(num(first(s10, "prefetch_100b"))).append(" items of 100 B, ").append(num(first(s10, "prefetch_64kb")))
                .append(" of 64 KiB; a server's upload consumer ").append(num(first(s10, "upload_prefetch_64kb")))
                .append(" chunks (gRPC: its stub's flow control). Window per figure: ").append(num(first(s10, "window_s")))
                .append(" s per system, in slices with the systems taking turns. How each system streams:\n\n");
        for (ScenarioResult r : s10) {
            if (r.metrics().get("api") instanceof String api) {
                md.append("- `").append(r.system()).append("`: ").append(api).append('\n');
            }
        }
        md.append('\n');
        List<String> keys = List.of("items_per_s_100b", "gbit_per_s_64kb_server", "gbit_per_s_64kb_client", "bidi_p50_us",
                "bidi_p99_us", "bidi_p99.9_us", "bidi_exchanges_per_s", "failed_streams");
        List<List<String>> rows = new ArrayList<>();
        for (ScenarioResult r : s10) {
            if (r.status().equals(ScenarioResult.OK) || !r.metrics().isEmpty()) {
                List<String> row = new ArrayList<>(List.of(r.status().equals(ScenarioResult.OK) ? r.system()
                        : r.system() + " (**" + r.status() + "**)"));
                keys.forEach(key -> row.add(num(r.metrics().get(key))));
                rows.add(row);
            } else {
                rows.add(metricRow(r, keys));
            }
        }
        table(md, List.of("system", "server stream 100 B items/s", "server stream 64 KiB Gbit/s",
                "client stream 64 KiB Gbit/s", "bidi p50 µs", "bidi p99 µs", "bidi p99.9 µs", "bidi exchanges/s",
                "failed streams"), rows);

        List<Ratios.Row> ratios = Ratios.compute(s10, List.of()).stream().filter(row -> row.scenario().equals("s10")).toList();
        if (ratios.isEmpty()) {
            return;
        }
        md.append("Homa's RPC layer against each peer: Homa / peer, above 1 better for Homa where higher is better "
                + "(throughput), below 1 where lower is better (latency).\n\n");
        List<List<String>> ratioRows = new ArrayList<>();
        for (Ratios.Row row : ratios) {
            List<String> cells = new ArrayList<>(List.of(row.metric() + (row.lowerIsBetter() ? " (lower better)"
                    : " (higher better)"), row.homaSystem(), num(row.homa())));
            S10_PEERS.forEach(peer -> cells.add(num(row.peers().get(peer))));
            S10_PEERS.forEach(peer -> cells.add(ratio(row.ratios().get(peer))));
            ratioRows.add(cells);
        }
        List<String> header = new ArrayList<>(List.of("metric", "Homa system", "Homa"));
        header.addAll(S10_PEERS);
        S10_PEERS.forEach(peer -> header.add("Homa/" + peer));
        table(md, header, ratioRows);
    }

    private static @org.jspecify.annotations.Nullable Object first(List<ScenarioResult> results, String key) {
        return results.stream().map(r -> r.metrics().get(key)).filter(Objects::nonNull).findFirst().orElse(null);
    }

    private static void markdownS9(BenchReport report, StringBuilder md) {
        List<ScenarioResult> s9 = of(report, "s9").stream().filter(r -> r.system().equals("homa")).toList();
        if (s9.isEmpty()) {
            return;
        }
        ScenarioResult r = s9.get(0);
        Map<String, Object> m = r.metrics();
        md.append("## S9 congestion control and TCP coexistence on the rack (issue 36)\n\n");
        md.append("One FIFO class for every packet (Homa's priorities off, TCP in the same class), the server host's downlink")
                .append(" the bottleneck. Bandwidth split: ").append(m.get("tcp_system")).append("'s W5 at 50% of the link from ")
                .append(m.get("tcp_hosts")).append(", Homa's W5 at 40% from ").append(m.get("homa_hosts"))
                .append(" (`cc_on_alone`: the same Homa load without TCP). Incast: Homa's W5 from ").append(m.get("incast_hosts"))
                .append(", offered at twice the link, ").append(m.get("incast_outstanding_per_host"))
                .append(" calls in flight per host. Window ").append(m.get("measure_ms")).append(" ms per run. Achieved: response bytes ")
                .append("answered within the window over request bytes offered in it. Homa switch drops: UDP datagrams sent and ")
                .append("never received, over those sent (").append(m.get("drop_counting")).append("). Short p99: Homa's ")
                .append("shortest decile. The congestion control column is what each run asked every Homa process for; an engine ")
                .append("without congestion control runs every run without it.\n\n");
        if (!r.status().equals(ScenarioResult.OK)) {
            md.append("**").append(r.status()).append("**: ").append(r.note()).append("\n\n");
        }
        List<Map<String, Object>> runs = new ArrayList<>();
        if (m.get("runs") instanceof List<?> list) {
            for (Object run : list) {
                if (run instanceof Map<?, ?> map) {
                    Map<String, Object> copy = new LinkedHashMap<>();
                    map.forEach((k, v) -> copy.put(String.valueOf(k), v));
                    runs.add(copy);
                }
            }
        }
        table(md, io.homa.bench.scenario.S9Metrics.TABLE_HEADER, io.homa.bench.scenario.S9Metrics.tableRows(runs));
    }

    private static void markdownS11(BenchReport report, StringBuilder md) {
        List<ScenarioResult> s11 = of(report, "s11");
        if (s11.isEmpty()) {
            return;
        }
        Object spin = s11.stream().map(r -> r.metrics().get("spin_us")).filter(Objects::nonNull).findFirst().orElse("?");
        Object deadline = s11.stream().map(r -> r.metrics().get("deadline_ms")).filter(Objects::nonNull).findFirst().orElse("?");
        md.append("## S11 overload: ").append(spin).append(" µs of CPU per call on a server pinned to one core\n\n");
        md.append("Capacity: closed loop, enough calls outstanding to keep every handler thread busy. Then Poisson arrivals "
                + "at each multiple of that capacity, every call with a deadline of ").append(deadline)
                .append(" ms given the system's way. Offered: calls issued per second of the window; goodput: those answered "
                        + "per second; p50/p99 of the answered calls; refused (the server said no: RESOURCE_EXHAUSTED, "
                        + "UNAVAILABLE, RSocket REJECTED), timed out (deadline passed, at the caller or the server) and "
                        + "other failures as fractions of the calls issued. The CPU pool: one thread per core of the "
                        + "server (one here), as CPU-bound work is run. Where each system runs the handler:\n\n");
        for (ScenarioResult r : s11) {
            if (r.metrics().get("handler") instanceof String handler) {
                md.append("- `").append(r.system()).append("`: ").append(handler).append('\n');
            }
        }
        md.append('\n');
        List<List<String>> rows = new ArrayList<>();
        for (ScenarioResult r : s11) {
            if (!r.status().equals(ScenarioResult.OK)) {
                List<String> row = new ArrayList<>(List.of(r.system(), r.status() + (r.note().isEmpty() ? "" : ": " + r.note())));
                while (row.size() < 14) {
                    row.add("");
                }
                rows.add(row);
                continue;
            }
            double unloaded = r.number("unloaded_p50_us");
            boolean first = true;
            if (r.metrics().get("rates") instanceof Map<?, ?> rates) {
                for (Map.Entry<?, ?> entry : rates.entrySet()) {
                    if (!(entry.getValue() instanceof Map<?, ?> m)) {
                        continue;
                    }
                    double p99 = m.get("p99_us") instanceof Number n ? n.doubleValue() : Double.NaN;
                    rows.add(List.of(r.system(), first ? num(r.metrics().get("capacity_per_s")) : "",
                            first ? num(unloaded) : "", String.valueOf(entry.getKey()), num(m.get("target_per_s")),
                            num(m.get("offered_per_s")), num(m.get("goodput_per_s")), percent(m.get("goodput_of_capacity")),
                            num(m.get("p50_us")), num(m.get("p99_us")),
                            Double.isNaN(p99) || !(unloaded > 0) ? "–" : String.format(Locale.ROOT, "%.1fx", p99 / unloaded),
                            percent(m.get("refused_fraction")), percent(m.get("timeout_fraction")),
                            percent(m.get("other_failure_fraction"))));
                    first = false;
                }
            }
        }
        table(md, List.of("system", "capacity/s", "unloaded p50 µs", "rate", "target/s", "offered/s", "goodput/s",
                "goodput / capacity", "p50 µs", "p99 µs", "p99 / unloaded p50", "refused", "timed out", "other failures"),
                rows);
    }

    private static void markdownS11Scaling(BenchReport report, StringBuilder md) {
        List<ScenarioResult> scaling = of(report, "s11-scaling");
        if (scaling.isEmpty()) {
            return;
        }
        md.append("## S11 scaling: the same handler on a server not pinned to a core, closed loop\n\n");
        md.append("The client stays on CPU 0; the server process may use every core. `scheduler`: the handler where S11 "
                + "runs it (blocking work off the event loop); `loop`: on the thread the request arrived on (a reactive "
                + "handler on its event loop, which more Homa loops would spread: `--homa-loops`). CPU: each process's "
                + "CPU time over the window as a fraction of one core, and each core's busy fraction.\n\n");
        List<List<String>> rows = new ArrayList<>();
        for (ScenarioResult r : scaling) {
            for (String placement : List.of("scheduler", "loop")) {
                if (!r.status().equals(ScenarioResult.OK)) {
                    rows.add(List.of(r.system(), placement, r.status() + (r.note().isEmpty() ? "" : ": " + r.note()),
                            "", "", "", "", "", ""));
                    break;
                }
                if (!(r.metrics().get(placement) instanceof Map<?, ?> m)) {
                    continue;
                }
                String client = "–";
                String server = "–";
                String cores = "–";
                if (m.get("cpu") instanceof Map<?, ?> cpu) {
                    if (cpu.get("processes") instanceof List<?> processes) {
                        for (Object p : processes) {
                            if (p instanceof Map<?, ?> process) {
                                String value = process.get("missing") != null ? "missing" : percent(process.get("cpu_fraction"));
                                if ("client".equals(process.get("role"))) {
                                    client = value;
                                } else {
                                    server = value;
                                }
                            }
                        }
                    }
                    if (cpu.get("cores") instanceof List<?> list) {
                        cores = String.join(", ", list.stream().map(ReportWriter::percent).toList());
                    }
                }
                Object loops = r.metrics().get("homa_loops");
                rows.add(List.of(r.system(), placement, loops == null ? "–" : String.valueOf(loops), num(m.get("rpcs_per_s")),
                        num(m.get("p50_us")), num(m.get("p99_us")), client, server, cores));
            }
        }
        table(md, List.of("system", "handler on", "Homa loops", "RPCs/s", "p50 µs", "p99 µs", "client CPU", "server CPU",
                "cores busy"), rows);
    }
}
