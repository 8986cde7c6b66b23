package io.homa.reactive.internal.transport;

import io.homa.engine.HomaEngine;
import io.homa.engine.HomaEvent;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A graceful shutdown's first step ({@link io.homa.reactive.HomaTransport#drain}): from its start
 * every request that arrives complete is refused, and it ends when the engine holds no server RPC,
 * has nothing left to send, and no request was refused for {@link #drainQuietNs}; or when its
 * grace period is over; or when the transport closes. State confined to the event loop, except
 * {@link #isDraining()} and {@link #refusedRequests()}.
 */
final class Drain {
    private static final Logger log = LoggerFactory.getLogger(Drain.class);

    /** While draining, how often the loop looks whether the drain is done. */
    static final long DRAIN_CHECK_NS = 5_000_000L;

    private final EngineDriver driver;
    private final long drainQuietNs;
    private final Sinks.Empty<Void> drained = Sinks.empty();
    private final AtomicLong refusedRequests = new AtomicLong();
    private volatile boolean draining;

    // ---- confined to the event loop ----
    private final Runnable drainCheckTask = this::runDrainCheck;
    private boolean drainStarted;
    private boolean drainEnded;
    private long drainDeadlineNs;
    /** The drain's start or its latest refusal: the drain is quiet this long after it. */
    private long drainQuietSinceNs;

    /** @param resendIntervalNs the engine's resend interval ({@link #drainQuietNs}) */
    Drain(EngineDriver driver, long resendIntervalNs) {
        this.driver = driver;
        this.drainQuietNs = drainQuietNs(resendIntervalNs);
    }

    /**
     * How long a drain waits, after the last refused request, for stragglers: four times
     * {@code resendIntervalNs}, at least 250 ms. Requests a client started before it heard of the
     * shutdown, but whose packets it sends only after a pause (a GC, a descheduled VM), arrive
     * late, and a shorter wait lost such a request to the closed socket (its call timed out
     * instead of failing with the shutdown status).
     *
     * @param resendIntervalNs the engine's resend interval, ns
     * @return the quiet period, ns
     */
    static long drainQuietNs(long resendIntervalNs) {
        return Math.max(250_000_000L, 4 * resendIntervalNs);
    }

    /** Starts draining (or moves its end earlier); the {@code Mono} completes when drained. Lazy. */
    Mono<Void> drain(Duration gracePeriod) {
        return Mono.defer(() -> {
            draining = true;
            if (!driver.runOnLoop(() -> startDrain(gracePeriod))) {
                drained.tryEmitEmpty(); // the loop is gone: so is the socket
            }
            return drained.asMono();
        });
    }

    boolean isDraining() {
        return draining;
    }

    long refusedRequests() {
        return refusedRequests.get();
    }

    /**
     * Refuses a request that arrived complete while draining: the engine forgets it (it never
     * runs) and tells its client at once ({@link HomaEngine#refuseRequest}). On the event loop.
     */
    void refuse(HomaEvent.RequestReceived event) {
        long nowNs = driver.clock().nanoTime();
        driver.engine().refuseRequest(nowNs, event.client(), event.rpcId());
        refusedRequests.incrementAndGet();
        drainQuietSinceNs = nowNs;
        log.debug("Homa transport on {} refused request {} from {}: shutting down", driver.localAddress(),
                event.rpcId(), event.client());
    }

    /** The transport closed: the drain is over. On the event loop. */
    void onClosed() {
        drainEnded = true;
        drained.tryEmitEmpty();
    }

    /** The first {@link #drain} (or a later one with an earlier end); on the event loop. */
    private void startDrain(Duration gracePeriod) {
        if (driver.isClosed()) {
            drained.tryEmitEmpty();
            return;
        }
        long nowNs = driver.clock().nanoTime();
        long deadlineNs = nowNs + saturatedNanos(gracePeriod);
        if (drainStarted) {
            if (deadlineNs - drainDeadlineNs < 0) {
                drainDeadlineNs = deadlineNs;
                runDrainCheck();
            }
            return;
        }
        drainStarted = true;
        drainDeadlineNs = deadlineNs;
        drainQuietSinceNs = nowNs;
        HomaEngine engine = driver.engine();
        log.debug("Homa transport on {} draining: new requests are refused, {} server RPC(s) held, grace period {}",
                driver.localAddress(), engine.activeServerRpcs(), gracePeriod);
        engine.deliverRequests(); // requests held until serving started come out now, and are refused
        engine.refuseFirstContacts();
        driver.requestDrive();
        runDrainCheck();
    }

    /** Ends the drain if it is done or its grace period is over, else looks again soon. On the event loop. */
    private void runDrainCheck() {
        if (drainEnded) {
            return;
        }
        if (driver.isClosed()) {
            drainEnded = true;
            drained.tryEmitEmpty();
            return;
        }
        long nowNs = driver.clock().nanoTime();
        HomaEngine engine = driver.engine();
        int held = engine.activeServerRpcs();
        boolean done = held == 0 && !engine.hasTransmit() && nowNs - drainQuietSinceNs >= drainQuietNs;
        if (done || nowNs - drainDeadlineNs >= 0) {
            drainEnded = true;
            if (!done) {
                log.info("Homa transport on {}: grace period over with {} server RPC(s) not yet acknowledged",
                        driver.localAddress(), held);
            }
            drained.tryEmitEmpty();
            return;
        }
        long untilDeadlineNs = drainDeadlineNs - nowNs;
        driver.eventLoop().schedule(drainCheckTask, Math.min(DRAIN_CHECK_NS, untilDeadlineNs), TimeUnit.NANOSECONDS);
    }

    private static long saturatedNanos(Duration duration) {
        try {
            return duration.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE / 4;
        }
    }
}
