package io.homa.bench.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The CPU table: for every scenario figure, each system's CPU time per call (per MiB for S4's and
 * S10's Gbit/s figures, per item or exchange for S10's others) on the client side and the server
 * side over the measured windows, their total, and each as a ratio to RSocket's.
 */
public final class CpuTable {
    /** The peer every system is compared with. */
    public static final String PEER = "rsocket";

    /**
     * One system's CPU for one figure, µs per {@code per}; null where not measured.
     *
     * @param figure what was measured, e.g. {@code 100 B echo} or {@code W3}
     * @param per the unit the CPU is counted per: {@code call}, {@code MiB}, {@code item},
     *     {@code exchange}, {@code answered call}
     * @param clientVsPeer {@code client / PEER's client}, null when either is missing
     */
    public record Row(String scenario, String figure, String per, String system, Double clientUs, Double serverUs,
            Double totalUs, Double clientVsPeer, Double serverVsPeer, Double totalVsPeer) {}

    /** A figure: where its {@code cpu_us_per_...} keys are in a result, and the unit of the key. */
    record Figure(String scenario, String figure, String per, String key, Function<ScenarioResult, Map<?, ?>> where) {}

    private CpuTable() {}

    /** The rows of every figure with a CPU measurement, figures in report order, systems in result order. */
    public static List<Row> rows(List<ScenarioResult> results) {
        List<Row> rows = new ArrayList<>();
        for (Figure figure : figures(results)) {
            Map<String, double[]> bySystem = new LinkedHashMap<>();
            for (ScenarioResult result : results) {
                if (!result.scenario().equals(figure.scenario()) || !result.status().equals(ScenarioResult.OK)) {
                    continue;
                }
                Map<?, ?> metrics = figure.where().apply(result);
                Double client = metrics == null ? null : number(metrics.get("cpu_us_per_" + figure.key() + "_client"));
                Double server = metrics == null ? null : number(metrics.get("cpu_us_per_" + figure.key() + "_server"));
                if (client != null && server != null) {
                    bySystem.put(result.system(), new double[] {client, server});
                }
            }
            double[] peer = bySystem.get(PEER);
            bySystem.forEach((system, cpu) -> {
                double total = cpu[0] + cpu[1];
                rows.add(new Row(figure.scenario(), figure.figure(), figure.per(), system, cpu[0], cpu[1],
                        round2(total), peer == null ? null : Ratios.ratio(cpu[0], peer[0]),
                        peer == null ? null : Ratios.ratio(cpu[1], peer[1]),
                        peer == null ? null : Ratios.ratio(total, peer[0] + peer[1])));
            });
        }
        return rows;
    }

    /** Every figure that can have CPU figures, in the report's order; S5's workloads and S11's rates as the results have them. */
    static List<Figure> figures(List<ScenarioResult> results) {
        List<Figure> figures = new ArrayList<>();
        figures.add(new Figure("s1", "100 B echo, 1 outstanding", "call", "call", ScenarioResult::metrics));
        figures.add(new Figure("s2", "100 B echoes and 1 MiB echoes together", "call", "call", ScenarioResult::metrics));
        figures.add(new Figure("s3", "100 B echo, 32 outstanding", "call", "call", ScenarioResult::metrics));
        figures.add(new Figure("s4", "1 MiB echo, 4 outstanding (MiB of responses)", "MiB", "mib", ScenarioResult::metrics));
        for (String workload : keysOf(results, "s5", "workloads")) {
            figures.add(new Figure("s5", workload.toUpperCase(java.util.Locale.ROOT) + " Poisson", "call", "call",
                    r -> nested(r.metrics(), "workloads", workload)));
        }
        figures.add(new Figure("s6", "incast calls, every N", "call", "call", ScenarioResult::metrics));
        figures.add(new Figure("s10", "server stream, 100 B items", "item", "call",
                r -> nested(r.metrics(), "cpu_by_part", "server_stream_100b")));
        figures.add(new Figure("s10", "server stream, 64 KiB items", "MiB", "mib",
                r -> nested(r.metrics(), "cpu_by_part", "server_stream_64kb")));
        figures.add(new Figure("s10", "client stream, 64 KiB chunks", "MiB", "mib",
                r -> nested(r.metrics(), "cpu_by_part", "client_stream_64kb")));
        figures.add(new Figure("s10", "bidirectional ping-pong, 100 B", "exchange", "call",
                r -> nested(r.metrics(), "cpu_by_part", "bidi_ping_pong")));
        for (String rate : keysOf(results, "s11", "rates")) {
            figures.add(new Figure("s11", "Poisson at " + rate + " capacity", "answered call", "call",
                    r -> nested(r.metrics(), "rates", rate)));
        }
        for (String placement : List.of("scheduler", "loop")) {
            figures.add(new Figure("s11-scaling", "handler on the " + placement + ", closed loop", "call", "call",
                    r -> r.metrics().get(placement) instanceof Map<?, ?> m ? m : null));
        }
        return figures;
    }

    /** The keys of a nested map of a scenario's results ({@code workloads}, {@code rates}), first seen first. */
    private static List<String> keysOf(List<ScenarioResult> results, String scenario, String key) {
        List<String> keys = new ArrayList<>();
        for (ScenarioResult result : results) {
            if (result.scenario().equals(scenario) && result.metrics().get(key) instanceof Map<?, ?> map) {
                for (Object name : map.keySet()) {
                    if (!keys.contains(name.toString())) {
                        keys.add(name.toString());
                    }
                }
            }
        }
        return keys;
    }

    private static Map<?, ?> nested(Map<String, Object> metrics, String outer, String inner) {
        return metrics.get(outer) instanceof Map<?, ?> map && map.get(inner) instanceof Map<?, ?> m ? m : null;
    }

    private static Double number(Object value) {
        return value instanceof Number n && !Double.isNaN(n.doubleValue()) ? n.doubleValue() : null;
    }

    private static double round2(double value) {
        return Math.round(value * 100) / 100.0;
    }
}
