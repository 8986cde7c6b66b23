package io.homa.demo.workload;

/**
 * What {@link HeadOfLineBenchmark} measured.
 *
 * @param unloadedRpcs short RPCs measured alone
 * @param unloadedP50Us their median RTT, µs
 * @param unloadedP99Us their 99th percentile RTT, µs
 * @param loadedRpcs short RPCs measured while the long ones ran
 * @param loadedP50Us their median RTT, µs
 * @param loadedP99Us their 99th percentile RTT, µs
 * @param longRpcs long RPCs completed during the loaded phase
 * @param loadedElapsedNs length of the loaded phase, ns
 * @param failedRpcs RPCs of any kind and phase that failed
 */
public record HeadOfLineResult(
        long unloadedRpcs,
        double unloadedP50Us,
        double unloadedP99Us,
        long loadedRpcs,
        double loadedP50Us,
        double loadedP99Us,
        long longRpcs,
        long loadedElapsedNs,
        long failedRpcs) {

    /** Median RTT under load divided by the unloaded median. */
    public double p50Ratio() {
        return loadedP50Us / unloadedP50Us;
    }

    /** 99th percentile RTT under load divided by the unloaded one. */
    public double p99Ratio() {
        return loadedP99Us / unloadedP99Us;
    }

    /** Long RPCs' request and response bytes per second during the loaded phase, in Gbit/s. */
    public double longGbitPerSecond() {
        return 2.0 * longRpcs * HeadOfLineBenchmark.LONG_LENGTH_BYTES * 8 / Math.max(1, loadedElapsedNs);
    }
}
