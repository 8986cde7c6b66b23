package io.homa.bench.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The targets for the Homa message layer, checked against one run's results. */
public final class Targets {
    /**
     * One target.
     *
     * @param target what the issue asks
     * @param measured the figures and the factor
     * @param met whether it is met; null when a figure is missing
     * @param gap how far off, e.g. "needs 2.3x lower", empty when met
     */
    public record Check(String target, String measured, Boolean met, String gap) {}

    private Targets() {}

    static Optional<Double> find(List<ScenarioResult> results, String scenario, String system, String metric) {
        return results.stream()
                .filter(r -> r.scenario().equals(scenario) && r.system().equals(system) && r.status().equals(ScenarioResult.OK))
                .map(r -> r.number(metric))
                .filter(v -> !Double.isNaN(v))
                .findFirst();
    }

    static String f(double value) {
        return value >= 100 ? String.format("%,.0f", value) : String.format("%.3g", value);
    }

    /** Checks the four throughput/latency targets of the issue for system {@code homa}. */
    public static List<Check> check(List<ScenarioResult> results) {
        List<Check> checks = new ArrayList<>();
        Optional<Double> homaS1 = find(results, "s1", "homa", "p50_us");
        Optional<Double> udpS1 = find(results, "s1", "udp", "p50_us");
        Optional<Double> bestPeerS1 = best(results, "s1", "p50_us", true);
        checks.add(homaS1.isPresent() && udpS1.isPresent()
                ? lowerCheck("S1 Homa message-layer p50 within 1.5x of the UDP ping-pong",
                        homaS1.get(), udpS1.get() * 1.5, "Homa " + f(homaS1.get()) + " µs vs UDP " + f(udpS1.get())
                                + " µs = " + f(homaS1.get() / udpS1.get()) + "x")
                : missing("S1 Homa message-layer p50 within 1.5x of the UDP ping-pong"));
        checks.add(homaS1.isPresent() && bestPeerS1.isPresent()
                ? lowerCheck("S1 Homa p50 at most half of the better of gRPC and RSocket",
                        homaS1.get(), bestPeerS1.get() / 2, "Homa " + f(homaS1.get()) + " µs vs best peer "
                                + f(bestPeerS1.get()) + " µs = " + f(homaS1.get() / bestPeerS1.get()) + "x")
                : missing("S1 Homa p50 at most half of the better of gRPC and RSocket"));
        Optional<Double> homaS2 = find(results, "s2", "homa", "p99_us");
        Optional<Double> bestPeerS2 = best(results, "s2", "p99_us", true);
        checks.add(homaS2.isPresent() && bestPeerS2.isPresent()
                ? lowerCheck("S2 short-RPC p99 under 1 MiB load at least 10x lower than gRPC's and RSocket's",
                        homaS2.get(), bestPeerS2.get() / 10, "Homa " + f(homaS2.get()) + " µs vs best peer "
                                + f(bestPeerS2.get()) + " µs = " + f(bestPeerS2.get() / homaS2.get()) + "x lower")
                : missing("S2 short-RPC p99 under 1 MiB load at least 10x lower than gRPC's and RSocket's"));
        Optional<Double> homaS3 = find(results, "s3", "homa", "rpcs_per_s");
        Optional<Double> bestPeerS3 = best(results, "s3", "rpcs_per_s", false);
        checks.add(homaS3.isPresent() && bestPeerS3.isPresent()
                ? higherCheck("S3 more RPCs/s than the better of gRPC and RSocket", homaS3.get(), bestPeerS3.get(),
                        "Homa " + f(homaS3.get()) + "/s vs best peer " + f(bestPeerS3.get()) + "/s = "
                                + f(homaS3.get() / bestPeerS3.get()) + "x")
                : missing("S3 more RPCs/s than the better of gRPC and RSocket"));
        Optional<Double> homaS4 = find(results, "s4", "homa", "goodput_gbps");
        Optional<Double> bestPeerS4 = best(results, "s4", "goodput_gbps", false);
        checks.add(homaS4.isPresent() && bestPeerS4.isPresent()
                ? higherCheck("S4 1 MiB goodput at least that of the better peer", homaS4.get(), bestPeerS4.get(),
                        "Homa " + f(homaS4.get()) + " Gbit/s vs best peer " + f(bestPeerS4.get()) + " Gbit/s = "
                                + f(homaS4.get() / bestPeerS4.get()) + "x")
                : missing("S4 1 MiB goodput at least that of the better peer"));
        return checks;
    }

    private static Optional<Double> best(List<ScenarioResult> results, String scenario, String metric, boolean lower) {
        Optional<Double> grpc = find(results, scenario, "grpc", metric);
        Optional<Double> rsocket = find(results, scenario, "rsocket", metric);
        if (grpc.isEmpty()) {
            return rsocket;
        }
        if (rsocket.isEmpty()) {
            return grpc;
        }
        return Optional.of(lower ? Math.min(grpc.get(), rsocket.get()) : Math.max(grpc.get(), rsocket.get()));
    }

    private static Check lowerCheck(String target, double value, double limit, String measured) {
        boolean met = value <= limit;
        return new Check(target, measured, met, met ? "" : "needs " + f(value / limit) + "x lower");
    }

    private static Check higherCheck(String target, double value, double limit, String measured) {
        boolean met = value >= limit;
        return new Check(target, measured, met, met ? "" : "needs " + f(limit / value) + "x higher");
    }

    private static Check missing(String target) {
        return new Check(target, "not measured in this run", null, "");
    }
}
