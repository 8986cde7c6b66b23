package io.homa.grpc.internal;

import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The items one side of a gRPC call sends on a stream of the RPC layer (a client's request
 * messages, a server's response frames), as a {@link Publisher} for one subscriber: the RPC layer.
 * The application offers items whenever it likes ({@link #offer}); they leave as the RPC layer
 * requests them (its demand is the peer's), and wait here otherwise, as grpc-java buffers what is
 * sent while not ready. {@link #isReady()} says whether the demand covers what was offered; the
 * {@code onReady} callback runs when it starts to.
 */
public final class Outbound implements Publisher<byte[]>, Subscription {
    private final Queue<byte[]> queue = new ConcurrentLinkedQueue<>();
    private final AtomicLong requested = new AtomicLong();
    private final AtomicInteger wip = new AtomicInteger();
    private final AtomicBoolean subscribed = new AtomicBoolean();
    private final AtomicBoolean cancelled = new AtomicBoolean();
    /**
     * Items demanded and not offered yet (negative: offered ahead of the demand; saturates at
     * {@code Long.MAX_VALUE}, an unbounded demand): ready while positive. One counter, so that a
     * request and an offer racing each other see one order: the request that takes it from 0 or
     * less to more than 0 is the one that runs {@code onReady}, and an application that found it
     * at 0 or less after its offer is told.
     */
    private final AtomicLong credit = new AtomicLong();
    private final Runnable onReady;
    private final Runnable onCancel;
    private volatile @Nullable Subscriber<? super byte[]> subscriber;
    private volatile boolean done;
    private boolean completed;

    /**
     * @param onReady runs (on the requesting thread) when demand comes to cover what was offered
     * @param onCancel runs once if the subscriber cancels
     */
    public Outbound(Runnable onReady, Runnable onCancel) {
        this.onReady = Objects.requireNonNull(onReady, "onReady must not be null");
        this.onCancel = Objects.requireNonNull(onCancel, "onCancel must not be null");
    }

    @Override
    public void subscribe(Subscriber<? super byte[]> s) {
        if (!subscribed.compareAndSet(false, true)) {
            s.onSubscribe(new Subscription() {
                @Override
                public void request(long n) {
                }

                @Override
                public void cancel() {
                }
            });
            s.onError(new IllegalStateException("a homa-grpc stream has one subscriber"));
            return;
        }
        subscriber = s;
        s.onSubscribe(this);
        drain();
    }

    @Override
    public void request(long n) {
        if (n <= 0) {
            return;
        }
        long before = credit.getAndAccumulate(n, Outbound::saturatingAdd);
        requested.getAndAccumulate(n, Outbound::saturatingAdd);
        drain();
        if (before <= 0 && saturatingAdd(before, n) > 0 && !done) {
            onReady.run();
        }
    }

    @Override
    public void cancel() {
        if (cancelled.compareAndSet(false, true)) {
            queue.clear();
            onCancel.run();
        }
    }

    /** Sends {@code item} when demand allows; dropped once cancelled or completed. */
    public void offer(byte[] item) {
        if (cancelled.get() || done) {
            return;
        }
        credit.getAndUpdate(c -> c == Long.MAX_VALUE ? c : c - 1);
        queue.add(item);
        drain();
    }

    /** Completes after the items offered so far. */
    public void complete() {
        done = true;
        drain();
    }

    /** Whether the peer's demand covers the items offered so far (and the stream is open). */
    public boolean isReady() {
        return !done && !cancelled.get() && credit.get() > 0;
    }

    /** Whether the subscriber cancelled. */
    public boolean isCancelled() {
        return cancelled.get();
    }

    private void drain() {
        if (wip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            Subscriber<? super byte[]> s = subscriber;
            if (s != null && !cancelled.get()) {
                while (requested.get() > 0) {
                    byte[] item = queue.poll();
                    if (item == null) {
                        break;
                    }
                    if (requested.get() != Long.MAX_VALUE) {
                        requested.decrementAndGet();
                    }
                    s.onNext(item);
                }
                if (done && queue.isEmpty() && !completed) {
                    completed = true;
                    s.onComplete();
                }
            }
            missed = wip.addAndGet(-missed);
        } while (missed != 0);
    }

    /** {@code a + b} for {@code b > 0}, at most {@code Long.MAX_VALUE} ({@code a} may be negative). */
    private static long saturatingAdd(long a, long b) {
        return a > Long.MAX_VALUE - b ? Long.MAX_VALUE : a + b;
    }
}
