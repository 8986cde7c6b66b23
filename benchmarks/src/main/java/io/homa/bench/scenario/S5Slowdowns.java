package io.homa.bench.scenario;

import io.homa.bench.cpu.CpuCost;
import io.homa.bench.report.ScenarioResult;
import io.homa.bench.scenario.ScenarioRunner.S5Raw;
import io.homa.bench.scenario.ScenarioRunner.S5Workload;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * S5's figures from its raw measurements ({@link ScenarioRunner#s5}): the common slowdown baseline
 * of all systems, and per system and workload the round trips and slowdowns by length decile.
 */
public final class S5Slowdowns {
    private S5Slowdowns() {}

    /**
     * The slowdown baseline: for each calibration length, the smallest unloaded p50 round trip
     * among the systems; between lengths, interpolated linearly in log-log space.
     */
    public static double[][] baseline(List<S5Raw> raws) {
        List<double[]> points = new ArrayList<>();
        for (int length : ScenarioRunner.CALIBRATION_LENGTHS) {
            double best = Double.POSITIVE_INFINITY;
            for (S5Raw raw : raws) {
                Double p50 = raw.calibrationP50Ns().get(length);
                if (p50 != null) {
                    best = Math.min(best, p50);
                }
            }
            if (best < Double.POSITIVE_INFINITY) {
                points.add(new double[] {length, best});
            }
        }
        return points.toArray(double[][]::new);
    }

    /** The baseline round trip for a length, ns (log-log interpolation, clamped at the ends). */
    public static double baselineNs(double[][] baseline, int lengthBytes) {
        if (baseline.length == 0) {
            return Double.NaN;
        }
        if (lengthBytes <= baseline[0][0]) {
            return baseline[0][1];
        }
        for (int i = 1; i < baseline.length; i++) {
            if (lengthBytes == baseline[i][0]) {
                return baseline[i][1];
            }
            if (lengthBytes < baseline[i][0]) {
                double x0 = Math.log(baseline[i - 1][0]);
                double x1 = Math.log(baseline[i][0]);
                double y0 = Math.log(baseline[i - 1][1]);
                double y1 = Math.log(baseline[i][1]);
                double t = (Math.log(lengthBytes) - x0) / (x1 - x0);
                return Math.exp(y0 + t * (y1 - y0));
            }
        }
        return baseline[baseline.length - 1][1];
    }

    /** Turns raw S5 measurements into one result per system, with deciles and slowdowns against the common baseline. */
    public static List<ScenarioResult> results(List<S5Raw> raws, double loadFraction) {
        double[][] baseline = baseline(raws);
        List<ScenarioResult> results = new ArrayList<>();
        for (S5Raw raw : raws) {
            Map<String, Object> metrics = new LinkedHashMap<>();
            metrics.put("load_fraction", loadFraction);
            Map<String, Object> calibration = new LinkedHashMap<>();
            raw.calibrationP50Ns().forEach((length, ns) -> calibration.put(Integer.toString(length), LatencyStats.us(ns)));
            metrics.put("unloaded_p50_us_by_length", calibration);
            Map<String, Object> workloads = new LinkedHashMap<>();
            boolean anyRecorded = false;
            StringBuilder note = new StringBuilder();
            boolean errorNoted = false;
            for (Map.Entry<String, S5Workload> entry : raw.workloads().entrySet()) {
                S5Workload w = entry.getValue();
                OpenLoop.Result r = w.result();
                anyRecorded |= r.recorded() > 0;
                if (r.firstError() != null && !errorNoted) {
                    note.append(note.isEmpty() ? "" : "; ").append(entry.getKey()).append(": ").append(r.failed())
                            .append(" failed calls, first: ").append(r.firstError());
                    errorNoted = true;
                }
                if (r.recorded() < w.minCalls()) {
                    note.append(note.isEmpty() ? "" : "; ").append(entry.getKey()).append(": ").append(r.recorded())
                            .append(" calls recorded, fewer than --s5-min-calls=").append(w.minCalls())
                            .append(" (calls failed or were skipped, or the rate achieved was below the offered one)");
                }
                workloads.put(entry.getKey(), workloadMetrics(w, baseline));
            }
            metrics.put("workloads", workloads);
            results.add(anyRecorded
                    ? ScenarioResult.ok(Scenario.S5.id(), raw.system().id(), note.toString(), metrics)
                    : ScenarioResult.failed(Scenario.S5.id(), raw.system().id(),
                            "no call completed under load" + (note.isEmpty() ? "" : "; " + note)));
        }
        return results;
    }

