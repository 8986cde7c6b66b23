package io.homa.bench.scenario;

import io.homa.bench.systems.EchoClient;
import io.homa.bench.systems.EchoProtocol;
import io.homa.bench.systems.FailureKind;
import io.homa.workloads.Workload;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.IntFunction;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntUnaryOperator;

/**
 * Open-loop load: echo calls arrive as a Poisson process at a fixed rate, each with a length
 * drawn by {@code lengths} (a function of a uniform random int). Calls issued inside the
 * measurement window are recorded with their length and round-trip time. Arrivals that would
 * exceed {@code maxOutstanding} calls in flight are skipped and counted.
 */
public final class OpenLoop {
    /**
     * What one run measured.
     *
     * @param failedInWindowByKind the failed calls issued in the window, by {@link FailureKind#id()}
     *     (every kind present, 0 when none)
     * @param answeredInWindow calls answered successfully within the window, whenever issued: the
     *     goodput while a backlog builds ({@code recorded} counts calls issued in the window, some
     *     answered after it)
     * @param answeredBytesInWindow response bytes of the calls answered successfully within the
     *     window, whenever issued (an echo's response is as long as its request): the goodput
     * @param offeredBytesInWindow request bytes of the arrivals in the window: those issued, and
     *     each skipped arrival counted at the mean length of those issued (a skipped arrival draws
     *     no length, which keeps every run's sequence of lengths what it was)
     */
    public record Result(int[] lengthsBytes, long[] rttNs, int recorded, long issuedInWindow, long failed,
            long skipped, double windowSeconds, String firstError, Map<String, Long> failedInWindowByKind,
            long answeredInWindow, long answeredBytesInWindow, long offeredBytesInWindow) {
        /** Without the bytes answered and offered in the window. */
        public Result(int[] lengthsBytes, long[] rttNs, int recorded, long issuedInWindow, long failed, long skipped,
                double windowSeconds, String firstError, Map<String, Long> failedInWindowByKind, long answeredInWindow) {
            this(lengthsBytes, rttNs, recorded, issuedInWindow, failed, skipped, windowSeconds, firstError,
                    failedInWindowByKind, answeredInWindow, 0, 0);
        }

        /** Without failures by kind, answers and bytes in the window. */
        public Result(int[] lengthsBytes, long[] rttNs, int recorded, long issuedInWindow, long failed, long skipped,
                double windowSeconds, String firstError) {
            this(lengthsBytes, rttNs, recorded, issuedInWindow, failed, skipped, windowSeconds, firstError, Map.of(), 0);
        }

        /** Recorded calls per second over the window. */
        public double achievedPerSecond() {
            return recorded / windowSeconds;
        }
    }

    /** Request lengths drawn from {@code workload}, for {@code lengths}: a uniform int mapped to [0, 1). */
    public static IntUnaryOperator lengthsOf(Workload workload) {
        return u -> workload.sample((u & 0x7fff_ffff) / (double) (1L << 31));
    }

    /** The target index that sends each call to one of the client's targets, drawn uniformly. */
    public static final int ANY_TARGET = -1;

    private final EchoClient client;
    private final int target;
    private final IntUnaryOperator lengths;
    private final double ratePerSecond;
    private final int maxOutstanding;
    private final long callTimeoutMs;
    private final long seed;
    private IntFunction<byte[]> requestOfLength = EchoProtocol::echoRequest;
    private boolean deadlines;

    /**
     * @param target the client's target index the calls go to, or {@link #ANY_TARGET}
     * @param lengths maps a uniform random int (any value) to a request length in bytes
     * @param ratePerSecond mean arrival rate, > 0
     * @param maxOutstanding cap on calls in flight, >= 1
     */
    public OpenLoop(EchoClient client, int target, IntUnaryOperator lengths, double ratePerSecond, int maxOutstanding,
            long callTimeoutMs, long seed) {
        if (!(ratePerSecond > 0)) {
            throw new IllegalArgumentException("ratePerSecond must be > 0, was " + ratePerSecond);
        }
        this.client = client;
        this.target = target;
        this.lengths = lengths;
        this.ratePerSecond = ratePerSecond;
        this.maxOutstanding = maxOutstanding;
        this.callTimeoutMs = callTimeoutMs;
        this.seed = seed;
    }

    /**
     * Sends {@code requests.apply(length)} instead of an echo of that length (S11: a spin request);
     * the response must be as long as the request.
     */
    public OpenLoop requests(IntFunction<byte[]> requests) {
        this.requestOfLength = requests;
        return this;
    }

    /**
     * Gives every call the system's own deadline of the call timeout ({@link EchoClient#call(int,
     * byte[], long)}), as S11 does; the loop's own timer then waits a quarter second longer, so
     * that the system's deadline, not the loop's, ends a late call.
     */
    public OpenLoop withDeadlines() {
        this.deadlines = true;
        return this;
    }

    /** Runs warm-up then the window on the calling thread, then waits up to {@code drainMs} for calls in flight. */
    public Result run(long warmupMs, long measureMs, long drainMs) {
        return run(warmupMs, measureMs, drainMs, () -> {}, () -> {});
    }

