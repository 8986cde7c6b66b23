package io.homa.bench.trace;

import io.homa.bench.report.ScenarioResult;
import io.homa.engine.trace.TraceRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The "where the time goes" figures of an S5 run with {@code --homa-timetrace}: for each Homa
 * system and workload whose load came from agent processes, the timetraces of those agents
 * ({@code <dir>/<system>-<workload>/}) and of the servers ({@code <dir>/servers/}) merged by
 * {@link TimetraceBreakdown}, for the calls of the workload's shortest decile at p50 and p99,
 * beside the latency the load generator measured for that decile.
 */
public final class TimetraceReport {
    /** The directory of the server processes' traces, under the run's trace directory. */
    public static final String SERVERS = "servers";

    private TimetraceReport() {}

    /** Removes the traces of an earlier run in {@code traceDir}, which would otherwise be merged with the next one's. */
    public static void clear(Path traceDir) throws IOException {
        if (!Files.isDirectory(traceDir)) {
            return;
        }
        try (java.util.stream.Stream<Path> files = Files.walk(traceDir)) {
            for (Path file : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(file);
            }
        }
    }

    /** The directory of the traces of one system's agents on one workload. */
    public static Path agentsDir(Path traceDir, String system, String workload) {
        return traceDir.resolve(system + "-" + workload);
    }

    /**
     * Adds a {@code timetrace} object to each S5 workload's metrics that has traces: {@code rpcs}
     * (RPCs of the decile found whole in the traces, started in the last {@code measure_ms} of
     * the calls traced: the measured window), {@code max_bytes} (the decile's payload) and
     * {@code max_message_bytes} (its requests as the transport carried them), {@code measured_p50_us}
     * and {@code measured_p99_us} (the decile's, as measured by the load processes) and
     * {@code rows} ({@link TimetraceBreakdown#json}).
     *
     * @return notes on what could not be read
     */
    public static List<String> attach(List<ScenarioResult> results, Path traceDir) {
        List<String> notes = new ArrayList<>();
        List<TraceRecord.Dump> servers;
        try {
            servers = TimetraceBreakdown.readDumps(traceDir.resolve(SERVERS));
        } catch (IOException e) {
            notes.add("timetrace: the servers' traces could not be read: " + e);
            return notes;
        }
        for (ScenarioResult result : results) {
            if (!result.scenario().equals("s5") || !(result.metrics().get("workloads") instanceof Map<?, ?> workloads)) {
                continue;
            }
            for (Map.Entry<?, ?> entry : workloads.entrySet()) {
                Path dir = agentsDir(traceDir, result.system(), String.valueOf(entry.getKey()));
                if (!Files.isDirectory(dir) || !(entry.getValue() instanceof Map<?, ?> raw)) {
                    continue;
                }
                @SuppressWarnings("unchecked")
                Map<String, Object> workload = (Map<String, Object>) raw;
                try {
                    List<TraceRecord.Dump> dumps = new ArrayList<>(TimetraceBreakdown.readDumps(dir));
                    dumps.addAll(servers);
                    workload.put("timetrace", breakdown(TimetraceBreakdown.rpcs(dumps), workload));
                } catch (IOException | RuntimeException e) {
                    notes.add("timetrace of " + result.system() + " " + entry.getKey() + ": " + e);
                }
            }
        }
        return notes;
    }

