package io.homa.bench.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * The ratio table: for each scenario's headline metrics, each Homa system's figure divided by
 * gRPC's, RSocket's and the floors'. Whether lower or higher is better is stated per row. Also
 * gRPC over Homa against gRPC on grpc-netty and Homa's RPC layer ({@link #grpcOverHoma}).
 */
public final class Ratios {
    /** Peers in the ratio columns, in order. */
    public static final List<String> PEERS = List.of("grpc", "rsocket", "udp", "tcp");
    /** The Homa systems that get rows (gRPC over Homa too: its transport is Homa's). */
    public static final List<String> HOMA_SYSTEMS = List.of("homa", "homa-rpc", "homa-auth", "homa-rpc-auth", "grpc-homa");
    /** gRPC over Homa, and what it is compared with: the same gRPC code on grpc-netty, and Homa's own RPC layer. */
    public static final String GRPC_HOMA = "grpc-homa";
    static final String GRPC = "grpc";
    static final String HOMA_RPC = "homa-rpc";

    /**
     * One headline metric of gRPC over Homa beside gRPC on grpc-netty (the same service, stubs and
     * client: what the transport changes) and Homa's RPC layer (the same transport: what the gRPC
     * layer costs), with {@code grpc-homa / grpc} and {@code grpc-homa / homa-rpc}; a value or
     * ratio is null where a system did not measure the metric.
     */
    public record GrpcOverHoma(String scenario, String metric, boolean lowerIsBetter, Double grpcHoma, Double grpc,
            Double homaRpc, Double vsGrpc, Double vsHomaRpc) {}

    /** The gRPC-over-Homa rows of every headline metric {@code grpc-homa} measured. */
    public static List<GrpcOverHoma> grpcOverHoma(List<ScenarioResult> results, List<String> workloads) {
        List<GrpcOverHoma> rows = new ArrayList<>();
        for (Metric metric : metrics(workloads)) {
            Map<String, Double> values = values(results, metric);
            Double grpcHoma = values.get(GRPC_HOMA);
            if (grpcHoma == null) {
                continue;
            }
            Double grpc = values.get(GRPC);
            Double homaRpc = values.get(HOMA_RPC);
            rows.add(new GrpcOverHoma(metric.scenario(), metric.label(), metric.lowerIsBetter(), grpcHoma, grpc, homaRpc,
                    ratio(grpcHoma, grpc), ratio(grpcHoma, homaRpc)));
        }
        return rows;
    }
    /** Each Homa system with packet authentication, by the system it adds it to. */
    static final Map<String, String> AUTHENTICATED = Map.of("homa", "homa-auth", "homa-rpc", "homa-rpc-auth");

    /**
     * The cost of packet authentication in one run: a metric of a Homa system without it and with
     * it ({@code homa-auth}, {@code homa-rpc-auth}), and {@code authenticated / plain}.
     */
    public record Overhead(String scenario, String metric, boolean lowerIsBetter, String system, double plain,
            double authenticated, Double ratio) {}

    /** The overhead rows of every headline metric measured for both a Homa system and its authenticated twin. */
    public static List<Overhead> authenticationOverhead(List<ScenarioResult> results, List<String> workloads) {
        List<Overhead> rows = new ArrayList<>();
        for (Metric metric : metrics(workloads)) {
            Map<String, Double> values = values(results, metric);
            for (String plain : List.of("homa", "homa-rpc")) {
                Double without = values.get(plain);
                Double with = values.get(AUTHENTICATED.get(plain));
                if (without != null && with != null) {
                    rows.add(new Overhead(metric.scenario(), metric.label(), metric.lowerIsBetter(), plain, without, with,
                            ratio(with, without)));
                }
            }
        }
        return rows;
    }

    private static Map<String, Double> values(List<ScenarioResult> results, Metric metric) {
        Map<String, Double> values = new LinkedHashMap<>();
        for (ScenarioResult result : results) {
            if (result.scenario().equals(metric.scenario()) && result.status().equals(ScenarioResult.OK)) {
                Double value = metric.read().apply(result);
                if (value != null) {
                    values.put(result.system(), value);
                }
            }
        }
        return values;
    }

    /**
     * One row: the metric's values by system and the ratios homa-system / peer (null when a value
     * is missing or the denominator is zero).
     */
    public record Row(String scenario, String metric, boolean lowerIsBetter, String homaSystem, Double homa,
            Map<String, Double> peers, Map<String, Double> ratios) {}