    /**
     * As {@link #run(long, long, long)}, calling {@code atWindowStart} and {@code atWindowEnd} on the
     * calling thread at the window's ends (before the calls in flight drain), e.g. to sample CPU use.
     */
    public Result run(long warmupMs, long measureMs, long drainMs, Runnable atWindowStart, Runnable atWindowEnd) {
        int capacity = (int) Math.min(20_000_000, ratePerSecond * measureMs / 1000.0 * 1.5 + 1000);
        int[] lengthsBytes = new int[capacity];
        long[] rttNs = new long[capacity];
        int[] recorded = {0};
        AtomicLong inFlight = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        AtomicReference<String> firstError = new AtomicReference<>();
        AtomicLongArray failedInWindowByKind = new AtomicLongArray(FailureKind.values().length);
        AtomicLong answeredInWindow = new AtomicLong();
        AtomicLong answeredBytesInWindow = new AtomicLong();
        long issuedBytesInWindow = 0;
        long loopTimeoutMs = deadlines ? callTimeoutMs + 250 : callTimeoutMs;
        long issuedInWindow = 0;
        long skipped = 0;
        SplittableRandom random = new SplittableRandom(seed);
        double meanGapNs = 1e9 / ratePerSecond;
        long windowStart = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(warmupMs);
        long windowEnd = windowStart + TimeUnit.MILLISECONDS.toNanos(measureMs);
        double next = System.nanoTime();
        boolean windowStarted = false;
        while (true) {
            next += -Math.log(1 - random.nextDouble()) * meanGapNs;
            if (!windowStarted && (long) next >= windowStart) {
                parkUntil(windowStart);
                atWindowStart.run();
                windowStarted = true;
            }
            if ((long) next >= windowEnd) {
                parkUntil(windowEnd);
                break;
            }
            long wait = (long) next - System.nanoTime();
            if (wait > 20_000) {
                LockSupport.parkNanos(wait);
            }
            long now = System.nanoTime();
            if (now >= windowEnd) {
                break;
            }
            boolean inWindow = now >= windowStart;
            if (inFlight.get() >= maxOutstanding) {
                if (inWindow) {
                    skipped++;
                }
                continue;
            }
            int length = Math.max(EchoProtocol.HEADER_BYTES, lengths.applyAsInt(random.nextInt()));
            int to = target == ANY_TARGET ? random.nextInt(client.targets()) : target;
            byte[] request = requestOfLength.apply(length);
            int expectedLength = EchoProtocol.expectedResponseBytes(request);
            if (inWindow) {
                issuedInWindow++;
                issuedBytesInWindow += length;
            }
            inFlight.incrementAndGet();
            long startNs = System.nanoTime();
            CompletableFuture<byte[]> call;
            try {
                call = deadlines ? client.call(to, request, callTimeoutMs) : client.call(to, request);
            } catch (RuntimeException e) {
                call = CompletableFuture.failedFuture(e);
            }
            call.orTimeout(loopTimeoutMs, TimeUnit.MILLISECONDS).whenComplete((response, error) -> {
                long endNs = System.nanoTime();
                inFlight.decrementAndGet();
                if (error == null && response.length != expectedLength) {
                    error = new IllegalStateException("response of " + response.length + " bytes, expected " + expectedLength);
                }
                if (error != null) {
                    failed.incrementAndGet();
                    if (inWindow) {
                        failedInWindowByKind.incrementAndGet(FailureKind.of(error).ordinal());
                    }
                    firstError.compareAndSet(null, ClosedLoop.describe(error));
                    return;
                }
                if (endNs >= windowStart && endNs < windowEnd) {
                    answeredInWindow.incrementAndGet();
                    answeredBytesInWindow.addAndGet(response.length);
                }
                if (inWindow) {
                    synchronized (recorded) {
                        int i = recorded[0];
                        if (i < capacity) {
                            lengthsBytes[i] = length;
                            rttNs[i] = endNs - startNs;
                            recorded[0] = i + 1;
                        }
                    }
                }
            });
        }
        atWindowEnd.run();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(drainMs);
        while (inFlight.get() > 0 && System.nanoTime() < deadline) {
            ClosedLoop.sleepMs(2);
        }
        synchronized (recorded) {
            int count = recorded[0];
            Map<String, Long> byKind = new LinkedHashMap<>();
            for (FailureKind kind : FailureKind.values()) {
                byKind.put(kind.id(), failedInWindowByKind.get(kind.ordinal()));
            }
            long offeredBytes = issuedBytesInWindow
                    + (issuedInWindow == 0 ? 0 : Math.round(skipped * (double) issuedBytesInWindow / issuedInWindow));
            return new Result(Arrays.copyOf(lengthsBytes, count), Arrays.copyOf(rttNs, count), count, issuedInWindow,
                    failed.get(), skipped, measureMs / 1000.0, firstError.get(), byKind, answeredInWindow.get(),
                    answeredBytesInWindow.get(), offeredBytes);
        }
    }

    private static void parkUntil(long deadlineNs) {
        for (long left = deadlineNs - System.nanoTime(); left > 0; left = deadlineNs - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }
}
