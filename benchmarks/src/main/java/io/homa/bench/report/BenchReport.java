package io.homa.bench.report;

import java.util.List;
import java.util.Map;

/**
 * One run's report, written as {@code report.json} and {@code report.md}.
 *
 * @param header machine, JDK, versions, placement, mode and settings
 * @param scenarios id to description of the scenarios run
 * @param results one entry per (scenario, system)
 * @param ratios the ratio table
 * @param targets the targets, met or not
 * @param charts file names of the PNG charts, relative to the report directory
 * @param cpu the CPU table: CPU per call (or per MiB) of client and server, and against RSocket
 */
public record BenchReport(Map<String, Object> header, Map<String, String> scenarios, List<ScenarioResult> results,
        List<Ratios.Row> ratios, List<Targets.Check> targets, List<String> charts, List<CpuTable.Row> cpu) {
    /** A report whose CPU table is computed from {@code results}. */
    public BenchReport(Map<String, Object> header, Map<String, String> scenarios, List<ScenarioResult> results,
            List<Ratios.Row> ratios, List<Targets.Check> targets, List<String> charts) {
        this(header, scenarios, results, ratios, targets, charts, CpuTable.rows(results));
    }
}
