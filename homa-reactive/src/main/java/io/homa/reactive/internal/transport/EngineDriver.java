package io.homa.reactive.internal.transport;

import io.homa.engine.EngineConfig;
import io.homa.engine.HomaEngine;
import io.homa.engine.HomaEvent;
import io.homa.reactive.NanoClock;
import io.homa.reactive.internal.security.PacketSealer;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.DatagramPacket;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * One event loop's duty cycle around one {@link HomaEngine}: received datagrams into the engine,
 * the engine's events to their owners, its packets onto the wire, its timer, and a probe of the
 * loop's own lag. The engine and everything here are touched only on the channel's event loop.
 *
 * <p>Other threads hand work to the loop with {@link #runOnLoop} (calls, responses from a handler
 * scheduler, cancels). Such a task only hands its work to the engine and asks for one
 * {@link #drive()} queued behind it ({@link #requestDrive()}), so the work of every task queued in
 * one pass of the loop goes out in one drive and one flush (sendmmsg on epoll). {@link #drive()}
 * hands engine events to their owners, puts up to {@value #TRANSMIT_BUDGET_PACKETS} packets on the
 * wire (as far as the engine's pacer allows; re-queuing itself while the engine has more and the
 * channel is writable, so that receiving is not starved) and re-arms the single timer at
 * {@link HomaEngine#nextTimeoutNs()}.
 *
 * <p>Receiving: each readiness notification reads the socket until the kernel reports it empty
 * ({@link DatagramBootstrap}), and the engine is driven every {@value #DATAGRAMS_PER_DRIVE}
 * datagrams or {@value #BYTES_PER_DRIVE} bytes and when the read completes. A timer that runs late
 * (this process was paused) waits for one pass of the loop's I/O, so that what arrived during the
 * pause is read before the engine judges any silence ({@link EngineTimer}).
 *
 * <p>Pacing is the engine's ({@link EngineConfig#linkMbps()}, draft "Pacing"): the driver polls it
 * for packets, and when the engine holds DATA back for lack of credit, comes back at
 * {@link HomaEngine#nextTimeoutNs()} like for any other deadline. Without pacing, loopback senders
 * overrun receivers' socket buffers.
 */
final class EngineDriver {
    private static final Logger log = LoggerFactory.getLogger(EngineDriver.class);

    /** Packets handed to the channel per {@link #drive()} before yielding the event loop. */
    static final int TRANSMIT_BUDGET_PACKETS = 64;
    /** Datagrams handed to the engine between two {@link #drive()}s while a read drains the socket. */
    static final int DATAGRAMS_PER_DRIVE = 64;
    /**
     * Bytes of datagrams handed to the engine between two {@link #drive()}s while a read drains the
     * socket, whichever of this and {@link #DATAGRAMS_PER_DRIVE} comes first. GRANTs, and events
     * such as a completed short request, leave only at a drive; with 64 KB datagrams (GSO on
     * loopback) 64 datagrams are 4 MiB, milliseconds of reading during which senders would wait
     * for GRANTs.
     */
    static final int BYTES_PER_DRIVE = 64 * 1024;
    /** While packets wait for Netty's outbound queue to drain (to switch TOS), how often to look again. */
    static final long HELD_RETRY_NS = 100_000;

    private final Channel channel;
    private final EventLoop eventLoop;
    private final InetSocketAddress localAddress;
    private final HomaEngine engine;
    private final NanoClock clock;
    private final PacketOutput output;
    /** Opens datagrams when packet authentication is on; null when off. */
    private final @Nullable PacketSealer sealer;
    private final LagProbe lagProbe;
    private final EngineTimer timer;
    private final AtomicLong droppedDatagrams = new AtomicLong();

    // ---- confined to the event loop ----
    private final Runnable transmitTask = this::runTransmitTask;
    private final Runnable heldRetryTask = this::runHeldRetryTask;
    private final Runnable driveTask = this::runDriveTask;
    /** The owners of the engine's events, set by {@link #start} before the first drive. */
    private PendingCalls calls;
    private RequestDispatch requests;
    private boolean heldRetryScheduled;
    private boolean closed;
    private boolean driving;
    private boolean driveAgain;
    private boolean transmitTaskQueued;
    private boolean driveTaskQueued;
    private int datagramsSinceDrive;
    private int bytesSinceDrive;
    /** The clock as read at the first datagram of the current batch. */
    private long readNowNs;

    /**
     * @param output where the engine's packets go
     * @param sealer opens received datagrams, or null without packet authentication
     */
    EngineDriver(Channel channel, HomaEngine engine, NanoClock clock, PacketOutput output,
            @Nullable PacketSealer sealer) {
        this.channel = channel;
        this.eventLoop = channel.eventLoop();
        this.localAddress = (InetSocketAddress) channel.localAddress();
        this.engine = engine;
        this.clock = clock;
        this.output = output;
        this.sealer = sealer;
        this.lagProbe = new LagProbe(eventLoop, clock, this::isClosed, this::expireShutdownHolds);
        this.timer = new EngineTimer(eventLoop, clock, engine, localAddress, this::isClosed, this::drive);
    }

    /** Where the engine's events go; once, on the event loop, before the first datagram is read. Starts the lag probe. */
    void start(PendingCalls pendingCalls, RequestDispatch requestDispatch) {
        this.calls = pendingCalls;
        this.requests = requestDispatch;
        lagProbe.schedule();
    }

    HomaEngine engine() {
        return engine;
    }

    NanoClock clock() {
        return clock;
    }

    InetSocketAddress localAddress() {
        return localAddress;
    }

    /** The event loop the engine is confined to. */
    EventLoop eventLoop() {
        return eventLoop;
    }

    Channel channel() {
        return channel;
    }

    /** The writer that marks packets with their priority. */
    PriorityTosWriter writer() {
        return output.writer();
    }

    /** Whether the engine is closed ({@link #close()}); on the event loop. */
    boolean isClosed() {
        return closed;
    }

    long droppedDatagrams() {
        return droppedDatagrams.get();
    }

    long eventLoopLagNs() {
        return lagProbe.lagNs();
    }

    /** The largest {@link #eventLoopLagNs()} seen. */
    long maxEventLoopLagNs() {
        return lagProbe.maxLagNs();
    }

    /** Timers that ran late and waited for a pass of the loop's I/O ({@link EngineTimer}). */
    long lateTimers() {
        return timer.lateTimers();
    }

    /** GSO sends and the packets they carried so far, read on the event loop. */
    Mono<long[]> gsoCounters() {
        return onLoop(output::gsoCounters);
    }

    /** The engine's server RPCs held (from the first request DATA until ACK). */
    Mono<Integer> activeServerRpcs() {
        return onLoop(engine::activeServerRpcs);
    }

    /** The engine's client RPCs in progress. */
    Mono<Integer> activeClientRpcs() {
        return onLoop(engine::activeClientRpcs);
    }

    /** Runs {@code task} on the event loop (now if already there); false if the loop rejected it. */
    boolean runOnLoop(Runnable task) {
        if (eventLoop.inEventLoop()) {
            task.run();
            return true;
        }
        try {
            eventLoop.execute(task);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    /** What {@code supplier} gives on the event loop. */
    <T> Mono<T> onLoop(Supplier<T> supplier) {
        return Mono.create(sink -> {
            if (!runOnLoop(() -> sink.success(supplier.get()))) {
                sink.error(TransportErrors.unavailable(localAddress, "event loop is shut down"));
            }
        });
    }

    /** One received datagram; the caller releases it. Runs on the event loop. */
    void onDatagram(DatagramPacket packet) {
        if (closed) {
            droppedDatagrams.incrementAndGet();
            return;
        }
        try {
            if (datagramsSinceDrive == 0) {
                readNowNs = clock.nanoTime(); // once per batch of datagrams
                requests.admit();
            }
            PacketSealer opener = sealer;
            ByteBuffer homaPacket;
            if (opener == null) {
                homaPacket = packet.content().nioBuffer();
            } else {
                homaPacket = opener.open(packet.sender(), packet.content());
                if (homaPacket == null) {
                    return; // dropped and counted: the engine never sees it
                }
            }
            bytesSinceDrive += homaPacket.remaining();
            engine.onPacket(readNowNs, packet.sender(), homaPacket);
        } catch (RuntimeException e) {
            droppedDatagrams.incrementAndGet();
            log.warn("Homa engine failed on a datagram from {}; dropped", packet.sender(), e);
        }
        if (++datagramsSinceDrive >= DATAGRAMS_PER_DRIVE || bytesSinceDrive >= BYTES_PER_DRIVE) {
            drive();
        }
    }

    /**
     * Asks for one {@link #drive()} after the tasks already queued on the loop: commands from other
     * threads (calls, responses, cancels) that arrive in one pass of the loop are thus transmitted
     * together, in one flush. Inside a running drive, folds into it. Runs on the event loop.
     */
    void requestDrive() {
        if (driving) {
            driveAgain = true;
        } else if (!driveTaskQueued) {
            driveTaskQueued = true;
            eventLoop.execute(driveTask);
        }
    }

    private void expireShutdownHolds() {
        calls.expireShutdownHolds();
    }

    private void runDriveTask() {
        driveTaskQueued = false;
        drive();
    }

    /** Hands events to their owners, transmits and re-arms the timer. Runs on the event loop; re-entrant calls fold into the running one. */
    void drive() {
        if (closed) {
            return;
        }
        if (driving) {
            driveAgain = true;
            return;
        }
        driving = true;
        datagramsSinceDrive = 0;
        bytesSinceDrive = 0;
        try {
            do {
                driveAgain = false;
                dispatchEvents();
                requests.publishCounters(); // before the refusals leave: a client never hears of an uncounted one
                transmit();
            } while (driveAgain && !closed);
            timer.arm();
        } catch (RuntimeException e) {
            log.error("Homa transport on {} failed while driving its engine", localAddress, e);
        } finally {
            driving = false;
        }
    }

    private void dispatchEvents() {
        HomaEvent event;
        while ((event = engine.pollEvent()) != null) {
            try {
                if (event instanceof HomaEvent.RequestReceived request) {
                    requests.onRequest(request);
                } else if (event instanceof HomaEvent.ResponseReceived response) {
                    calls.complete(response);
                } else if (event instanceof HomaEvent.RpcFailed failed) {
                    calls.fail(failed);
                }
            } catch (RuntimeException e) {
                log.warn("Homa transport on {}: a subscriber failed while handling {}", localAddress, event, e);
            }
        }
    }

    private void transmit() {
        if (closed) {
            return;
        }
        if (output.hasHeld() && !output.drainHeld()) {
            scheduleHeldRetry();
            return; // held packets go first, once Netty's queue has drained
        }
        if (!engine.hasTransmit()) {
            return;
        }
        if (!channel.isWritable()) {
            return; // channelWritabilityChanged drives again
        }
        long nowNs = clock.nanoTime();
        int sent = engine.pollTransmit(nowNs, output, TRANSMIT_BUDGET_PACKETS);
        if (sent > 0) {
            output.finishPass();
        }
        if (output.hasHeld()) {
            scheduleHeldRetry();
        } else if (channel.isWritable() && engine.canTransmit(nowNs) && !transmitTaskQueued) {
            // More to send now: yield the loop to reads first. Packets the pacer holds back are
            // the engine's next deadline, which the timer covers.
            transmitTaskQueued = true;
            eventLoop.execute(transmitTask);
        }
    }

    /**
     * Drives again in {@value #HELD_RETRY_NS} ns: packets are held until Netty's outbound queue,
     * which the kernel refused to take (send buffer full), has drained; Netty signals no event
     * for that short of writability.
     */
    private void scheduleHeldRetry() {
        if (!heldRetryScheduled) {
            heldRetryScheduled = true;
            eventLoop.schedule(heldRetryTask, HELD_RETRY_NS, TimeUnit.NANOSECONDS);
        }
    }

    private void runHeldRetryTask() {
        heldRetryScheduled = false;
        drive();
    }

    private void runTransmitTask() {
        transmitTaskQueued = false;
        drive();
    }

    /** A write or read failed ({@link PacketOutput#onIoError}). */
    void onIoError(Throwable cause) {
        output.onIoError(cause);
    }

    /**
     * Closes the engine: what tasks queued before this one handed to it goes out first, then its
     * RPCs in flight fail (their events are dispatched). Runs on the event loop.
     *
     * @return false if it was closed already
     */
    boolean close() {
        if (closed) {
            return false;
        }
        // What tasks queued before this one handed to the engine (a response that finished just
        // before a graceful shutdown disposes the transport) goes out first, as far as the pacer
        // and one transmit budget allow; requestDrive's task would run too late.
        drive();
        closed = true;
        output.release();
        timer.cancel();
        try {
            engine.close(clock.nanoTime());
            dispatchEvents();
        } catch (RuntimeException e) {
            log.warn("Homa engine on {} failed to close", localAddress, e);
        }
        return true;
    }
}
