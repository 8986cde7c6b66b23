package io.homa.reactive.internal.transport;

import io.homa.engine.HomaEngine;
import io.homa.reactive.NanoClock;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's single timer on the event loop: armed at {@link HomaEngine#nextTimeoutNs()} after
 * each drive, it calls {@link HomaEngine#onTimeout} and drives again. A timer that runs more than
 * {@value #LATE_TIMER_NS} ns late (this process was paused) waits for one pass of the loop's I/O
 * first, so that what arrived during the pause is read before the engine judges any silence.
 * Confined to the event loop, except {@link #lateTimers()}.
 */
final class EngineTimer {
    private static final Logger log = LoggerFactory.getLogger(EngineTimer.class);

    /**
     * A timer that runs later than this after its deadline waits for one pass of the loop's I/O
     * first: longer than a busy loop's lateness, far shorter than the engine's smallest
     * retransmission timeout.
     */
    static final long LATE_TIMER_NS = 2_000_000;

    private final EventLoop eventLoop;
    private final NanoClock clock;
    private final HomaEngine engine;
    private final InetSocketAddress localAddress;
    private final BooleanSupplier closed;
    private final Runnable drive;
    private final Runnable task = this::run;
    private @Nullable ScheduledFuture<?> timer;
    private long deadlineNs;
    /** Whether the pending timer is a late one put behind a pass of the loop's I/O. */
    private boolean deferred;
    /** Timers that ran late and waited for a pass of the loop's I/O; written on the loop only. */
    private volatile long lateTimers;

    /**
     * @param closed whether the transport is closed: the timer does nothing
     * @param drive drives the engine after its timeout
     */
    EngineTimer(EventLoop eventLoop, NanoClock clock, HomaEngine engine, InetSocketAddress localAddress,
            BooleanSupplier closed, Runnable drive) {
        this.eventLoop = eventLoop;
        this.clock = clock;
        this.engine = engine;
        this.localAddress = localAddress;
        this.closed = closed;
        this.drive = drive;
    }

    /** Timers that ran more than {@link #LATE_TIMER_NS} after their deadline and waited for a pass of the loop's I/O. */
    long lateTimers() {
        return lateTimers;
    }

    /** Arms the timer at the engine's next deadline, unless one fires no later. */
    void arm() {
        if (closed.getAsBoolean()) {
            return;
        }
        long nextNs = engine.nextTimeoutNs();
        if (nextNs == Long.MAX_VALUE) {
            return;
        }
        ScheduledFuture<?> pending = timer;
        if (pending != null) {
            if (deadlineNs - nextNs <= 0) {
                return; // the pending timer fires no later than needed
            }
            pending.cancel(false);
        }
        deadlineNs = nextNs;
        long delayNs = Math.max(0, nextNs - clock.nanoTime());
        timer = eventLoop.schedule(task, delayNs, TimeUnit.NANOSECONDS);
    }

    /** Cancels the pending timer (on close). */
    void cancel() {
        ScheduledFuture<?> pending = timer;
        if (pending != null) {
            pending.cancel(false);
            timer = null;
        }
    }

    private void run() {
        timer = null;
        if (closed.getAsBoolean()) {
            return;
        }
        long nowNs = clock.nanoTime();
        if (!deferred && nowNs - deadlineNs > LATE_TIMER_NS) {
            // This process was paused past the deadline (GC, a descheduled VM): the loop may have
            // left epoll_wait, on its timeout, before datagrams that came during the pause, and the
            // engine would take their absence for silence (RESENDs, retransmissions of bytes that
            // are here). Once, it waits for the next pass of the loop, whose I/O comes first.
            deferred = true;
            timer = eventLoop.schedule(task, 0, TimeUnit.NANOSECONDS);
            lateTimers = lateTimers + 1;
            return;
        }
        deferred = false;
        try {
            engine.onTimeout(nowNs);
        } catch (RuntimeException e) {
            log.error("Homa engine on {} failed in onTimeout", localAddress, e);
        }
        drive.run();
    }
}