    private static Map<String, Object> breakdown(List<TimetraceBreakdown.Rpc> all, Map<String, Object> workload) {
        // The agents trace their closed-loop warm-up too: keep the calls of the measured window,
        // the last measure_ms of calls started.
        long lastStartNs = all.stream().mapToLong(TimetraceBreakdown.Rpc::startNs).max().orElse(0);
        long windowNs = workload.get("measure_ms") instanceof Number ms ? ms.longValue() * 1_000_000 : Long.MAX_VALUE / 2;
        List<TimetraceBreakdown.Rpc> rpcs = all.stream().filter(r -> lastStartNs - r.startNs() <= windowNs).toList();
        Map<?, ?> shortest = workload.get("deciles") instanceof List<?> deciles && !deciles.isEmpty()
                && deciles.get(0) instanceof Map<?, ?> first ? first : Map.of();
        long payloadMaxBytes = shortest.get("max_bytes") instanceof Number n ? n.longValue() : Long.MAX_VALUE;
        long maxBytes = messageMaxBytes(rpcs, payloadMaxBytes, shortest.get("calls"));
        List<TimetraceBreakdown.Row> rows = TimetraceBreakdown.rows(rpcs, length -> length <= maxBytes, 50, 99);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("decile", 1);
        out.put("max_bytes", payloadMaxBytes);
        out.put("max_message_bytes", maxBytes);
        out.put("rpcs", rpcs.stream().filter(r -> r.requestBytes() <= maxBytes).count());
        out.put("measured_p50_us", shortest.get("p50_us"));
        out.put("measured_p99_us", shortest.get("p99_us"));
        out.put("rows", TimetraceBreakdown.json(rows));
        return out;
    }

    /**
     * The longest request message of the shortest decile as the transport carried it. The decile is
     * cut by payload length, and the RPC layer's requests carry an envelope (service, method,
     * encoding) besides the payload: so the decile's {@code calls} shortest traced requests, or
     * {@code payloadMaxBytes} if that is longer or the decile's size is unknown.
     */
    static long messageMaxBytes(List<TimetraceBreakdown.Rpc> rpcs, long payloadMaxBytes, Object decileCalls) {
        if (!(decileCalls instanceof Number calls) || calls.intValue() < 1 || rpcs.size() < calls.intValue()) {
            return payloadMaxBytes;
        }
        long[] lengths = rpcs.stream().mapToLong(TimetraceBreakdown.Rpc::requestBytes).sorted().toArray();
        return Math.max(payloadMaxBytes, lengths[calls.intValue() - 1]);
    }

    /**
     * The Markdown table of a workload's {@code timetrace} object: a line per segment, a column for
     * p50 and one for p99, then the traced call time beside the measured one.
     */
    public static String markdown(Map<?, ?> timetrace) {
        if (!(timetrace.get("rows") instanceof List<?> rows) || rows.isEmpty()) {
            return "";
        }
        StringBuilder md = new StringBuilder("| segment |");
        List<Map<?, ?>> columns = new ArrayList<>();
        for (Object row : rows) {
            if (row instanceof Map<?, ?> map) {
                columns.add(map);
                md.append(" p").append(fmt(map.get("percentile"))).append(" µs |");
            }
        }
        md.append("\n| --- |").append(" --- |".repeat(columns.size())).append('\n');
        for (String segment : TimetraceBreakdown.SEGMENTS) {
            md.append("| ").append(segment).append(" |");
            for (Map<?, ?> column : columns) {
                Object value = column.get("segments_us") instanceof Map<?, ?> s ? s.get(segment) : null;
                md.append(' ').append(fmt(value)).append(" |");
            }
            md.append('\n');
        }
        md.append("| **traced call (sum)** |");
        columns.forEach(c -> md.append(" **").append(fmt(c.get("total_us"))).append("** |"));
        md.append("\n| measured by the load process |");
        md.append(' ').append(fmt(timetrace.get("measured_p50_us"))).append(" |");
        if (columns.size() > 1) {
            md.append(' ').append(fmt(timetrace.get("measured_p99_us"))).append(" |");
        }
        md.append("\n| RPCs averaged (of ").append(fmt(timetrace.get("rpcs"))).append(" traced) |");
        columns.forEach(c -> md.append(' ').append(fmt(c.get("rpcs"))).append(" |"));
        return md.append('\n').toString();
    }

    private static String fmt(Object value) {
        if (!(value instanceof Number n)) {
            return "–";
        }
        double d = n.doubleValue();
        return d == Math.rint(d) ? String.format(Locale.ROOT, "%,d", (long) d) : String.format(Locale.ROOT, "%,.1f", d);
    }
}
