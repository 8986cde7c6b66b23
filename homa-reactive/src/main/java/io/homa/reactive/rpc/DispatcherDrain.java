package io.homa.reactive.rpc;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A dispatcher's graceful shutdown: the count of calls in flight (requests being handled plus
 * open streams), whether the dispatcher is shutting down, and the abort that ends the calls still
 * running when the grace period is over.
 */
final class DispatcherDrain {
    private static final Logger log = LoggerFactory.getLogger(RpcDispatcher.class);

    /** What a call in progress gets when the dispatcher aborts: one per dispatcher class, a new exception per call. */
    private static final Mono<Object> ABORTED = Mono.error(ServerErrors::unavailable);

    private final AtomicInteger inFlight = new AtomicInteger();
    private final Sinks.Empty<Void> drained = Sinks.empty();
    private final Sinks.One<Boolean> aborted = Sinks.one();
    private volatile boolean shuttingDown;

    int inFlight() {
        return inFlight.get();
    }

    boolean isShuttingDown() {
        return shuttingDown;
    }

    void enter() {
        inFlight.incrementAndGet();
    }

    void exit() {
        if (inFlight.decrementAndGet() == 0 && shuttingDown) {
            drained.tryEmitEmpty();
        }
    }

    /**
     * Shuts down once subscribed: completes when no call is left, or when {@code gracePeriod}
     * ends, after aborting the rest ({@link #aborted}) and running {@code abortOthers}.
     */
    Mono<Void> shutdown(Duration gracePeriod, Runnable abortOthers) {
        return Mono.defer(() -> {
            shuttingDown = true;
            if (inFlight.get() == 0) {
                drained.tryEmitEmpty();
            }
            Mono<Void> abort = Mono.fromRunnable(() -> abortAll(abortOthers));
            return gracePeriod.isZero() ? abort : drained.asMono().timeout(gracePeriod, abort);
        });
    }

    private void abortAll(Runnable abortOthers) {
        if (inFlight.get() > 0) {
            log.info("Homa dispatcher shutting down: cancelling {} calls still in flight", inFlight.get());
        }
        aborted.tryEmitValue(Boolean.TRUE);
        abortOthers.run();
    }

    /** {@code call}, unless the dispatcher aborts first: it then fails UNAVAILABLE. */
    <T> Mono<T> untilAborted(Mono<T> call) {
        return call.timeout(aborted.asMono(), abortedCall());
    }

    @SuppressWarnings("unchecked") // an error Mono emits no value of any type
    private static <T> Mono<T> abortedCall() {
        return (Mono<T>) ABORTED;
    }
}
