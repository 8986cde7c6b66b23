package io.homa.bench.systems;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Where every system runs S11's CPU-bound handler ({@link EchoProtocol#SPIN}): a fixed pool of one
 * thread per processor of the server process (one, for a server pinned to one CPU), as Reactor
 * sizes its scheduler for CPU-bound work ({@code Schedulers.parallel()}) and as gRPC-java advises
 * for a server's executor. More threads than cores would only share the cores: every call in
 * service would take longer however few of them wait. Its queue has no bound (a fixed pool's).
 */
final class CpuPool {
    /** The pool's threads: the processors this process may use. */
    static final int THREADS = Runtime.getRuntime().availableProcessors();

    private CpuPool() {}

    /** The pool, for executors. */
    static ExecutorService executor() {
        return Holder.EXECUTOR;
    }

    /** The pool, for {@code subscribeOn}. */
    static Scheduler scheduler() {
        return Holder.SCHEDULER;
    }

    /** Created on first use: only a process that serves S11 starts the threads. */
    private static final class Holder {
        static final ExecutorService EXECUTOR = Executors.newFixedThreadPool(THREADS, r -> {
            Thread thread = new Thread(r, "cpu-pool");
            thread.setDaemon(true);
            return thread;
        });
        static final Scheduler SCHEDULER = Schedulers.fromExecutorService(EXECUTOR, "cpu-pool");
    }
}