    /** A headline metric: label, which way is better, and how to read it from a result. */
    record Metric(String scenario, String label, boolean lowerIsBetter, Function<ScenarioResult, Double> read) {}

    private Ratios() {}

    static List<Metric> metrics(List<String> workloads) {
        List<Metric> metrics = new ArrayList<>();
        metrics.add(new Metric("s1", "p50 µs", true, r -> value(r, "p50_us")));
        metrics.add(new Metric("s1", "p99 µs", true, r -> value(r, "p99_us")));
        metrics.add(new Metric("s1", "p99.9 µs", true, r -> value(r, "p99.9_us")));
        metrics.add(new Metric("s2", "short p50 µs", true, r -> value(r, "p50_us")));
        metrics.add(new Metric("s2", "short p99 µs", true, r -> value(r, "p99_us")));
        metrics.add(new Metric("s3", "RPCs/s", false, r -> value(r, "rpcs_per_s")));
        metrics.add(new Metric("s4", "goodput Gbit/s", false, r -> value(r, "goodput_gbps")));
        for (String workload : workloads) {
            metrics.add(new Metric("s5", workload + " p99 slowdown", true, r -> workloadValue(r, workload, "p99_slowdown")));
            metrics.add(new Metric("s5", workload + " p50 slowdown", true, r -> workloadValue(r, workload, "p50_slowdown")));
        }
        // Calls that fail at once end a burst early: a completion time with failures compares nothing.
        metrics.add(new Metric("s6", "completion ms at max N", true,
                r -> Objects.equals(value(r, "failures_at_max_n"), 0.0) ? value(r, "completion_ms_at_max_n") : null));
        metrics.add(new Metric("s6", "failed calls (all N)", true, r -> value(r, "failures")));
        metrics.add(new Metric("s10", "server stream 100 B items/s", false, r -> value(r, "items_per_s_100b")));
        metrics.add(new Metric("s10", "server stream 64 KiB Gbit/s", false, r -> value(r, "gbit_per_s_64kb_server")));
        metrics.add(new Metric("s10", "client stream 64 KiB Gbit/s", false, r -> value(r, "gbit_per_s_64kb_client")));
        metrics.add(new Metric("s10", "bidi ping-pong p50 µs", true, r -> value(r, "bidi_p50_us")));
        metrics.add(new Metric("s10", "bidi ping-pong p99 µs", true, r -> value(r, "bidi_p99_us")));
        return metrics;
    }

    static Double value(ScenarioResult result, String name) {
        double value = result.number(name);
        return Double.isNaN(value) ? null : value;
    }

    @SuppressWarnings("unchecked")
    static Double workloadValue(ScenarioResult result, String workload, String name) {
        Object workloads = result.metrics().get("workloads");
        if (workloads instanceof Map<?, ?> map && map.get(workload) instanceof Map<?, ?> w
                && w.get(name) instanceof Number number) {
            return number.doubleValue();
        }
        return null;
    }

    /** Computes the rows from the results (only OK results count). */
    public static List<Row> compute(List<ScenarioResult> results, List<String> workloads) {
        List<Row> rows = new ArrayList<>();
        for (Metric metric : metrics(workloads)) {
            Map<String, Double> values = values(results, metric);
            for (String homaSystem : HOMA_SYSTEMS) {
                Double homa = values.get(homaSystem);
                if (homa == null) {
                    continue;
                }
                Map<String, Double> peers = new LinkedHashMap<>();
                Map<String, Double> ratios = new LinkedHashMap<>();
                for (String peer : PEERS) {
                    Double value = values.get(peer);
                    peers.put(peer, value);
                    ratios.put(peer, ratio(homa, value));
                }
                rows.add(new Row(metric.scenario(), metric.label(), metric.lowerIsBetter(), homaSystem, homa, peers, ratios));
            }
        }
        return rows;
    }

    /** {@code numerator / denominator} rounded to 3 digits after the point, or null. */
    public static Double ratio(Double numerator, Double denominator) {
        if (numerator == null || denominator == null || denominator == 0 || Double.isNaN(denominator)) {
            return null;
        }
        return Math.round(numerator / denominator * 1000) / 1000.0;
    }
}
