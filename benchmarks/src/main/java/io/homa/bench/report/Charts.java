package io.homa.bench.report;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** PNG charts of a report (XChart): S1/S2 latency distributions, S5 slowdown per decile, S6 completion per N. */
public final class Charts {
    private static final int WIDTH = 900;
    private static final int HEIGHT = 540;

    private Charts() {}

    /**
     * Writes every chart the results allow into {@code dir}.
     *
     * @return the file names written
     */
    public static List<String> write(List<ScenarioResult> results, List<String> workloads, Path dir) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<String> files = new ArrayList<>();
        for (String scenario : List.of("s1", "s2")) {
            XYChart chart = chart(scenario.toUpperCase() + (scenario.equals("s1") ? ": unloaded 100 B echo RTT"
                            : ": 100 B echo RTT while 1 MiB echoes stream"),
                    "percentile (log scale of 1/(1-p): 10 = p90, 100 = p99, 1000 = p99.9)", "round trip, µs (log)");
            chart.getStyler().setXAxisLogarithmic(true);
            int series = 0;
            for (ScenarioResult result : ok(results, scenario)) {
                if (result.metrics().get("distribution_us") instanceof List<?> points && !points.isEmpty()) {
                    List<Double> x = new ArrayList<>();
                    List<Double> y = new ArrayList<>();
                    for (Object point : points) {
                        double[] pair = pair(point);
                        if (pair != null && pair[0] < 100) {
                            x.add(1 / (1 - pair[0] / 100));
                            y.add(Math.max(pair[1], 0.1));
                        }
                    }
                    if (!x.isEmpty()) {
                        chart.addSeries(result.system(), x, y);
                        series++;
                    }
                }
            }
            if (series > 0) {
                files.add(save(chart, dir, scenario + "-latency.png"));
            }
        }
        for (String workload : workloads) {
            XYChart chart = chart("S5 " + workload.toUpperCase() + ": p99 slowdown per decile of message length",
                    "decile of message length (each 10% of messages, shortest first)", "p99 slowdown (log)");
            int series = 0;
            for (ScenarioResult result : ok(results, "s5")) {
                List<Double> x = new ArrayList<>();
                List<Double> y = new ArrayList<>();
                for (Map<?, ?> decile : deciles(result, workload)) {
                    if (decile.get("decile") instanceof Number d && decile.get("p99_slowdown") instanceof Number s) {
                        x.add(d.doubleValue());
                        y.add(Math.max(s.doubleValue(), 0.01));
                    }
                }
                if (!x.isEmpty()) {
                    chart.addSeries(result.system(), x, y);
                    series++;
                }
            }
            if (series > 0) {
                files.add(save(chart, dir, "s5-" + workload + "-slowdown.png"));
            }
        }
        XYChart incast = chart("S6 incast: median completion time of N concurrent RPCs (10 KB responses)",
                "N (log)", "completion, ms (log)");
        incast.getStyler().setXAxisLogarithmic(true);
        int series = 0;
        for (ScenarioResult result : ok(results, "s6")) {
            if (result.metrics().get("fanouts") instanceof List<?> rows) {
                List<Double> x = new ArrayList<>();
                List<Double> y = new ArrayList<>();
                for (Object row : rows) {
                    if (row instanceof Map<?, ?> map && map.get("n") instanceof Number n
                            && map.get("completion_median_ms") instanceof Number ms) {
                        x.add(n.doubleValue());
                        y.add(Math.max(ms.doubleValue(), 0.01));
                    }
                }
                if (!x.isEmpty()) {
                    incast.addSeries(result.system(), x, y);
                    series++;
                }
            }
        }
        if (series > 0) {
            files.add(save(incast, dir, "s6-incast.png"));
        }
        return files;
    }

    private static XYChart chart(String title, String xTitle, String yTitle) {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle(xTitle)
                .yAxisTitle(yTitle).build();
        chart.getStyler().setYAxisLogarithmic(true);
        chart.getStyler().setDefaultSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
        chart.getStyler().setMarkerSize(6);
        chart.getStyler().setChartTitleFont(chart.getStyler().getChartTitleFont().deriveFont(14f));
        return chart;
    }

    private static String save(XYChart chart, Path dir, String file) throws IOException {
        chart.getSeriesMap().values().forEach(s -> s.setMarker(SeriesMarkers.CIRCLE));
        BitmapEncoder.saveBitmap(chart, dir.resolve(file).toString(), BitmapEncoder.BitmapFormat.PNG);
        return file;
    }

    private static List<ScenarioResult> ok(List<ScenarioResult> results, String scenario) {
        return results.stream()
                .filter(r -> r.scenario().equals(scenario) && r.status().equals(ScenarioResult.OK))
                .toList();
    }

    private static double[] pair(Object point) {
        if (point instanceof double[] array && array.length == 2) {
            return array;
        }
        if (point instanceof List<?> list && list.size() == 2 && list.get(0) instanceof Number a
                && list.get(1) instanceof Number b) {
            return new double[] {a.doubleValue(), b.doubleValue()};
        }
        return null;
    }

    @SuppressWarnings("unchecked")
    static List<Map<?, ?>> deciles(ScenarioResult result, String workload) {
        if (result.metrics().get("workloads") instanceof Map<?, ?> workloads
                && workloads.get(workload) instanceof Map<?, ?> w && w.get("deciles") instanceof List<?> list) {
            return (List<Map<?, ?>>) list;
        }
        return List.of();
    }
}