    static Map<String, Object> workloadMetrics(S5Workload w, double[][] baseline) {
        OpenLoop.Result r = w.result();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("max_rpcs_per_s", ScenarioRunner.round1(w.maxPerSecond()));
        m.put("offered_rpcs_per_s", ScenarioRunner.round1(w.offeredPerSecond()));
        m.put("achieved_rpcs_per_s", ScenarioRunner.round1(r.achievedPerSecond()));
        m.put("calls", r.recorded());
        m.put("failures", r.failed());
        m.put("skipped_arrivals", r.skipped());
        m.put("measure_ms", Math.round(r.windowSeconds() * 1000));
        if (w.minCalls() > 0) {
            m.put("min_calls", w.minCalls());
        }
        if (w.cpu() != null) {
            m.put("cpu", w.cpu().toMetrics());
            // Per call recorded (issued in the window and answered): the client side (the load
            // agents where they made the load) and the servers, over the window.
            CpuCost cost = new CpuCost(List.of());
            cost.add(w.cpu());
            m.putAll(cost.perCall(r.recorded()));
        }
        int n = r.recorded();
        if (n == 0) {
            m.put("deciles", List.of());
            return m;
        }
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> Integer.compare(r.lengthsBytes()[a], r.lengthsBytes()[b]));
        double[] allSlowdowns = new double[n];
        double[] allRtt = new double[n];
        for (int i = 0; i < n; i++) {
            allRtt[i] = r.rttNs()[i];
            allSlowdowns[i] = r.rttNs()[i] / baselineNs(baseline, r.lengthsBytes()[i]);
        }
        List<Map<String, Object>> deciles = new ArrayList<>();
        for (int d = 0; d < 10; d++) {
            int from = (int) ((long) n * d / 10);
            int to = (int) ((long) n * (d + 1) / 10);
            if (to <= from) {
                continue;
            }
            double[] rtt = new double[to - from];
            double[] slowdown = new double[to - from];
            for (int i = from; i < to; i++) {
                int index = order[i];
                rtt[i - from] = r.rttNs()[index];
                slowdown[i - from] = allSlowdowns[index];
            }
            Map<String, Object> decile = new LinkedHashMap<>();
            decile.put("decile", d + 1);
            decile.put("min_bytes", r.lengthsBytes()[order[from]]);
            decile.put("max_bytes", r.lengthsBytes()[order[to - 1]]);
            decile.put("calls", to - from);
            decile.put("p50_us", LatencyStats.us(LatencyStats.percentile(rtt, rtt.length, 50)));
            decile.put("p99_us", LatencyStats.us(LatencyStats.percentile(rtt, rtt.length, 99)));
            decile.put("p50_slowdown", LatencyStats.round2(LatencyStats.percentile(slowdown, slowdown.length, 50)));
            decile.put("p99_slowdown", LatencyStats.round2(LatencyStats.percentile(slowdown, slowdown.length, 99)));
            deciles.add(decile);
        }
        m.put("p50_us", LatencyStats.us(LatencyStats.percentile(allRtt.clone(), n, 50)));
        m.put("p99_us", LatencyStats.us(LatencyStats.percentile(allRtt.clone(), n, 99)));
        m.put("p50_slowdown", LatencyStats.round2(LatencyStats.percentile(allSlowdowns.clone(), n, 50)));
        m.put("p99_slowdown", LatencyStats.round2(LatencyStats.percentile(allSlowdowns.clone(), n, 99)));
        // The paper's Figure 8 headline: the tail of the shortest half of the messages.
        int half = Math.max(1, n / 2);
        double[] shortHalf = new double[half];
        for (int i = 0; i < half; i++) {
            shortHalf[i] = allSlowdowns[order[i]];
        }
        m.put("p99_slowdown_shortest_half", LatencyStats.round2(LatencyStats.percentile(shortHalf, half, 99)));
        m.put("deciles", deciles);
        return m;
    }

}
