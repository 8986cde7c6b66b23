package io.homa.reactive.internal.transport;

import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.NanoClock;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SelectStrategy;
import io.netty.channel.SelectStrategyFactory;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.IntSupplier;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.resources.LoopResources;

/**
 * Native epoll event loops that busy-poll before they sleep
 * ({@link HomaTransportConfig#busyPollNs()}): when a pass of the loop finds no I/O and no task, it
 * keeps calling the non-blocking {@code epoll_wait} for up to its poll budget, yielding the core
 * between calls ({@link Thread#yield()}, so a thread that wants the core gets it), and sleeps in
 * the blocking {@code epoll_wait} only when that time has passed with nothing to do.
 *
 * <p>Each loop polls only while its traffic makes that pay ({@link PollBudget}): while nearly all
 * of its recent idle spells (nine in ten at 50 µs) ended with work within {@code busyPollNs}, so
 * that a poll would have caught it. A loop whose traffic comes in quick succession (a round trip, a
 * burst) keeps polling and saves its wake-ups; one whose packets come at random, often further
 * apart than the poll window, sleeps at once instead of burning its core on polls that find
 * nothing, as DPDK's power-aware loops back off.
 * A task another thread submits meanwhile ends the poll at once (Netty writes its wake-up
 * eventfd only to a sleeping loop, so the poll watches the task queue itself); a scheduled task
 * that falls due during a poll runs at its end, at most {@code busyPollNs} late.
 *
 * <p>Linux Homa does the same in its receive path ({@code poll_usecs}, 50 µs): a wake-up costs
 * a context switch, and on a virtual machine an interrupt to another virtual CPU, tens of
 * microseconds on each side of a round trip.
 */
public final class BusyPollLoops implements LoopResources {
    /** {@code EpollIoHandler.newFactory(int, SelectStrategyFactory)}, or null where epoll does not load. */
    private static final @Nullable Method NEW_EPOLL_FACTORY = newEpollFactory();

    private final EventLoopGroup group;
    private final long busyPollNs;
    private final NanoClock clock = NanoClock.system();
    /** The NIO loop for a caller that asks for no native transport ({@link #onServer}), made on first use. */
    private @Nullable EventLoopGroup nioGroup;
    /** Polls that found work before the deadline (a sleep and a wake-up saved), over all loops. */
    private final LongAdder hits = new LongAdder();
    /** Polls started, over all loops. */
    private final LongAdder polls = new LongAdder();

    private final int threads;

