package io.homa.reactive.internal.transport;

import io.homa.engine.EngineConfig;
import io.homa.engine.HomaEngine;
import io.homa.engine.HomaEvent;
import io.homa.engine.PacketSink;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.NanoClock;
import io.homa.reactive.internal.security.PacketSealer;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.DatagramPacket;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
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
 * datagrams or {@value #BYTES_PER_DRIVE} bytes and when the read completes. A timer that runs more
 * than {@value #LATE_TIMER_NS} ns late (this process was paused) waits for one pass of the loop's
 * I/O, so that what arrived during the pause is read before the engine judges any silence.
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
    /**
     * A timer that runs later than this after its deadline waits for one pass of the loop's I/O
     * first ({@link #runTimerTask}): longer than a busy loop's lateness, far shorter than the
     * engine's smallest retransmission timeout.
     */
    static final long LATE_TIMER_NS = 2_000_000;
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
    /** How often the event loop measures its own lag ({@link #eventLoopLagNs()}). */
    static final long LAG_PROBE_INTERVAL_NS = 100_000_000L;
    /** While packets wait for Netty's outbound queue to drain (to switch TOS), how often to look again. */
    static final long HELD_RETRY_NS = 100_000;

    private final Channel channel;
    private final EventLoop eventLoop;
    private final InetSocketAddress localAddress;
    private final HomaEngine engine;
    private final NanoClock clock;
    private final PriorityTosWriter writer;
    private final GsoBatcher batcher;
    /** Seals and opens datagrams when packet authentication is on; null when off. */
    private final @Nullable PacketSealer sealer;
    private final AtomicLong droppedDatagrams = new AtomicLong();
    private volatile long eventLoopLagNs;
    private volatile long maxEventLoopLagNs;
    /** Timers that ran late and waited for a pass of the loop's I/O; written on the loop only. */
    private volatile long lateTimers;

    // ---- confined to the event loop ----
    private final PacketSink packetSink = new PacketSink() {
        @Override
        public void send(InetSocketAddress peer, ByteBuffer packet, int priority) {
            writePacket(peer, packet, priority);
        }

        /** DATA is written straight into the datagram buffer, unless it is to be sealed. */
        @Override
        public ByteBuffer claim(InetSocketAddress peer, int lengthBytes, int priority) {
            return sealer == null ? batcher.claim(peer, lengthBytes, priority) : null;
        }

        @Override
        public void commit() {
            batcher.commit();
        }
    };
    private final Runnable transmitTask = this::runTransmitTask;
    private final Runnable timerTask = this::runTimerTask;
    private final Runnable heldRetryTask = this::runHeldRetryTask;
    private final Runnable driveTask = this::runDriveTask;
    private final Runnable lagProbeTask = this::runLagProbe;
    /** The owners of the engine's events, set by {@link #start} before the first drive. */
    private PendingCalls calls;
    private RequestDispatch requests;
    private long lagProbeDueNs;
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
    private @Nullable ScheduledFuture<?> timer;
    private long timerDeadlineNs;
    /** Whether the pending timer is a late one put behind a pass of the loop's I/O ({@link #runTimerTask}). */
    private boolean timerDeferred;

    /**
     * @param writer marks packets with their priority ({@link HomaTransportConfig#priorityTos()})
     * @param batcher joins packets into GSO sends and writes them through {@code writer}
     * @param sealer seals and opens datagrams, or null without packet authentication
     */
    EngineDriver(Channel channel, HomaEngine engine, NanoClock clock, PriorityTosWriter writer, GsoBatcher batcher,
            @Nullable PacketSealer sealer) {
        this.channel = channel;
        this.eventLoop = channel.eventLoop();
        this.localAddress = (InetSocketAddress) channel.localAddress();
        this.engine = engine;
        this.clock = clock;
        this.writer = writer;
        this.batcher = batcher;
        this.sealer = sealer;
    }

    /** Where the engine's events go; once, on the event loop, before the first datagram is read. Starts the lag probe. */
    void start(PendingCalls pendingCalls, RequestDispatch requestDispatch) {
        this.calls = pendingCalls;
        this.requests = requestDispatch;
        scheduleLagProbe();
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
        return writer;
    }

    /** Whether the engine is closed ({@link #close()}); on the event loop. */
    boolean isClosed() {
        return closed;
    }

    long droppedDatagrams() {
        return droppedDatagrams.get();
    }

    long eventLoopLagNs() {
        return eventLoopLagNs;
    }

    /** The largest {@link #eventLoopLagNs()} seen. */
    long maxEventLoopLagNs() {
        return maxEventLoopLagNs;
    }

    /** Timers that ran more than {@link #LATE_TIMER_NS} after their deadline and waited for a pass of the loop's I/O. */
    long lateTimers() {
        return lateTimers;
    }

    /** GSO sends and the packets they carried so far, read on the event loop. */
    Mono<long[]> gsoCounters() {
        return onLoop(() -> new long[] {batcher.segmentedSends(), batcher.segmentedPackets()});
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

    private void scheduleLagProbe() {
        lagProbeDueNs = clock.nanoTime() + LAG_PROBE_INTERVAL_NS;
        eventLoop.schedule(lagProbeTask, LAG_PROBE_INTERVAL_NS, TimeUnit.NANOSECONDS);
    }

    private void runLagProbe() {
        if (closed) {
            return;
        }
        calls.expireShutdownHolds();
        long lagNs = Math.max(0, clock.nanoTime() - lagProbeDueNs);
        eventLoopLagNs = lagNs;
        if (lagNs > maxEventLoopLagNs) {
            maxEventLoopLagNs = lagNs;
        }
        scheduleLagProbe();
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
                transmit();
            } while (driveAgain && !closed);
            armTimer();
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
        if (writer.hasHeld() && !writer.drainHeld()) {
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
        int sent = engine.pollTransmit(nowNs, packetSink, TRANSMIT_BUDGET_PACKETS);
        if (sent > 0) {
            batcher.finish();
            writer.flush();
        }
        if (writer.hasHeld()) {
            scheduleHeldRetry();
        } else if (channel.isWritable() && engine.canTransmit(nowNs) && !transmitTaskQueued) {
            // More to send now: yield the loop to reads first. Packets the pacer holds back are
            // the engine's next deadline, which armTimer covers.
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

    /**
     * The engine's {@link PacketSink} for control packets and sealed DATA (unsealed DATA is written
     * in place, {@link GsoBatcher#claim}): copies the packet into a pooled direct buffer, joined with
     * the packets before it into one GSO send where it can be ({@link GsoBatcher}), written at its
     * priority when the batch ends.
     */
    private void writePacket(InetSocketAddress peer, ByteBuffer packet, int priority) {
        PacketSealer sealing = sealer;
        batcher.add(peer, sealing == null ? packet : sealing.seal(peer, packet), priority);
    }

    /**
     * A write or read failed (the packet is lost; RESEND recovers it). Once GSO sends have gone
     * out, any I/O error is taken as the kernel refusing them (it answers EINVAL or EIO when a
     * segment is longer than the path's MTU or the device cannot checksum it; the error does not
     * say which datagram failed), and sends go one datagram per packet from now on, said once at WARN.
     */
    void onIoError(Throwable cause) {
        if (batcher.enabled() && batcher.segmentedSends() > 0 && cause instanceof IOException) {
            batcher.disable();
            log.warn("Homa transport on {}: a UDP GSO send failed ({}); sending one datagram per packet from now on",
                    localAddress, cause.toString());
        } else {
            log.debug("Homa transport on {}: I/O error (ignored)", localAddress, cause);
        }
    }

    private void armTimer() {
        if (closed) {
            return;
        }
        long deadlineNs = engine.nextTimeoutNs();
        if (deadlineNs == Long.MAX_VALUE) {
            return;
        }
        ScheduledFuture<?> pending = timer;
        if (pending != null) {
            if (timerDeadlineNs - deadlineNs <= 0) {
                return; // the pending timer fires no later than needed
            }
            pending.cancel(false);
        }
        timerDeadlineNs = deadlineNs;
        long delayNs = Math.max(0, deadlineNs - clock.nanoTime());
        timer = eventLoop.schedule(timerTask, delayNs, TimeUnit.NANOSECONDS);
    }

    private void runTimerTask() {
        timer = null;
        if (closed) {
            return;
        }
        long nowNs = clock.nanoTime();
        if (!timerDeferred && nowNs - timerDeadlineNs > LATE_TIMER_NS) {
            // This process was paused past the deadline (GC, a descheduled VM): the loop may have
            // left epoll_wait, on its timeout, before datagrams that came during the pause, and the
            // engine would take their absence for silence (RESENDs, retransmissions of bytes that
            // are here). Once, it waits for the next pass of the loop, whose I/O comes first.
            timerDeferred = true;
            timer = eventLoop.schedule(timerTask, 0, TimeUnit.NANOSECONDS);
            lateTimers = lateTimers + 1;
            return;
        }
        timerDeferred = false;
        try {
            engine.onTimeout(nowNs);
        } catch (RuntimeException e) {
            log.error("Homa engine on {} failed in onTimeout", localAddress, e);
        }
        drive();
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
        batcher.release();
        writer.releaseHeld();
        ScheduledFuture<?> pending = timer;
        if (pending != null) {
            pending.cancel(false);
            timer = null;
        }
        try {
            engine.close(clock.nanoTime());
            dispatchEvents();
        } catch (RuntimeException e) {
            log.warn("Homa engine on {} failed to close", localAddress, e);
        }
        return true;
    }
}
