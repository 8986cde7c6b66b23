package io.homa.bench.scenario;

import io.homa.bench.systems.EchoClient;
import io.homa.bench.systems.EchoProtocol;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.HdrHistogram.Histogram;

/**
 * A fixed number of calls outstanding: each completion issues the next call at once (from the
 * completing thread, so no extra thread hop). Calls that complete inside the measurement window
 * count for throughput and are recorded in the latency histogram (the warm-up before the window
 * brings the loop to steady state, so a call that started just before the window is as typical
 * as any). A failed call is counted and retried after 1 ms.
 */
public final class ClosedLoop {
    private static final Executor RETRY_DELAY = CompletableFuture.delayedExecutor(1, TimeUnit.MILLISECONDS);

    private final EchoClient client;
    private final int target;
    private final Supplier<byte[]> requests;
    private final int outstanding;
    private final long callTimeoutMs;
    private final Histogram latency = LatencyStats.newHistogram();
    private final AtomicLong completedInWindow = new AtomicLong();
    private final AtomicLong bytesInWindow = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong inFlight = new AtomicLong();
    private final AtomicReference<String> firstError = new AtomicReference<>();
    private volatile boolean stopped;
    private volatile long windowStartNs = Long.MAX_VALUE;
    private volatile long windowEndNs = Long.MAX_VALUE;
    /** Which {@link #start} the calls in flight belong to: a call of an earlier one neither counts nor calls again. */
    private volatile int generation;

    /**
     * @param client the system's client
     * @param target server index
     * @param requests supplies each request (shared templates)
     * @param outstanding calls in flight, >= 1
     * @param callTimeoutMs a call not answered in this time counts as failed
     */
    public ClosedLoop(EchoClient client, int target, Supplier<byte[]> requests, int outstanding, long callTimeoutMs) {
        if (outstanding < 1) {
            throw new IllegalArgumentException("outstanding must be >= 1, was " + outstanding);
        }
        this.client = client;
        this.target = target;
        this.requests = requests;
        this.outstanding = outstanding;
        this.callTimeoutMs = callTimeoutMs;
    }

    /**
     * Starts the calls; measurement happens in [startNs, endNs) of {@link System#nanoTime()}. After
     * {@link #stop}, a loop may start again with a later window: its figures add up over windows.
     */
    public void start(long startNs, long endNs) {
        windowStartNs = startNs;
        windowEndNs = endNs;
        int started = generation + 1; // only the runner's thread starts and stops a loop
        generation = started;
        stopped = false;
        for (int i = 0; i < outstanding; i++) {
            inFlight.incrementAndGet();
            issue(started);
        }
    }

    private void issue(int started) {
        if (stopped || started != generation) {
            inFlight.decrementAndGet();
            return;
        }
        byte[] request = requests.get();
        int expected = EchoProtocol.expectedResponseBytes(request);
        long startNs = System.nanoTime();
        CompletableFuture<byte[]> call;
        try {
            call = client.call(target, request);
        } catch (RuntimeException e) {
            call = CompletableFuture.failedFuture(e);
        }
        call.orTimeout(callTimeoutMs, TimeUnit.MILLISECONDS).whenComplete((response, error) -> {
            long endNs = System.nanoTime();
            if (error == null && response.length != expected) {
                error = new IllegalStateException("response of " + response.length + " bytes, expected " + expected);
            }
            if (error != null) {
                failed.incrementAndGet();
                firstError.compareAndSet(null, describe(error));
                CompletableFuture.runAsync(() -> issue(started), RETRY_DELAY);
                return;
            }
            if (endNs >= windowStartNs && endNs < windowEndNs && started == generation) {
                completedInWindow.incrementAndGet();
                bytesInWindow.addAndGet(response.length);
                synchronized (latency) {
                    LatencyStats.record(latency, endNs - startNs);
                }
            }
            issue(started);
        });
    }

    static String describe(Throwable error) {
        Throwable cause = error;
        while ((cause instanceof java.util.concurrent.CompletionException
                || cause instanceof java.util.concurrent.ExecutionException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause.getClass().getSimpleName() + ": " + cause.getMessage();
    }

    /** Stops issuing and waits up to {@code timeoutMs} for calls in flight. */
    public void stop(long timeoutMs) {
        stopped = true;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (inFlight.get() > 0 && System.nanoTime() < deadline) {
            sleepMs(2);
        }
    }

    /** Runs loops together: warm-up, then the measurement window, then stop. */
    public static void runTogether(long warmupMs, long measureMs, long drainMs, ClosedLoop... loops) {
        runTogether(warmupMs, measureMs, drainMs, () -> {}, () -> {}, loops);
    }

    /** As {@link #runTogether(long, long, long, ClosedLoop...)}, calling {@code atWindowStart} and {@code atWindowEnd} at the window's ends. */
    public static void runTogether(long warmupMs, long measureMs, long drainMs, Runnable atWindowStart, Runnable atWindowEnd,
            ClosedLoop... loops) {
        long startNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(warmupMs);
        long endNs = startNs + TimeUnit.MILLISECONDS.toNanos(measureMs);
        for (ClosedLoop loop : loops) {
            loop.start(startNs, endNs);
        }
        sleepUntil(startNs);
        atWindowStart.run();
        sleepUntil(endNs);
        atWindowEnd.run();
        for (ClosedLoop loop : loops) {
            loop.stop(drainMs);
        }
    }

    static void sleepUntil(long deadlineNs) {
        for (long left = deadlineNs - System.nanoTime(); left > 0; left = deadlineNs - System.nanoTime()) {
            sleepMs(Math.max(1, Math.min(50, left / 1_000_000)));
        }
    }

    static void sleepMs(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** The latency histogram of the window (nanoseconds); a copy. */
    public Histogram latency() {
        synchronized (latency) {
            return latency.copy();
        }
    }

    public long completedInWindow() {
        return completedInWindow.get();
    }

    /** Response bytes received in the window. */
    public long bytesInWindow() {
        return bytesInWindow.get();
    }

    public long failed() {
        return failed.get();
    }

    public String firstError() {
        return firstError.get();
    }

    /** Calls still in flight (after {@link #stop}: the ones that did not drain). */
    public long inFlight() {
        return inFlight.get();
    }
}
