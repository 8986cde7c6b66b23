package io.homa.grpc.internal;

import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks one at a time, in the order given, on a delegate executor: a call's listener
 * callbacks go through one of these so that they never run concurrently and keep their order,
 * whichever threads (event loops, timers, the application) produce them.
 */
public final class SerializingExecutor implements Executor {
    private static final Logger log = LoggerFactory.getLogger(SerializingExecutor.class);

    private final Executor delegate;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean running = new AtomicBoolean();

    /** Runs on {@code delegate} (a direct executor runs tasks on the thread that gives them, still one at a time). */
    public SerializingExecutor(Executor delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate must not be null");
    }

    @Override
    public void execute(Runnable task) {
        tasks.add(Objects.requireNonNull(task, "task must not be null"));
        schedule();
    }

    private void schedule() {
        if (running.compareAndSet(false, true)) {
            try {
                delegate.execute(this::drain);
            } catch (RejectedExecutionException e) {
                // The application's executor is shut down: run here rather than lose a callback
                // (a lost onClose would leave the caller waiting for ever).
                drain();
            }
        }
    }

    private void drain() {
        try {
            Runnable task;
            while ((task = tasks.poll()) != null) {
                try {
                    task.run();
                } catch (RuntimeException | Error e) {
                    log.warn("A gRPC callback threw; the next ones still run", e);
                }
            }
        } finally {
            running.set(false);
        }
        if (!tasks.isEmpty()) {
            schedule();
        }
    }
}