    private BusyPollLoops(long busyPollNs, int threads, Method newEpollFactory) throws ReflectiveOperationException {
        this.busyPollNs = busyPollNs;
        SelectStrategyFactory strategies = () -> new LoopPoll(new PollBudget(busyPollNs))::strategy;
        IoHandlerFactory factory = (IoHandlerFactory) newEpollFactory.invoke(null, 0, strategies);
        this.threads = threads;
        this.group = new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory("homa-epoll", true), factory);
    }

    /** How long the loop polls before it sleeps, in nanoseconds. */
    long busyPollNs() {
        return busyPollNs;
    }

    /**
     * Loops that poll for {@code busyPollNs} before they sleep, or null where Netty's native epoll
     * transport is not available (NIO, macOS): then the transport takes ordinary loops.
     *
     * @param busyPollNs 1..{@link HomaTransportConfig#MAX_BUSY_POLL_NS}
     */
    public static @Nullable BusyPollLoops create(long busyPollNs) {
        return create(busyPollNs, 1);
    }

    /**
     * As {@link #create(long)}, with {@code threads} loops.
     *
     * @param threads 1..{@link HomaTransportConfig#MAX_LOOPS}
     */
    public static @Nullable BusyPollLoops create(long busyPollNs, int threads) {
        Method newEpollFactory = NEW_EPOLL_FACTORY;
        if (newEpollFactory == null) {
            return null;
        }
        try {
            return new BusyPollLoops(busyPollNs, threads, newEpollFactory);
        } catch (ReflectiveOperationException | LinkageError e) {
            return null;
        }
    }

    private static @Nullable Method newEpollFactory() {
        if (!UdpOffload.epollAvailable()) {
            return null;
        }
        try {
            return Class.forName("io.netty.channel.epoll.EpollIoHandler")
                    .getMethod("newFactory", int.class, SelectStrategyFactory.class);
        } catch (ReflectiveOperationException | LinkageError e) {
            return null;
        }
    }

    /** One loop's select strategy, with its own {@link PollBudget} (Netty asks the factory once per loop). */
    private final class LoopPoll {
        private final PollBudget budget;
        /**
         * Whether this loop last went to sleep: Netty handles what woke it without asking the
         * strategy, so the next pass counts as work found (a timer's wake-up too, which errs on
         * the side of polling).
         */
        private boolean slept;

        LoopPoll(PollBudget budget) {
            this.budget = budget;
        }

        /** Ready events, {@link SelectStrategy#CONTINUE} for tasks, or {@link SelectStrategy#SELECT} to sleep. */
        int strategy(IntSupplier selectNow, boolean hasTasks) throws Exception {
            int ready = selectNow.get();
            long nowNs = clock.nanoTime();
            if (ready > 0 || hasTasks || slept) {
                slept = false;
                budget.work(nowNs);
                if (ready > 0 || hasTasks) {
                    return ready;
                }
            }
            long pollNs = budget.idle(nowNs);
            if (pollNs == 0) {
                slept = true;
                return SelectStrategy.SELECT;
            }
            EventExecutor executor = ThreadExecutorMap.currentExecutor();
            SingleThreadEventExecutor loop = executor instanceof SingleThreadEventExecutor single ? single : null;
            long deadlineNs = nowNs + pollNs;
            polls.increment();
            while (clock.nanoTime() - deadlineNs < 0) {
                Thread.yield();
                ready = selectNow.get();
                if (ready > 0) {
                    hits.increment();
                    budget.work(clock.nanoTime());
                    return ready;
                }
                if (loop != null && loop.pendingTasks() > 0) {
                    hits.increment();
                    budget.work(clock.nanoTime());
                    return SelectStrategy.CONTINUE;
                }
            }
            slept = true;
            return SelectStrategy.SELECT;
        }
    }

    /** Polls that found a datagram or a task before their deadline. */
    long hits() {
        return hits.sum();
    }

    /** Polls started (each ends in a hit or, with nothing found, in a sleep). */
    long polls() {
        return polls.sum();
    }

    /**
     * The busy-polling epoll loop, or for {@code useNative} false (a transport whose
     * {@link HomaTransportConfig#nativeTransport()} is off, run on these loops) an ordinary NIO
     * loop, which does not poll.
     */
    @Override
    public EventLoopGroup onServer(boolean useNative) {
        return useNative ? group : nioGroup();
    }

    private synchronized EventLoopGroup nioGroup() {
        EventLoopGroup nio = nioGroup;
        if (nio == null) {
            nio = new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory("homa-nio", true), NioIoHandler.newFactory());
            nioGroup = nio;
        }
        return nio;
    }

    @Override
    public Mono<Void> disposeLater(Duration quietPeriod, Duration timeout) {
        EventLoopGroup nio;
        synchronized (this) {
            nio = nioGroup;
        }
        Mono<Void> epoll = shutdown(group, quietPeriod, timeout);
        return nio == null ? epoll : Mono.when(epoll, shutdown(nio, quietPeriod, timeout));
    }

    private static Mono<Void> shutdown(EventLoopGroup loops, Duration quietPeriod, Duration timeout) {
        return Mono.create(sink -> loops.shutdownGracefully(quietPeriod.toNanos(), timeout.toNanos(), TimeUnit.NANOSECONDS)
                .addListener(done -> sink.success()));
    }

    /** True from the moment the loops start shutting down, as Reactor Netty's own loops say. */
    @Override
    public boolean isDisposed() {
        return group.isShuttingDown();
    }
}
