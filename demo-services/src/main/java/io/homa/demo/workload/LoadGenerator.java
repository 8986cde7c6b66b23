package io.homa.demo.workload;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaTimeoutException;
import io.homa.workloads.Workload;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Closed-loop echo workload: keeps {@code concurrency} RPCs outstanding, each request's length
 * drawn from a {@link Workload}, and checks that every response equals its request.
 *
 * <p>Requests are reproducible: lengths come from {@link SplittableRandom}s split from the seed
 * (one per outstanding-RPC slot), contents from a block of seeded random bytes, with the RPC's
 * sequence number in the first (up to) 8 bytes so that a response delivered to the wrong RPC is
 * caught. A response counts as a failure when it differs from its request, is missing, or the
 * call errors or exceeds the per-RPC timeout; failures of every phase (warm-up, unloaded probes,
 * loaded run) are counted in {@link #failedRpcs()}.
 *
 * <p>RTTs are taken where the response is signalled; the comparison with the request and the next
 * request then run on {@link Schedulers#parallel()}, never on the transport's event loop. One
 * run at a time; the calling thread blocks (do not call it on a Reactor non-blocking thread).
 */
public final class LoadGenerator {
    private static final long NOISE_SEED_SALT = 0x5DEECE66DL;
    private static final long WARMUP_SEED_SALT = 0x9E3779B97F4A7C15L;
    private static final long PROBE_SEED_SALT = 0xC2B2AE3D27D4EB4FL;
    private static final int NOISE_SLACK_BYTES = 4096;
    private static final long MISMATCH = -1;
    private static final long EMPTY = -2;
    private static final long ERROR = -3;

    private final Function<byte[], Mono<byte[]>> caller;
    private final Workload distribution;
    private final long seed;
    private final Duration rpcTimeout;
    private final PrintStream out;
    private final byte[] noise;
    private final AtomicLong sequence = new AtomicLong();
    private final AtomicLong failedRpcs = new AtomicLong();
    private final AtomicReference<String> firstFailure = new AtomicReference<>();
    private final Map<String, LongAdder> failuresByKind = new ConcurrentHashMap<>();

    /**
     * @param caller sends one request and emits the response (e.g. a bound
     *     {@code HomaTransport.call(server, bytes)})
     * @param distribution where request lengths come from
     * @param seed seeds lengths and contents
     * @param rpcTimeout a call not answered within this is abandoned and counted as failed, > 0
     * @param out where progress lines go
     */
    public LoadGenerator(
            Function<byte[], Mono<byte[]>> caller,
            Workload distribution,
            long seed,
            Duration rpcTimeout,
            PrintStream out) {
        if (rpcTimeout.isZero() || rpcTimeout.isNegative()) {
            throw new IllegalArgumentException("rpcTimeout must be > 0, was " + rpcTimeout);
        }
        this.caller = caller;
        this.distribution = distribution;
        this.seed = seed;
        this.rpcTimeout = rpcTimeout;
        this.out = out;
        this.noise = new byte[distribution.maxLengthBytes() + NOISE_SLACK_BYTES];
        new SplittableRandom(seed ^ NOISE_SEED_SALT).nextBytes(noise);
    }

    /** Failed RPCs in all phases so far. */
    public long failedRpcs() {
        return failedRpcs.get();
    }

    /**
     * Failed RPCs so far by kind, most frequent first: a Homa status (with "(shutting down)" when the
     * server said so), {@code HomaTimeoutException} (the peer went silent), {@code rpc-timeout} (the
     * generator's own limit), {@code mismatch}, {@code no response}, or the exception's class.
     */
    public Map<String, Long> failuresByKind() {
        Map<String, Long> counts = new TreeMap<>();
        failuresByKind.forEach((kind, count) -> counts.put(kind, count.sum()));
        return counts;
    }

    /** Description of the first failure, or {@code null} if none. */
    public String firstFailure() {
        return firstFailure.get();
    }

    /**
     * Keeps {@code concurrency} RPCs with lengths from the distribution outstanding for
     * {@code duration}, so that the JIT has compiled the paths before anything is measured.
     * Results are checked, not recorded; no progress lines.
     *
     * @return RPCs completed
     */
    public long warmUp(Duration duration, int concurrency) {
        AtomicLong completed = new AtomicLong();
        closedLoop(duration, concurrency, seed ^ WARMUP_SEED_SALT, (lengthBytes, rttNs) -> completed.incrementAndGet());
        return completed.get();
    }

    /**
     * Measures the unloaded RTT: for each probe length, {@code samplesPerLength} sequential RPCs
     * (nothing else outstanding, lengths taken in turn), keeping the median.
     *
     * @param probeLengthsBytes strictly increasing lengths, e.g. {@link UnloadedRtt#probeLengths}
     * @param samplesPerLength RPCs per length, >= 1
     * @throws IllegalStateException if every RPC of some probe length failed
     */
    public UnloadedRtt measureUnloaded(int[] probeLengthsBytes, int samplesPerLength) {
        if (samplesPerLength < 1) {
            throw new IllegalArgumentException("samplesPerLength must be >= 1, was " + samplesPerLength);
        }
        // Rounds over all lengths in a new random order each, rather than all samples of one
        // length in a row: drift (JIT, other load on the machine) and the after-effects of a long
        // message on the next RPC then spread over every length instead of biasing some.
        long[][] samples = new long[probeLengthsBytes.length][samplesPerLength];
        int[] ok = new int[probeLengthsBytes.length];
        int[] order = new int[probeLengthsBytes.length];
        SplittableRandom shuffle = new SplittableRandom(seed ^ PROBE_SEED_SALT);
        for (int round = 0; round < samplesPerLength; round++) {
            for (int i = 0; i < order.length; i++) {
                int j = shuffle.nextInt(i + 1);
                order[i] = order[j];
                order[j] = i;
            }
            for (int p : order) {
                long rttNs = callOnce(probeLengthsBytes[p]);
                if (rttNs >= 0) {
                    samples[p][ok[p]++] = rttNs;
                }
            }
        }
        long[] medians = new long[probeLengthsBytes.length];
        for (int p = 0; p < probeLengthsBytes.length; p++) {
            if (ok[p] == 0) {
                throw new IllegalStateException("unloaded RTT probe of " + probeLengthsBytes[p] + " bytes: all "
                        + samplesPerLength + " RPCs failed; first failure: " + firstFailure.get());
            }
            Arrays.sort(samples[p], 0, ok[p]);
            medians[p] = Math.max(1, samples[p][(ok[p] - 1) / 2]);
        }
        return new UnloadedRtt(probeLengthsBytes, medians);
    }

    /**
     * Runs the loaded phase: {@code concurrency} RPCs outstanding at all times for
     * {@code duration}, then waits for the outstanding ones. Prints a progress line every second.
     *
     * @param duration how long to keep issuing RPCs, > 0
     * @param concurrency outstanding RPCs, >= 1
     * @param unloaded baseline for slowdown
     * @return the run's measurements
     */
    public WorkloadResult run(Duration duration, int concurrency, UnloadedRtt unloaded) {
        if (duration.isZero() || duration.isNegative()) {
            throw new IllegalArgumentException("duration must be > 0, was " + duration);
        }
        if (concurrency < 1) {
            throw new IllegalArgumentException("concurrency must be >= 1, was " + concurrency);
        }
        RpcLog log = new RpcLog();
        AtomicLong completed = new AtomicLong();
        AtomicLong bytes = new AtomicLong();
        long failuresBefore = failedRpcs.get();
        long startNs = System.nanoTime();
        ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "demo-progress");
            thread.setDaemon(true);
            return thread;
        });
        long[] last = {0, startNs}; // completed RPCs and time at the previous line
        ticker.scheduleAtFixedRate(() -> {
            long nowNs = System.nanoTime();
            long done = completed.get();
            out.printf(Locale.ROOT, "%6.1f s  %,12d RPCs  %,10.0f RPCs/s  %,6d failures%n",
                    (nowNs - startNs) / 1e9, done, (done - last[0]) * 1e9 / Math.max(1, nowNs - last[1]),
                    failedRpcs.get() - failuresBefore);
            last[0] = done;
            last[1] = nowNs;
        }, 1, 1, TimeUnit.SECONDS);
        try {
            closedLoop(duration, concurrency, seed, (lengthBytes, rttNs) -> {
                log.add(lengthBytes, rttNs);
                bytes.addAndGet(2L * lengthBytes);
                completed.incrementAndGet();
            });
        } finally {
            ticker.shutdownNow();
        }
        long elapsedNs = System.nanoTime() - startNs;
        return new WorkloadResult(
                distribution.name(),
                concurrency,
                elapsedNs,
                completed.get(),
                failedRpcs.get() - failuresBefore,
                bytes.get(),
                DecileTable.compute(log.sortedByLength(), unloaded),
                unloaded);
    }

    /** Called for each RPC whose echo matched. */
    @FunctionalInterface
    private interface SuccessListener {
        void onSuccess(int lengthBytes, long rttNs);
    }

    /**
     * {@code concurrency} slots, each issuing its next RPC as soon as the previous one ends, until
     * {@code duration} has passed; returns when the last RPC has ended. Slot {@code i} draws its
     * lengths from the {@code i}-th generator split from {@code lengthSeed}.
     */
    private void closedLoop(Duration duration, int concurrency, long lengthSeed, SuccessListener listener) {
        SplittableRandom root = new SplittableRandom(lengthSeed);
        SplittableRandom[] randoms = new SplittableRandom[concurrency];
        for (int i = 0; i < concurrency; i++) {
            randoms[i] = root.split();
        }
        long endNs = System.nanoTime() + duration.toNanos();
        Flux.range(0, concurrency)
                .flatMap(slot -> Mono.defer(() -> {
                            int lengthBytes = distribution.sample(randoms[slot]);
                            return call(lengthBytes).doOnNext(rttNs -> {
                                if (rttNs >= 0) {
                                    listener.onSuccess(lengthBytes, rttNs);
                                }
                            });
                        })
                        .repeat(() -> System.nanoTime() - endNs < 0), concurrency)
                .then()
                .block(duration.plus(rpcTimeout).multipliedBy(2).plusSeconds(10));
    }

    /** One sequential RPC; its RTT in ns, or a negative value when it failed. */
    private long callOnce(int lengthBytes) {
        Long rttNs = call(lengthBytes).block();
        return rttNs == null ? EMPTY : rttNs;
    }

    /** One RPC as a Mono of its RTT in ns, or a negative code for a failure (already counted). */
    private Mono<Long> call(int lengthBytes) {
        long seq = sequence.getAndIncrement();
        byte[] request = request(seq, lengthBytes);
        return Mono.defer(() -> {
                    long startNs = System.nanoTime();
                    return Mono.defer(() -> caller.apply(request))
                            .timeout(rpcTimeout)
                            .map(response -> new Echo(response, System.nanoTime() - startNs));
                })
                // The response may arrive on a transport's event loop: check it elsewhere.
                .publishOn(Schedulers.parallel())
                .map(echo -> matches(seq, lengthBytes, echo.response()) ? echo.rttNs() : MISMATCH)
                .defaultIfEmpty(EMPTY)
                .onErrorResume(error -> {
                    failure(seq, lengthBytes, error.toString(), kindOf(error));
                    return Mono.just(ERROR);
                })
                .doOnNext(result -> {
                    if (result == MISMATCH) {
                        failure(seq, lengthBytes, "response differs from the request", "mismatch");
                    } else if (result == EMPTY) {
                        failure(seq, lengthBytes, "no response", "no response");
                    }
                });
    }

    /** A response and the RTT measured when it arrived. */
    private record Echo(byte[] response, long rttNs) {}

    private static String kindOf(Throwable error) {
        if (error instanceof HomaTimeoutException) {
            return "HomaTimeoutException";
        }
        if (error instanceof HomaException homa) {
            String message = String.valueOf(homa.getMessage());
            return homa.status().name() + (message.contains("shutting down") ? " (shutting down)" : "");
        }
        if (error instanceof java.util.concurrent.TimeoutException) {
            return "rpc-timeout";
        }
        return error.getClass().getSimpleName();
    }

    private void failure(long seq, int lengthBytes, String reason, String kind) {
        failedRpcs.incrementAndGet();
        failuresByKind.computeIfAbsent(kind, (k) -> new LongAdder()).increment();
        firstFailure.compareAndSet(null, "RPC #" + seq + " (" + lengthBytes + " bytes): " + reason);
    }

    /** The request of RPC {@code seq}: a slice of the noise block, stamped with {@code seq}. */
    byte[] request(long seq, int lengthBytes) {
        int from = noiseOffset(seq);
        byte[] request = Arrays.copyOfRange(noise, from, from + lengthBytes);
        for (int i = 0; i < Math.min(Long.BYTES, lengthBytes); i++) {
            request[i] = (byte) (seq >>> (8 * i));
        }
        return request;
    }

    /** Whether {@code response} is exactly the request of RPC {@code seq}, without rebuilding it. */
    boolean matches(long seq, int lengthBytes, byte[] response) {
        if (response == null || response.length != lengthBytes) {
            return false;
        }
        int stamp = Math.min(Long.BYTES, lengthBytes);
        for (int i = 0; i < stamp; i++) {
            if (response[i] != (byte) (seq >>> (8 * i))) {
                return false;
            }
        }
        int from = noiseOffset(seq);
        return Arrays.equals(response, stamp, lengthBytes, noise, from + stamp, from + lengthBytes);
    }

    private static int noiseOffset(long seq) {
        return (int) ((seq * 4099) & (NOISE_SLACK_BYTES - 1));
    }
}
