package io.homa.reactive.internal.transport;

import io.homa.reactive.NanoClock;
import io.netty.channel.EventLoop;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A task the event loop schedules for itself every {@value #INTERVAL_NS} ns, measuring how late it
 * runs: the time anything queued on the loop waited behind work that held it
 * ({@link io.homa.reactive.HomaTransport#eventLoopLagNs()}). Each run also does {@code onRun}, the
 * loop's slow housekeeping. Runs on the event loop; the lags may be read from any thread.
 */
final class LagProbe {
    /** How often the event loop measures its own lag. */
    static final long INTERVAL_NS = 100_000_000L;

    private final EventLoop eventLoop;
    private final NanoClock clock;
    private final BooleanSupplier closed;
    private final Runnable onRun;
    private final Runnable task = this::run;
    private long dueNs;
    private volatile long lagNs;
    private volatile long maxLagNs;

    /**
     * @param closed whether the transport is closed: the probe stops
     * @param onRun done at each run, before the lag is measured
     */
    LagProbe(EventLoop eventLoop, NanoClock clock, BooleanSupplier closed, Runnable onRun) {
        this.eventLoop = eventLoop;
        this.clock = clock;
        this.closed = closed;
        this.onRun = onRun;
    }

    /** Schedules the next run. */
    void schedule() {
        dueNs = clock.nanoTime() + INTERVAL_NS;
        eventLoop.schedule(task, INTERVAL_NS, TimeUnit.NANOSECONDS);
    }

    private void run() {
        if (closed.getAsBoolean()) {
            return;
        }
        onRun.run();
        long lag = Math.max(0, clock.nanoTime() - dueNs);
        lagNs = lag;
        if (lag > maxLagNs) {
            maxLagNs = lag;
        }
        schedule();
    }

    /** How late the most recent run was, ns. */
    long lagNs() {
        return lagNs;
    }

    /** The largest {@link #lagNs()} seen. */
    long maxLagNs() {
        return maxLagNs;
    }
}
