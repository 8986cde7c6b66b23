package io.homa.bench.jmh;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the JMH microbenchmarks of this package with the GC profiler (allocation per operation)
 * and writes {@code jmh-result.json} (JMH's JSON) and {@code jmh-summary.md} to the output
 * directory.
 *
 * <pre>
 * JmhMain [quick|full] [--out=DIR] [REGEX...]
 * </pre>
 *
 * <ul>
 *   <li>{@code quick} (default): 1 fork, 2 x 1 s warm-up, 2 x 1 s measurement per benchmark:
 *       a smoke run (about 2 minutes), figures indicative only.
 *   <li>{@code full}: 2 forks, 5 x 1 s warm-up, 5 x 2 s measurement per benchmark.
 *   <li>{@code --out}: output directory, default {@code benchmarks/target/jmh}.
 *   <li>{@code REGEX}: only benchmarks whose full name matches one of these (JMH include
 *       patterns), e.g. {@code EngineReceive}; default all of {@code io.homa.bench.jmh}.
 * </ul>
 * Exit status 1 if a benchmark failed (JMH then reports fewer results than benchmarks).
 */
public final class JmhMain {
    /** Payload bytes the receiver stores per DATA packet: 1416 plus a 16-byte header per 16 KiB chunk. */
    static final double RECEIVE_PAYLOAD_BYTES_PER_PACKET = 1416 * (16_384 + 16) / 16_384.0;

    private JmhMain() {}

    public static void main(String[] args) throws RunnerException {
        String mode = "quick";
        Path out = Path.of("benchmarks", "target", "jmh");
        List<String> includes = new ArrayList<>();
        for (String arg : args) {
            if (arg.equals("quick") || arg.equals("full")) {
                mode = arg;
            } else if (arg.startsWith("--out=")) {
                out = Path.of(arg.substring("--out=".length()));
            } else if (arg.startsWith("-")) {
                System.err.println("unknown option " + arg + "; usage: JmhMain [quick|full] [--out=DIR] [REGEX...]");
                System.exit(2);
                return;
            } else {
                includes.add(arg);
            }
        }
        if (includes.isEmpty()) {
            includes.add(JmhMain.class.getPackageName() + ".");
        }
        try {
            Files.createDirectories(out);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create output directory " + out, e);
        }
        Path json = out.resolve("jmh-result.json");
        ChainedOptionsBuilder options = new OptionsBuilder()
                .addProfiler(GCProfiler.class)
                .jvmArgsAppend("-Xms1g", "-Xmx1g")
                .resultFormat(ResultFormatType.JSON)
                .result(json.toString())
                .shouldFailOnError(true);
        for (String include : includes) {
            options.include(include);
        }
        if (mode.equals("full")) {
            options.forks(2).warmupIterations(5).warmupTime(TimeValue.seconds(1))
                    .measurementIterations(5).measurementTime(TimeValue.seconds(2));
        } else {
            options.forks(1).warmupIterations(2).warmupTime(TimeValue.seconds(1))
                    .measurementIterations(2).measurementTime(TimeValue.seconds(1));
        }
        Collection<RunResult> results = new Runner(options.build()).run();
        Path summary = out.resolve("jmh-summary.md");
        try {
            Files.writeString(summary, summary(mode, results));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + summary, e);
        }
        System.out.println("JMH results: " + json + " and " + summary);
    }

    /** The Markdown summary: one row per benchmark and parameter set. */
    static String summary(String mode, Collection<RunResult> results) {
        StringBuilder md = new StringBuilder();
        md.append("# JMH microbenchmarks (").append(mode).append(" mode)\n\n");
        md.append("- Date: ").append(Instant.now().truncatedTo(ChronoUnit.SECONDS)).append('\n');
        md.append("- JDK: ").append(System.getProperty("java.vm.name")).append(' ')
                .append(System.getProperty("java.vm.version")).append(", ")
                .append(Runtime.getRuntime().availableProcessors()).append(" CPUs, ")
                .append(System.getProperty("os.name")).append(' ').append(System.getProperty("os.arch")).append('\n');
        md.append("- Allocation: JMH `-prof gc`, `gc.alloc.rate.norm` (bytes per operation).\n");
        md.append("- Receive path (`EngineReceiveBenchmark`): one op = one 1416-byte DATA packet in, the engine's answer out;"
                + " its B/op includes the payload copied into the message (")
                .append(String.format(Locale.ROOT, "%.1f", RECEIVE_PAYLOAD_BYTES_PER_PACKET))
                .append(" B/op), so \"beyond payload\" is the engine's own allocation. Of that, about 0.35 B/op is"
                        + " per message (a 64 MiB message's 16 KiB chunk table, every 47,393 packets) and the rest timer"
                        + " ticks (every 2,500 packets); the per-packet path allocates nothing"
                        + " (guarded by protocol-engine's ReceivePathAllocationTest).\n");
        md.append("- Send path (`EngineSendBenchmark`): one op = one 1416-byte DATA packet of a long request out"
                + " through the pacer, a GRANT in every fifth; the payload is read from the caller's array, so B/op"
                + " is the engine's own allocation, none per packet (guarded by SendPathAllocationTest).\n\n");
        md.append("| Benchmark | Params | ns/op | ± (99.9%) | B/op | beyond payload B/op |\n");
        md.append("|---|---|---:|---:|---:|---:|\n");
        List<RunResult> sorted = new ArrayList<>(results);
        sorted.sort(Comparator.comparing((RunResult r) -> r.getParams().getBenchmark())
                .thenComparing(r -> params(r.getParams())));
        for (RunResult result : sorted) {
            BenchmarkParams params = result.getParams();
            String name = params.getBenchmark();
            name = name.substring(name.lastIndexOf('.', name.lastIndexOf('.') - 1) + 1);
            Result<?> primary = result.getPrimaryResult();
            double allocated = allocatedBytesPerOp(result);
            String beyond = "";
            if (name.startsWith("EngineReceiveBenchmark.") && !Double.isNaN(allocated)) {
                beyond = String.format(Locale.ROOT, "%.2f", Math.max(0, allocated - RECEIVE_PAYLOAD_BYTES_PER_PACKET));
            }
            md.append("| ").append(name)
                    .append(" | ").append(params(params))
                    .append(" | ").append(format(primary.getScore()))
                    .append(" | ").append(format(primary.getScoreError()))
                    .append(" | ").append(Double.isNaN(allocated) ? "n/a" : String.format(Locale.ROOT, "%.2f", allocated))
                    .append(" | ").append(beyond)
                    .append(" |\n");
        }
        return md.toString();
    }

    private static String params(BenchmarkParams params) {
        StringBuilder text = new StringBuilder();
        for (String key : params.getParamsKeys()) {
            if (!text.isEmpty()) {
                text.append(", ");
            }
            text.append(key).append('=').append(params.getParam(key));
        }
        return text.toString();
    }

    private static double allocatedBytesPerOp(RunResult result) {
        for (Map.Entry<String, Result> entry : result.getSecondaryResults().entrySet()) {
            if (entry.getKey().endsWith("gc.alloc.rate.norm")) {
                return entry.getValue().getScore();
            }
        }
        return Double.NaN;
    }

    private static String format(double value) {
        if (Double.isNaN(value)) {
            return "n/a";
        }
        return String.format(Locale.ROOT, value >= 100 ? "%.0f" : value >= 10 ? "%.1f" : "%.2f", value);
    }
}
