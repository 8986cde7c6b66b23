package io.homa.demo.workload;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.HdrHistogram.Histogram;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

/**
 * Head-of-line blocking between messages of one client-server pair: the round-trip time of short
 * echo RPCs ({@value #SHORT_LENGTH_BYTES} bytes), first alone, then while
 * {@value #LONG_RPCS_OUTSTANDING} long echo RPCs ({@value #LONG_LENGTH_BYTES} bytes each way) are
 * kept outstanding through the same caller, that is the same client endpoint and the same server.
 * Over one TCP connection (gRPC, RSocket) a short message queues behind the long ones' bytes;
 * Homa sends and grants the shortest message first, so its short RPCs should barely slow down.
 *
 * <p>Short RPCs run one at a time (each measured from subscription to response); long RPCs run
 * in a closed loop, each slot sending its next one as soon as the previous one returns. Every
 * response is compared with its request. A benchmark, not a test: it prints what it measures and
 * asserts nothing about speed. One run at a time; the calling thread blocks.
 */
public final class HeadOfLineBenchmark {
    /** Length of the short RPCs' request (and echoed response). */
    public static final int SHORT_LENGTH_BYTES = 100;
    /** Length of the long RPCs' request (and echoed response): 1 MiB. */
    public static final int LONG_LENGTH_BYTES = 1024 * 1024;
    /** Long RPCs kept outstanding during the loaded phase. */
    public static final int LONG_RPCS_OUTSTANDING = 3;
    /** Sequential short RPCs measured with nothing else in flight. */
    public static final int UNLOADED_SAMPLES = 2_000;
    private static final int SIGNIFICANT_DIGITS = 3;

    private final Function<byte[], Mono<byte[]>> caller;
    private final Duration rpcTimeout;
    private final PrintStream out;
    private final byte[][] longRequests = new byte[LONG_RPCS_OUTSTANDING][];
    private final byte[] shortNoise = new byte[SHORT_LENGTH_BYTES];
    private final AtomicLong failedRpcs = new AtomicLong();
    private final AtomicReference<String> firstFailure = new AtomicReference<>();
    private long shortSequence;

    /**
     * @param caller sends one request and emits the response, e.g. a bound
     *     {@code HomaTransport.call(server, bytes)}; short and long RPCs both go through it
     * @param seed seeds the requests' contents
     * @param rpcTimeout an RPC not answered within this counts as failed, > 0
     * @param out where the report goes
     */
    public HeadOfLineBenchmark(Function<byte[], Mono<byte[]>> caller, long seed, Duration rpcTimeout, PrintStream out) {
        if (rpcTimeout.isZero() || rpcTimeout.isNegative()) {
            throw new IllegalArgumentException("rpcTimeout must be > 0, was " + rpcTimeout);
        }
        this.caller = caller;
        this.rpcTimeout = rpcTimeout;
        this.out = out;
        SplittableRandom random = new SplittableRandom(seed);
        for (int slot = 0; slot < LONG_RPCS_OUTSTANDING; slot++) {
            longRequests[slot] = new byte[LONG_LENGTH_BYTES];
            random.nextBytes(longRequests[slot]);
            longRequests[slot][0] = (byte) slot; // a response delivered to the wrong slot differs
        }
        random.nextBytes(shortNoise);
    }

    /**
     * Runs the three phases and prints the report: a warm-up with both kinds of RPC (unmeasured),
     * {@value #UNLOADED_SAMPLES} short RPCs alone, then short RPCs under the long ones for
     * {@code duration}.
     *
     * @param warmup how long to warm up (the JIT), >= 0
     * @param duration how long to measure short RPCs under load, > 0
     * @return the measurements
     */
    public HeadOfLineResult run(Duration warmup, Duration duration) {
        if (duration.isZero() || duration.isNegative()) {
            throw new IllegalArgumentException("duration must be > 0, was " + duration);
        }
        if (warmup.isNegative()) {
            throw new IllegalArgumentException("warmup must be >= 0, was " + warmup);
        }
        if (!warmup.isZero()) {
            // Both kinds together, then short ones alone: the JIT compiles the long RPCs' paths
            // first, and the unloaded phase must not pay for that compilation or its garbage.
            loaded(warmup, new Histogram(SIGNIFICANT_DIGITS));
            for (int i = 0; i < UNLOADED_SAMPLES; i++) {
                shortRpc(new Histogram(SIGNIFICANT_DIGITS));
            }
            out.printf(Locale.ROOT, "Warm-up: %s of short and long RPCs together, then %,d short RPCs alone%n",
                    format(warmup), UNLOADED_SAMPLES);
        }
        Histogram unloaded = new Histogram(SIGNIFICANT_DIGITS);
        for (int i = 0; i < UNLOADED_SAMPLES; i++) {
            shortRpc(unloaded);
        }
        if (unloaded.getTotalCount() == 0) {
            throw new IllegalStateException("every unloaded " + SHORT_LENGTH_BYTES + "-byte RPC failed; first: "
                    + firstFailure.get());
        }
        out.printf(Locale.ROOT, "Unloaded: %,d sequential %d-byte RPCs: %s%n",
                unloaded.getTotalCount(), SHORT_LENGTH_BYTES, percentiles(unloaded));
        Histogram underLoad = new Histogram(SIGNIFICANT_DIGITS);
        long startNs = System.nanoTime();
        long longRpcs = loaded(duration, underLoad);
        long elapsedNs = System.nanoTime() - startNs;
        if (underLoad.getTotalCount() == 0) {
            throw new IllegalStateException("every " + SHORT_LENGTH_BYTES + "-byte RPC under load failed; first: "
                    + firstFailure.get());
        }
        HeadOfLineResult result = new HeadOfLineResult(
                unloaded.getTotalCount(), micros(unloaded, 50), micros(unloaded, 99),
                underLoad.getTotalCount(), micros(underLoad, 50), micros(underLoad, 99),
                longRpcs, elapsedNs, failedRpcs.get());
        out.printf(Locale.ROOT, "Loaded:   %,d sequential %d-byte RPCs in %.1f s: %s, alongside %,d %,d-byte echo RPCs"
                        + " (%.3f Gbit/s of long-RPC bytes, both ways)%n",
                underLoad.getTotalCount(), SHORT_LENGTH_BYTES, elapsedNs / 1e9, percentiles(underLoad),
                longRpcs, LONG_LENGTH_BYTES, result.longGbitPerSecond());
        out.printf(Locale.ROOT, "Loaded / unloaded: p50 %.2fx, p99 %.2fx%n", result.p50Ratio(), result.p99Ratio());
        if (failedRpcs.get() > 0) {
            out.printf(Locale.ROOT, "%,d RPCs failed; first: %s%n", failedRpcs.get(), firstFailure.get());
        }
        return result;
    }

