package io.homa.bench.report;

import io.homa.bench.cpu.CpuSampler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The testbed report ({@code benchmarks/testbed-report.sh}): one {@code README.md} over
 * the runs it made in one directory, each a load generator report in a subdirectory:
 * {@code full} (S1-S6, Homa with priorities and incast marking), {@code s7-50} and {@code s7-80}
 * (W3-W5 at 50% and 80% of the link), {@code s7-80-no-priorities} (Homa with priorities off) and
 * {@code s8-no-incast-marking} (S6 for Homa with incast marking off). A missing run is reported
 * as missing, never invented.
 */
public final class TestbedSummary {
    /** The paper's Figure 8 figure for Homa at 80% load on W4: p99 slowdown of the shortest half. */
    static final double PAPER_W4_80_SHORT_HALF_P99 = 3.5;

    private TestbedSummary() {}

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: TestbedSummary DIR");
            System.exit(2);
        }
        Path dir = Path.of(args[0]);
        String markdown = write(dir);
        Files.writeString(dir.resolve("README.md"), markdown);
        System.out.println("testbed report: " + dir.resolve("README.md").toAbsolutePath());
    }

    /** The report's markdown for the runs under {@code dir}. */
    public static String write(Path dir) throws IOException {
        Map<String, Map<String, Object>> runs = new LinkedHashMap<>();
        for (String name : List.of("full", "s7-50", "s7-80", "s7-80-no-priorities", "s7-80-clients",
                "s7-80-clients-no-priorities", "s7-80-all-to-all", "s8-no-incast-marking")) {
            Path json = dir.resolve(name).resolve(ReportWriter.JSON_FILE);
            if (Files.isRegularFile(json)) {
                runs.put(name, ReportWriter.readJson(json));
            }
        }
        StringBuilder md = new StringBuilder("# Homa, gRPC and RSocket across the emulated rack\n\n");
        Map<String, Object> full = runs.get("full");
        if (full != null) {
            Map<?, ?> header = map(full.get("header"));
            Map<?, ?> settings = map(header.get("settings"));
            md.append("Made by `benchmarks/testbed-report.sh` on ").append(header.get("date")).append(". Network: ")
                    .append(settings.get("network")).append(".\n\n")
                    .append("Machine: ").append(map(header.get("machine")).get("cpu_model")).append(", ")
                    .append(map(header.get("machine")).get("cores")).append(" cores shared by every host, ")
                    .append(header.get("placement")).append(". Each run's own report (with every figure, its command ")
                    .append("and charts) is in its directory.\n\n");
        }
        md.append("| run | what it measures | present |\n| --- | --- | --- |\n");
        describe(md, runs, "full", "S1-S6, every system; Homa with priorities (IP TOS) and incast marking on");
        describe(md, runs, "s7-50", "S7 (Figure 8): W3-W5 Poisson at 50% of the link, every RPC system");
        describe(md, runs, "s7-80", "S7 (Figure 8): W3-W5 Poisson at 80% of the link, every RPC system");
        describe(md, runs, "s7-80-no-priorities", "S7 at 80% with Homa's priorities off (one FIFO class)");
        describe(md, runs, "s7-80-clients", "S7 at 80% from every host but the server's at once (several senders"
                + " share the server's switch port)");
        describe(md, runs, "s7-80-clients-no-priorities", "the same with Homa's priorities off");
        describe(md, runs, "s7-80-all-to-all", "S7 at 80% all-to-all: every host calls the servers of all the"
                + " other hosts at once, each link loaded 80% in both directions");
        describe(md, runs, "s8-no-incast-marking", "S8 (Figure 9): S6 for Homa with incast marking off");
        md.append('\n');

        if (full != null) {
            md.append("## S1-S4 on the rack\n\n| system | S1 p50 µs | S1 p99 µs | S2 short p99 µs | S3 RPCs/s | S4 Gbit/s |\n")
                    .append("| --- | --- | --- | --- | --- | --- |\n");
            for (String system : systems(full)) {
                md.append("| ").append(system)
                        .append(" | ").append(num(metric(full, "s1", system, "p50_us")))
                        .append(" | ").append(num(metric(full, "s1", system, "p99_us")))
                        .append(" | ").append(num(metric(full, "s2", system, "p99_us")))
                        .append(" | ").append(num(metric(full, "s3", system, "rpcs_per_s")))
                        .append(" | ").append(num(metric(full, "s4", system, "goodput_gbps"))).append(" |\n");
            }
            md.append('\n');
        }

        md.append("## S7: the paper's Figure 8 (p99 slowdown, shortest half of the messages)\n\n");
        md.append("The 50% and 80% runs send from one client host to one server host; the \"80%, N client hosts\"")
                .append(" run sends from every other host at once to the same server (the paper: several clients to")
                .append(" one server); the \"all-to-all\" run sends from every host to the servers of all the others (each")
                .append(" call to one, drawn uniformly). Every RPC is an echo, so both directions")
                .append(" of the server's link carry the load. Slowdown: round trip over the best unloaded round trip of")
                .append(" any system for that length, measured from host 1 on the same rack.\n\n");
        md.append("| load | workload | system | p99 slowdown, shortest half | p99 slowdown, all | p50 slowdown | offered / achieved RPCs/s | failed | CPU: cores busy |\n")
                .append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
        List<String> cpuBound = new ArrayList<>();
        int cpuSampled = 0;
        for (String run : List.of("s7-50", "s7-80", "s7-80-no-priorities", "s7-80-clients",
                "s7-80-clients-no-priorities", "s7-80-all-to-all")) {
            Map<String, Object> report = runs.get(run);
            if (report == null) {
                continue;
            }
            String load = run.startsWith("s7-50") ? "50%" : "80%"
                    + (run.contains("clients") ? ", " + clientHosts(report) : "")
                    + (run.contains("all-to-all") ? ", all-to-all" : "")
                    + (run.endsWith("no-priorities") ? ", priorities off" : "");
            for (String workload : List.of("w3", "w4", "w5")) {
                for (String system : systems(report)) {
                    Map<?, ?> w = workload(report, system, workload);
                    if (w == null) {
                        continue;
                    }
                    md.append("| ").append(load).append(" | ").append(workload.toUpperCase(Locale.ROOT)).append(" | ")
                            .append(system).append(" | ").append(num(w.get("p99_slowdown_shortest_half")))
                            .append(" | ").append(num(w.get("p99_slowdown"))).append(" | ").append(num(w.get("p50_slowdown")))
                            .append(" | ").append(num(w.get("offered_rpcs_per_s"))).append(" / ")
                            .append(num(w.get("achieved_rpcs_per_s"))).append(" | ").append(num(w.get("failures")))
                            .append(" | ").append(cpuCell(w)).append(" |\n");
                    if (w.get("cpu") instanceof Map<?, ?> cpu) {
                        cpuSampled++;
                        if (Boolean.TRUE.equals(cpu.get("cpu_bound"))) {
                            cpuBound.add(load + " " + workload.toUpperCase(Locale.ROOT) + " " + system);
                        }
                    }
                }
            }
        }
        md.append('\n').append(cpuCheck(cpuSampled, cpuBound)).append("\n\n");
        md.append(s7Check(runs)).append("\n\n");

        md.append("## S8: the paper's Figure 9 (incast)\n\nOne client fans out N concurrent RPCs (100 B requests, ")
                .append("10 KB responses) over the server hosts; drops are every switch port's and NIC queue's (tc -s).\n\n")
                .append("| system | incast marking | N | completion ms (median) | failed calls | packets dropped |\n")
                .append("| --- | --- | --- | --- | --- | --- |\n");
        for (String run : List.of("full", "s8-no-incast-marking")) {
            Map<String, Object> report = runs.get(run);
            if (report == null) {
                continue;
            }
            for (String system : systems(report)) {
                Map<?, ?> result = result(report, "s6", system);
                if (result == null || !(map(result.get("metrics")).get("fanouts") instanceof List<?> rows)) {
                    continue;
                }
                boolean homa = system.startsWith("homa");
                String marking = !homa ? "–" : run.equals("full") ? "on" : "off";
                for (Object row : rows) {
                    Map<?, ?> r = map(row);
                    md.append("| ").append(system).append(" | ").append(marking).append(" | ").append(num(r.get("n")))
                            .append(" | ").append(num(r.get("completion_median_ms"))).append(" | ")
                            .append(num(r.get("failures"))).append(" | ").append(num(r.get("network_dropped_packets")))
                            .append(" |\n");
                }
            }
        }
        md.append('\n');
        return md.toString();
    }

    /** The S7 done-when check, or why it cannot be made. */
    static String s7Check(Map<String, Map<String, Object>> runs) {
        Map<String, Object> report = runs.get("s7-80");
        if (report == null) {
            return "S7 check: no 80% run.";
        }
        double homa = number(workload(report, "homa", "w4"), "p99_slowdown_shortest_half");
        List<String> parts = new ArrayList<>();
        double worstRatio = Double.POSITIVE_INFINITY;
        for (String peer : List.of("grpc", "rsocket")) {
            double p = number(workload(report, peer, "w4"), "p99_slowdown_shortest_half");
            if (!Double.isNaN(p) && !Double.isNaN(homa) && homa > 0) {
                worstRatio = Math.min(worstRatio, p / homa);
                parts.add(String.format(Locale.ROOT, "%s %.1f (%.1fx Homa's)", peer, p, p / homa));
            }
        }
        String verdict = worstRatio == Double.POSITIVE_INFINITY ? "cannot be checked (a system is missing)"
                : worstRatio >= 5 ? "**met** (at least 5x lower than both)" : "**missed** (needs 5x lower than both)";
        String off = "";
        Map<String, Object> noPriorities = runs.get("s7-80-no-priorities");
        if (noPriorities != null) {
            double homaOff = number(workload(noPriorities, "homa", "w4"), "p99_slowdown_shortest_half");
            off = String.format(Locale.ROOT, " With priorities off Homa's is %.1f (%.2fx the figure with them on).",
                    homaOff, homaOff / homa);
            if (!(homaOff > homa * 1.1)) {
                off += " Priorities off is not worse here because no switch queue forms: one client host sends to"
                                + " one server host, so every link has one sender, and each sender's pacer keeps its own"
                                + " NIC queue within max-nic-queue (50 µs, 2.5 KB at this link rate); what waits, waits in"
                                + " the sender's own SRPT queue and CPU, which the IP TOS does not reach. Priorities act"
                                + " where several senders share a switch port.";
            }
        }
        Map<String, Object> many = runs.get("s7-80-clients");
        if (many != null) {
            double homaMany = number(workload(many, "homa", "w4"), "p99_slowdown_shortest_half");
            off += String.format(Locale.ROOT, " From %s: Homa %.1f, gRPC %.1f, RSocket %.1f.", clientHosts(many), homaMany,
                    number(workload(many, "grpc", "w4"), "p99_slowdown_shortest_half"),
                    number(workload(many, "rsocket", "w4"), "p99_slowdown_shortest_half"));
            Map<String, Object> manyOff = runs.get("s7-80-clients-no-priorities");
            if (manyOff != null) {
                double homaManyOff = number(workload(manyOff, "homa", "w4"), "p99_slowdown_shortest_half");
                off += String.format(Locale.ROOT, " With priorities off from %s Homa's is %.1f (%.2fx).",
                        clientHosts(manyOff), homaManyOff, homaManyOff / homaMany);
            }
        }
        return String.format(Locale.ROOT, "S7 check, W4 at 80%%: Homa's p99 slowdown for the shortest half is %.1f "
                + "(the paper: %.1f); %s: %s.%s", homa, PAPER_W4_80_SHORT_HALF_P99, String.join(", ", parts), verdict, off);
    }

    /** The busy fraction of each core over an S7 window, "93% / 41%", marked when CPU-bound; "–" when not sampled. */
    static String cpuCell(Map<?, ?> workload) {
        if (!(workload.get("cpu") instanceof Map<?, ?> cpu) || !(cpu.get("cores") instanceof List<?> cores)) {
            return "–";
        }
        List<String> busy = new ArrayList<>();
        for (Object core : cores) {
            busy.add(core instanceof Number f ? ReportWriter.percent(f) : "–");
        }
        return String.join(" / ", busy) + (Boolean.TRUE.equals(cpu.get("cpu_bound")) ? " **CPU-bound**" : "");
    }

    /** The line on CPU under the S7 table: which rows were CPU-bound, of how many sampled. */
    static String cpuCheck(int sampled, List<String> cpuBound) {
        String threshold = Math.round(CpuSampler.CPU_BOUND_CORE_FRACTION * 100) + "%";
        if (sampled == 0) {
            return "CPU: these runs' reports carry no CPU figures.";
        }
        if (cpuBound.isEmpty()) {
            return "CPU over each window (/proc): no core above " + threshold + " in any of the " + sampled + " rows sampled.";
        }
        return "CPU over each window (/proc): " + cpuBound.size() + " of " + sampled + " rows sampled were **CPU-bound**"
                + " (a core above " + threshold + "; their figures measure the shared cores more than the network): "
                + String.join(", ", cpuBound) + ".";
    }

    /** "N client hosts" from a run's header, or "several client hosts". */
    private static String clientHosts(Map<String, Object> report) {
        Object clients = map(map(report.get("header")).get("settings")).get("S5 clients");
        String text = clients == null ? "" : clients.toString();
        return text.startsWith("from ") ? text.substring(5, text.indexOf(" at once")) : "several client hosts";
    }

    private static void describe(StringBuilder md, Map<String, Map<String, Object>> runs, String name, String what) {
        md.append("| [`").append(name).append("`](").append(name).append("/report.md) | ").append(what).append(" | ")
                .append(runs.containsKey(name) ? "yes" : "**missing**").append(" |\n");
    }

    private static List<String> systems(Map<String, Object> report) {
        List<String> systems = new ArrayList<>();
        if (report.get("results") instanceof List<?> results) {
            for (Object entry : results) {
                String system = String.valueOf(map(entry).get("system"));
                if (!systems.contains(system)) {
                    systems.add(system);
                }
            }
        }
        return systems;
    }

    /** A report's result of {@code system} in {@code scenario} with status ok, or null. */
    static Map<?, ?> result(Map<String, Object> report, String scenario, String system) {
        if (report.get("results") instanceof List<?> results) {
            for (Object entry : results) {
                Map<?, ?> r = map(entry);
                if (scenario.equals(r.get("scenario")) && system.equals(r.get("system")) && "ok".equals(r.get("status"))) {
                    return r;
                }
            }
        }
        return null;
    }

    private static Object metric(Map<String, Object> report, String scenario, String system, String name) {
        Map<?, ?> r = result(report, scenario, system);
        return r == null ? null : map(r.get("metrics")).get(name);
    }

    private static Map<?, ?> workload(Map<String, Object> report, String system, String workload) {
        Map<?, ?> r = result(report, "s5", system);
        if (r == null) {
            return null;
        }
        Object w = map(map(r.get("metrics")).get("workloads")).get(workload);
        return w instanceof Map<?, ?> m ? m : null;
    }

    private static double number(Map<?, ?> map, String name) {
        return map != null && map.get(name) instanceof Number n ? n.doubleValue() : Double.NaN;
    }

    private static Map<?, ?> map(Object value) {
        return value instanceof Map<?, ?> m ? m : Map.of();
    }

    private static String num(Object value) {
        return ReportWriter.num(value);
    }
}
