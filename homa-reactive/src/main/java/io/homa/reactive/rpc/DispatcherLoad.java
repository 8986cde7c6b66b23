package io.homa.reactive.rpc;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * How full a dispatcher is ({@link RpcDispatcher#overloaded()}): the calls in service (unary calls
 * and stream opens from the moment they are dispatched until their response, whether they run on
 * the event loop, wait for the scheduler or run there), those of them that are unary calls of
 * blocking methods (they hold or wait for a thread of the scheduler), and the age of the oldest
 * work waiting for a thread of the scheduler. Stream batches (next, push, cancel) are not counted: a batch waits for
 * the stream's items, which costs the server nothing, and an open stream may keep several waiting.
 * Thread-safe.
 */
final class DispatcherLoad {
    private final AtomicInteger callsInService = new AtomicInteger();
    private final AtomicInteger blockingCalls = new AtomicInteger();
    /** Work handed to the scheduler, in the order it was, until it starts (pruned from the head). */
    private final ConcurrentLinkedQueue<Waiting> waiting = new ConcurrentLinkedQueue<>();
    private volatile int maxCallsInService;
    private volatile int maxBlockingCalls;
    private volatile long maxQueueDelayNs;

    DispatcherLoad(int maxCallsInService, int maxBlockingCalls, long maxQueueDelayNs) {
        this.maxCallsInService = maxCallsInService;
        this.maxBlockingCalls = maxBlockingCalls;
        this.maxQueueDelayNs = maxQueueDelayNs;
    }

    void maxBlockingCalls(int calls) {
        this.maxBlockingCalls = calls;
    }

    int maxBlockingCalls() {
        return maxBlockingCalls;
    }

    int blockingCalls() {
        return blockingCalls.get();
    }

    void maxCallsInService(int calls) {
        this.maxCallsInService = calls;
    }

    int maxCallsInService() {
        return maxCallsInService;
    }

    void maxQueueDelayNs(long delayNs) {
        this.maxQueueDelayNs = delayNs;
    }

    long maxQueueDelayNs() {
        return maxQueueDelayNs;
    }

    int callsInService() {
        return callsInService.get();
    }

    /**
     * Whether a new call would find the dispatcher full: {@code maxCallsInService} calls in service
     * already, or {@code maxBlockingCalls} blocking ones, or work that has waited for a thread
     * longer than {@code maxQueueDelayNs} (0: no bound on the wait).
     *
     * @param clock read only when work waits
     */
    boolean overloaded(io.homa.reactive.NanoClock clock) {
        if (callsInService.get() >= maxCallsInService || blockingCalls.get() >= maxBlockingCalls) {
            return true;
        }
        long maxDelayNs = maxQueueDelayNs;
        if (maxDelayNs <= 0) {
            return false;
        }
        Waiting oldest = oldestWaiting();
        return oldest != null && clock.nanoTime() - oldest.sinceNs > maxDelayNs;
    }

    /** {@code call} counted in service from its subscription to its end (or cancellation). */
    <T> Mono<T> inService(Mono<T> call) {
        return counted(callsInService, call);
    }

    /** {@code call}, a unary call of a blocking method, counted as such from its subscription to its end. */
    <T> Mono<T> blocking(Mono<T> call) {
        return counted(blockingCalls, call);
    }

    private static <T> Mono<T> counted(AtomicInteger counter, Mono<T> call) {
        return Mono.defer(() -> {
            counter.incrementAndGet();
            return call;
        }).doFinally(signal -> counter.decrementAndGet());
    }

    /**
     * {@code work} subscribed on {@code scheduler}, its wait for a thread measured: from its
     * subscription until it starts, or ends without starting (the scheduler rejected it, or it
     * was cancelled).
     */
    <T> Mono<T> onScheduler(Mono<T> work, Scheduler scheduler, io.homa.reactive.NanoClock clock) {
        return Mono.defer(() -> {
            Waiting entry = new Waiting(clock.nanoTime());
            oldestWaiting(); // prunes what started, so the queue stays as short as the wait
            waiting.add(entry);
            return Mono.defer(() -> {
                        entry.started = true;
                        return work;
                    })
                    .subscribeOn(scheduler)
                    .doFinally(signal -> entry.started = true);
        });
    }

    /**
     * The oldest work not started yet, dropping started work from the head. Work starts roughly in
     * the order it was queued, so what is left behind the head is little.
     */
    private @Nullable Waiting oldestWaiting() {
        Waiting head;
        while ((head = waiting.peek()) != null && head.started) {
            waiting.remove(head);
        }
        return head;
    }

    private static final class Waiting {
        final long sinceNs;
        volatile boolean started;

        Waiting(long sinceNs) {
            this.sinceNs = sinceNs;
        }
    }
}