    /** Failed RPCs so far, all phases. */
    public long failedRpcs() {
        return failedRpcs.get();
    }

    /**
     * Keeps {@value #LONG_RPCS_OUTSTANDING} long RPCs outstanding for {@code duration} while this
     * thread runs short RPCs one after another into {@code shortRtts}; returns once the long ones
     * have ended, with how many long RPCs succeeded.
     */
    private long loaded(Duration duration, Histogram shortRtts) {
        long endNs = System.nanoTime() + duration.toNanos();
        AtomicLong longCompleted = new AtomicLong();
        Sinks.Empty<Void> longDone = Sinks.empty();
        Disposable load = Flux.range(0, LONG_RPCS_OUTSTANDING)
                .flatMap(slot -> longRpc(slot).doOnNext(ok -> {
                            if (ok) {
                                longCompleted.incrementAndGet();
                            }
                        })
                        .repeat(() -> System.nanoTime() - endNs < 0), LONG_RPCS_OUTSTANDING)
                .then()
                .subscribe(null, error -> longDone.tryEmitEmpty(), longDone::tryEmitEmpty);
        try {
            while (System.nanoTime() - endNs < 0) {
                shortRpc(shortRtts);
            }
            longDone.asMono().block(rpcTimeout.multipliedBy(2).plusSeconds(10));
        } finally {
            load.dispose();
        }
        return longCompleted.get();
    }

    /** One long RPC of {@code slot}: true when its echo came back intact (a failure is counted). */
    private Mono<Boolean> longRpc(int slot) {
        byte[] request = longRequests[slot];
        return Mono.defer(() -> caller.apply(request))
                .timeout(rpcTimeout)
                .publishOn(Schedulers.parallel()) // compare off the transport's event loop
                .map(response -> check(Arrays.equals(request, response), LONG_LENGTH_BYTES, "response differs"))
                .defaultIfEmpty(false)
                .onErrorResume(error -> Mono.just(check(false, LONG_LENGTH_BYTES, error.toString())));
    }

    /** One short RPC, blocking; its RTT goes into {@code rtts} when the echo came back intact. */
    private void shortRpc(Histogram rtts) {
        byte[] request = shortNoise.clone();
        long seq = shortSequence++;
        for (int i = 0; i < Long.BYTES; i++) {
            request[i] = (byte) (seq >>> (8 * i));
        }
        long[] rttNs = {-1};
        try {
            byte[] response = Mono.defer(() -> {
                        long startNs = System.nanoTime();
                        return caller.apply(request).doOnNext(r -> rttNs[0] = System.nanoTime() - startNs);
                    })
                    .timeout(rpcTimeout)
                    .block();
            if (check(Arrays.equals(request, response), SHORT_LENGTH_BYTES, "response differs")) {
                rtts.recordValue(Math.max(1, rttNs[0]));
            }
        } catch (RuntimeException e) {
            check(false, SHORT_LENGTH_BYTES, e.toString());
        }
    }

    private boolean check(boolean ok, int lengthBytes, String failure) {
        if (!ok) {
            failedRpcs.incrementAndGet();
            firstFailure.compareAndSet(null, lengthBytes + "-byte RPC: " + failure);
        }
        return ok;
    }

    private static double micros(Histogram histogram, double percentile) {
        return histogram.getValueAtPercentile(percentile) / 1_000.0;
    }

    private static String percentiles(Histogram histogram) {
        return String.format(Locale.ROOT, "p50 %.1f µs, p99 %.1f µs, p99.9 %.1f µs",
                micros(histogram, 50), micros(histogram, 99), micros(histogram, 99.9));
    }

    private static String format(Duration duration) {
        return duration.toMillis() % 1000 == 0 ? duration.toSeconds() + " s" : duration.toMillis() + " ms";
    }
}
