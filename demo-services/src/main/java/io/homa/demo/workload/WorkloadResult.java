package io.homa.demo.workload;

import java.util.List;
import java.util.Locale;

/**
 * Measurements of one loaded run.
 *
 * @param workload the distribution's name, e.g. {@code w3}
 * @param concurrency outstanding RPCs kept
 * @param elapsedNs from the first RPC issued to the last one finished
 * @param completedRpcs RPCs whose echo matched
 * @param failedRpcs RPCs that failed (error, timeout, missing or different echo)
 * @param bytes request plus response bytes of the completed RPCs
 * @param rows the per-decile table
 * @param unloaded the unloaded RTTs used for slowdown
 */
public record WorkloadResult(
        String workload,
        int concurrency,
        long elapsedNs,
        long completedRpcs,
        long failedRpcs,
        long bytes,
        List<DecileTable.Row> rows,
        UnloadedRtt unloaded) {

    public WorkloadResult {
        rows = List.copyOf(rows);
    }

    /** Completed RPCs per second. */
    public double rpcsPerSecond() {
        return elapsedNs <= 0 ? 0 : completedRpcs * 1e9 / elapsedNs;
    }

    /** Request plus response payload throughput in Gbit/s. */
    public double gbitPerSecond() {
        return elapsedNs <= 0 ? 0 : bytes * 8.0 / elapsedNs;
    }

    /** The decile table and the totals line, as Homa's {@code cp_node} reports them. */
    public String report() {
        return String.format(Locale.ROOT, "Workload %s, %d outstanding RPCs, RTT and slowdown by length decile:%n",
                        workload, concurrency)
                + DecileTable.format(rows)
                + String.format(Locale.ROOT,
                        "Total: %,d RPCs in %.2f s = %,.0f RPCs/s, %.3f Gbit/s (request + response bytes), %d failed RPCs%n",
                        completedRpcs, elapsedNs / 1e9, rpcsPerSecond(), gbitPerSecond(), failedRpcs);
    }
}
