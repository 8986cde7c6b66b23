package io.homa.bench.report;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;

/**
 * One line for the testbed smoke ({@code benchmarks/testbed-smoke.sh}): Homa's S1 p50 and its S6
 * point (completion, failed calls, packets dropped in the rack) from a report directory. Exit 1
 * if either result is missing or not ok.
 */
public final class SmokeLine {
    private SmokeLine() {}

    public static void main(String[] args) throws IOException {
        Map<String, Object> report = ReportWriter.readJson(Path.of(args[0]).resolve(ReportWriter.JSON_FILE));
        Map<?, ?> s1 = TestbedSummary.result(report, "s1", "homa");
        Map<?, ?> s6 = TestbedSummary.result(report, "s6", "homa");
        if (s1 == null || s6 == null) {
            System.err.println("testbed smoke: FAILED, S1 or S6 did not run for homa (see " + args[0] + "/report.md)");
            System.exit(1);
        }
        Map<?, ?> m1 = (Map<?, ?>) s1.get("metrics");
        Map<?, ?> m6 = (Map<?, ?>) s6.get("metrics");
        System.out.println(String.format(Locale.ROOT,
                "testbed smoke: homa S1 p50 %s µs; S8 N=%s in %s ms, %s failed calls, %s packets dropped in the rack",
                m1.get("p50_us"), m6.get("max_n"), m6.get("completion_ms_at_max_n"), m6.get("failures"),
                m6.containsKey("network_dropped_packets") ? m6.get("network_dropped_packets") : "?"));
    }
}
