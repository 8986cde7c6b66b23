package io.homa.grpc.internal;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads homa-grpc shares when the application names none: a cached pool for listener
 * callbacks and service methods (grpc-java's default, since gRPC handlers may block), and one
 * timer thread for deadlines. Daemon threads, created on first use, never shut down.
 */
public final class GrpcThreads {
    private GrpcThreads() {
    }

    /** The default executor of channels and servers. */
    public static ExecutorService defaultExecutor() {
        return Holder.EXECUTOR;
    }

    /** The timer of deadlines ({@code Context.withDeadline} needs a {@code ScheduledExecutorService}). */
    public static ScheduledExecutorService timer() {
        return Holder.TIMER;
    }

    private static ThreadFactory daemon(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, prefix + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    private static final class Holder {
        static final ExecutorService EXECUTOR = Executors.newCachedThreadPool(daemon("homa-grpc-"));
        static final ScheduledExecutorService TIMER = timer();

        private static ScheduledExecutorService timer() {
            ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, daemon("homa-grpc-timer-"));
            // Most deadlines are cancelled (the call ends first): do not keep them queued.
            timer.setRemoveOnCancelPolicy(true);
            return timer;
        }
    }
}
