package io.homa.reactive.internal.transport;

import io.homa.engine.EngineConfig;
import io.homa.engine.EngineCounters;
import io.homa.engine.HomaEngine;
import io.homa.engine.HomaEvent;
import io.homa.engine.MessageBytes;
import io.homa.engine.PacketSink;
import io.homa.engine.wire.DataHeader;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRequest;
import io.homa.reactive.HomaRequestHandler;
import io.homa.reactive.HomaSecurityConfig;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTimeoutException;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.HomaTransportSpec;
import io.homa.reactive.NanoClock;
import io.homa.reactive.internal.security.PacketSealer;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.DatagramChannelConfig;
import io.netty.channel.socket.DatagramPacket;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.collection.LongObjectHashMap;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.netty.resources.LoopResources;

/**
 * The {@link HomaTransport}: one Netty datagram channel on one event loop, driving one
 * {@link HomaEngine}.
 *
 * <p>Confinement: the engine, the map of pending calls and the timer are touched only on
 * the channel's event loop; other threads hand work to it with {@code eventLoop.execute} (calls,
 * responses from a handler scheduler, cancels). Such a task only hands its work to the engine and
 * asks for one {@link #drive()} queued behind it ({@link #requestDrive()}), so the work of every
 * task queued in one pass of the loop goes out in one drive and one flush (sendmmsg on epoll).
 * {@link #drive()} hands engine events to their callers, puts up to
 * {@value #TRANSMIT_BUDGET_PACKETS} packets on the wire (as far as the engine's pacer allows;
 * re-queuing itself while the engine has more and the channel is writable, so that receiving is not
 * starved) and re-arms the single timer at {@link HomaEngine#nextTimeoutNs()}.
 *
 * <p>Receiving: each readiness notification reads the socket until the kernel reports it empty,
 * using recvmmsg(2) on epoll, and drives the engine every
 * {@value #DATAGRAMS_PER_DRIVE} datagrams and when the read completes. A timer that runs more than
 * {@value #LATE_TIMER_NS} ns late (this process was paused) waits for one pass of the loop's I/O,
 * so that what arrived during the pause is read before the engine judges any silence.
 *
 * <p>Pacing is the engine's ({@link EngineConfig#linkMbps()}, draft "Pacing"): the transport hands
 * the engine {@link HomaTransportConfig#linkMbps()} and {@link HomaTransportConfig#maxNicQueueNs()},
 * polls it for packets, and when the engine holds DATA back for lack of credit, comes back at
 * {@link HomaEngine#nextTimeoutNs()} like for any other deadline. Without pacing, loopback senders
 * overrun receivers' socket buffers.
 *
 * <p>Packet size: bound to one address, the transport uses that interface's MTU
 * ({@link HomaTransportConfig#deviceMtu()}; 65,535 on loopback), and it receives datagrams of up to
 * {@value #MAX_DATAGRAM_BYTES} bytes whatever its own MTU.
 *
 * <p>Handlers: called on the event loop (no thread hop; a response produced there goes out in
 * the same drive as the request's arrival), or on {@link HomaTransportSpec#handlerScheduler} if set.
 *
 * <p>Priorities: with {@link HomaTransportConfig#priorityTos()} on, packets leave with their
 * priority in the IP TOS byte ({@code priority << 5}) through a {@link PriorityTosWriter}, which
 * switches the socket's TOS between packets of different priorities. One socket serves every
 * level, so no port is shared (SO_REUSEPORT would let any process of the same user join the Homa
 * port and would split received datagrams between sockets), and it works with NIO too.
 */
public final class NettyHomaTransport extends HomaTransport {
    private static final Logger log = LoggerFactory.getLogger(NettyHomaTransport.class);

    /** Packets handed to the channel per {@link #drive()} before yielding the event loop. */
    static final int TRANSMIT_BUDGET_PACKETS = 64;
    /**
     * Receive buffer per datagram: the largest UDP payload, whatever this endpoint's own MTU, so
     * that a peer with a larger one (bound to loopback, {@link HomaTransportConfig#deviceMtu()}) is
     * heard. Measured on loopback: no throughput or latency cost against 2 KiB buffers (pooled).
     */
    static final int MAX_DATAGRAM_BYTES = 65_535 - EngineConfig.IP_UDP_HEADER_BYTES;
    /** Reads (recvmsg or recvmmsg calls) per readiness notification: in effect, until the socket is empty. */
    static final int MAX_READS_PER_READINESS = 1 << 16;
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
     * loopback) 64 datagrams are 4 MiB, milliseconds of reading during which senders wait for
     * GRANTs: S4 went from 1.9 to 5.5 Gbit/s with this bound, S2's short-RPC p50 from 396 to 191 µs.
     */
    static final int BYTES_PER_DRIVE = 64 * 1024;
    /** Datagrams one recvmmsg(2) call may return (native epoll only). */
    static final int DATAGRAMS_PER_RECVMMSG = 16;
    /** How long loops of the transport's own may take to shut down after it closes. */
    static final Duration OWN_LOOPS_SHUTDOWN_TIMEOUT = Duration.ofSeconds(2);
    /** How often the event loop measures its own lag ({@link #eventLoopLagNs()}). */
    static final long LAG_PROBE_INTERVAL_NS = 100_000_000L;
    /** While packets wait for Netty's outbound queue to drain (to switch TOS), how often to look again. */
    static final long HELD_RETRY_NS = 100_000;
    /** While draining, how often the loop looks whether the drain is done. */
    static final long DRAIN_CHECK_NS = 5_000_000L;

    private final @Nullable HomaRequestHandler handler;
    private final NanoClock clock;
    private final @Nullable Scheduler handlerScheduler;
    private final int maxMessageBytes;
    private final Channel channel;
    private final EventLoop eventLoop;
    private final InetSocketAddress localAddress;
    private final boolean priorityTos;
    private final AtomicBoolean disposed = new AtomicBoolean();
    private volatile boolean serving;
    private final AtomicLong droppedDatagrams = new AtomicLong();
    private final AtomicLong droppedRequests = new AtomicLong();
    private volatile long eventLoopLagNs;
    private volatile long maxEventLoopLagNs;
    private final Sinks.Empty<Void> onDispose = Sinks.empty();
    private final Sinks.Empty<Void> drained = Sinks.empty();
    private volatile boolean draining;
    private final AtomicLong refusedRequests = new AtomicLong();
    /** Seals and opens datagrams when packet authentication is on (issue 14, item 2); null when off. */
    private final @Nullable PacketSealer sealer;
    /** Whether the WARN about an unauthenticated endpoint on a non-loopback address was logged (once per JVM). */
    private static final AtomicBoolean UNAUTHENTICATED_WARNED = new AtomicBoolean();

    // ---- confined to the event loop ----
    private final HomaEngine engine;
    private final LongObjectHashMap<PendingCall> pendingCalls = new LongObjectHashMap<>();
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
    private long lagProbeDueNs;
    private final PriorityTosWriter writer;
    private final GsoBatcher batcher;
    private final String dataPath;
    /** The transport's own loops when they busy-poll ({@link HomaTransportConfig#busyPollNs()}), else null. */
    private final @Nullable BusyPollLoops busyPoll;
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
    /** Timers that ran late and waited for a pass of the loop's I/O; written on the loop only. */
    private volatile long lateTimers;
    /** Servers that refused one of our requests because they are shutting down, until when calls to them fail at once. */
    private final Map<InetSocketAddress, Long> shuttingDownUntilNs = new HashMap<>();
    private final long shuttingDownHoldNs;
    private final long drainQuietNs;
    private final Runnable drainCheckTask = this::runDrainCheck;
    private boolean drainStarted;
    private boolean drainEnded;
    private long drainDeadlineNs;
    /** The drain's start or its latest refusal: the drain is quiet this long after it. */
    private long drainQuietSinceNs;

    /**
     * Runs on the event loop, in the bind listener, before the first datagram is read.
     *
     * @param gsoBatchBytes the longest GSO send, bytes, 0 without GSO ({@link GsoBatcher})
     * @param busyPoll the transport's own loops when they busy-poll, else null
     */
    private NettyHomaTransport(TransportSettings spec, Channel channel, EngineConfig engineConfig, int gsoBatchBytes,
            @Nullable BusyPollLoops busyPoll) {
        HomaTransportConfig config = spec.config();
        boolean holdRequests = spec.holdRequests();
        this.handler = spec.handler();
        this.handlerScheduler = spec.handlerScheduler();
        this.clock = spec.clock();
        this.maxMessageBytes = config.engine().maxMessageBytes();
        this.channel = channel;
        this.eventLoop = channel.eventLoop();
        this.localAddress = (InetSocketAddress) channel.localAddress();
        DatagramChannelConfig channelConfig = ((DatagramChannel) channel).config();
        this.priorityTos = config.priorityTos().enabledFor(localAddress.getAddress());
        this.writer = new PriorityTosWriter(channel, priorityTos,
                priorityTos ? channelConfig.getTrafficClass() : 0, channelConfig::setTrafficClass);
        HomaSecurityConfig security = config.security();
        this.batcher = new GsoBatcher(channel.alloc(), writer::write,
                engineConfig.maxDatagramBytes() + security.overheadBytes(), gsoBatchBytes);
        this.busyPoll = busyPoll;
        this.dataPath = dataPath(channel, engineConfig, batcher, priorityTos, security,
                busyPoll == null ? 0 : busyPoll.busyPollNs());
        // rpcids an off-path host cannot guess (issue 14): a random start within the microsecond
        // and random steps, from a generator seeded once by the system's CSPRNG.
        java.security.SecureRandom seed = new java.security.SecureRandom();
        this.sealer = security.enabled() ? new PacketSealer(security, localAddress, seed) : null;
        if (!security.enabled() && !localAddress.getAddress().isLoopbackAddress()
                && UNAUTHENTICATED_WARNED.compareAndSet(false, true)) {
            log.warn("Homa transport bound to {} without packet authentication: anyone who can send UDP datagrams to"
                    + " this port can talk to it and forge peers' packets. Set homa.security.mode=authenticate (or"
                    + " encrypt) with shared keys, or bind to an address inside a network you trust", localAddress);
        }
        long firstRpcId = HomaEngine.clockDerivedFirstRpcId(epochMicros())
                + 2L * seed.nextInt(1 << (HomaEngine.RPC_ID_CLOCK_SHIFT - 1));
        this.engine = new HomaEngine(engineConfig, localAddress.getPort(), firstRpcId,
                new java.util.SplittableRandom(seed.nextLong()));
        if (holdRequests) {
            engine.holdRequests();
        }
        this.serving = !holdRequests;
        this.shuttingDownHoldNs = engineConfig.peerSilenceTimeoutNs();
        this.drainQuietNs = drainQuietNs(engineConfig.resendIntervalNs());
        channel.closeFuture().addListener(future -> onDispose.tryEmitEmpty());
        scheduleLagProbe();
    }

    public static Mono<HomaTransport> bind(TransportSettings spec) {
        HomaTransportConfig config = spec.config();
        return Mono.create(sink -> {
            InetSocketAddress bindAddress = new InetSocketAddress(config.bindAddress(), config.port());
            if (bindAddress.isUnresolved()) {
                sink.error(new HomaException(HomaStatus.UNAVAILABLE,
                        "cannot bind Homa transport: bind-address '" + config.bindAddress() + "' does not resolve"));
                return;
            }
            boolean useNative = config.nativeTransport() && LoopResources.hasNativeSupport();
            LoopResources given = spec.loops();
            // Without loops of the caller's, one of our own, disposed with the channel.
            LoopResources loops = given != null ? given : HomaTransport.loops(config);
            BusyPollLoops busyPoll = loops instanceof BusyPollLoops polling ? polling : null;
            EventLoopGroup group = loops.onServer(useNative);
            Class<? extends DatagramChannel> channelType = loops.onChannelClass(DatagramChannel.class, group);
            EventLoop loop = (EventLoop) group.next();

            EngineConfig engineConfig = LinkProbe.engineConfig(config, bindAddress);
            int receiveDatagramBytes = MAX_DATAGRAM_BYTES;
            DatagramHandler datagramHandler = new DatagramHandler();
            Bootstrap bootstrap = new Bootstrap()
                    .group(loop)
                    .channel(channelType)
                    .option(ChannelOption.SO_RCVBUF, config.receiveBufferBytes())
                    .option(ChannelOption.SO_SNDBUF, config.sendBufferBytes())
                    .handler(datagramHandler);
            // Every read goes on until the kernel has said the socket is empty (a recvmmsg that
            // returned fewer datagrams than its slots, RecvmmsgAllocator; with recvmsg, a call that
            // found nothing), with a per-read budget far above what a socket buffer holds, so that
            // one wake-up takes everything before the engine computes grants and flushes. Netty
            // 4.2's epoll transport is level-triggered, so a read that stops early costs one more
            // epoll_wait, never a stranded datagram. A wake-up of sparse traffic (none in the
            // 50 us before it, as in an unloaded ping-pong) reads one datagram with one recvmsg:
            // no getsockopt and no second receive that finds nothing (RecvmmsgAllocator). The
            // handler drives the engine every DATAGRAMS_PER_DRIVE datagrams meanwhile.
            FixedRecvByteBufAllocator allocator;
            boolean epoll = UdpOffload.isEpoll(channelType);
            // GRO takes a peer's GSO send (many packets, of any length, GsoBatcher) in one read. Before
            // Netty 4.2.19 it costs recvmmsg (a read of one datagram or one coalesced run per system
            // call), which it repays wherever peers batch: on loopback too, whose 64 KB MTU leaves a
            // long message's packets alone but joins a burst of short responses (S3 1.35x RPCs/s, S6
            // 0.72x the time, S4 unchanged).
            int batchBytes = GsoBatcher.maxBatchBytes(engineConfig.linkMbps(), engineConfig.maxNicQueueNs());
            boolean gro = epoll && config.segmentationOffload() && UdpOffload.UDP_GRO != null;
            int gsoBatchBytes = epoll && config.segmentationOffload() && UdpOffload.GSO_SUPPORTED ? batchBytes : 0;
            boolean recvmmsg = UdpOffload.MAX_DATAGRAM_PAYLOAD_SIZE != null && epoll
                    && (!gro || UdpOffload.GRO_WITH_RECVMMSG);
            if (recvmmsg) {
                // recvmmsg(2): up to DATAGRAMS_PER_RECVMMSG datagrams per system call, sliced from one buffer.
                // Each slot holds the largest UDP payload, so datagrams the kernel coalesced (GRO) fit whole.
                bootstrap.option(UdpOffload.MAX_DATAGRAM_PAYLOAD_SIZE, receiveDatagramBytes);
                allocator = new RecvmmsgAllocator(DATAGRAMS_PER_RECVMMSG, receiveDatagramBytes);
            } else {
                // recvmsg(2): one datagram, or with GRO one run of coalesced datagrams, per system call;
                // a datagram shorter than the buffer does not mean "no more data", and sparse
                // traffic reads once per wake-up.
                allocator = new RecvmmsgAllocator(1, receiveDatagramBytes);
            }
            if (gro) {
                bootstrap.option(UdpOffload.UDP_GRO, true);
            }
            allocator.maxMessagesPerRead(MAX_READS_PER_READINESS);
            bootstrap.option(ChannelOption.RECVBUF_ALLOCATOR, allocator);
            ChannelFuture bindFuture = bootstrap.bind(bindAddress);
            sink.onCancel(() -> bindFuture.channel().close());
            bindFuture.addListener((ChannelFutureListener) future -> {
                // Our own loop is disposed only from here: disposed when a failed bind closed the
                // channel, it rejected the task that notifies this listener when the bind
                // completed before the listener was added (seen 1 in 40 binds to a port in use).
                if (given == null) {
                    future.channel().closeFuture().addListener(closed ->
                            loops.disposeLater(Duration.ZERO, OWN_LOOPS_SHUTDOWN_TIMEOUT).subscribe());
                }
                if (!future.isSuccess()) {
                    future.channel().close();
                    Throwable cause = future.cause();
                    sink.error(new HomaException(HomaStatus.UNAVAILABLE,
                            "cannot bind Homa transport to " + bindAddress + ": " + cause, cause));
                    return;
                }
                NettyHomaTransport transport;
                try {
                    transport = new NettyHomaTransport(spec, future.channel(), engineConfig, gsoBatchBytes, busyPoll);
                } catch (RuntimeException e) {
                    future.channel().close();
                    sink.error(new HomaException(HomaStatus.UNAVAILABLE, "cannot start Homa engine: " + e, e));
                    return;
                }
                datagramHandler.transport = transport;
                log.debug("Homa transport bound to {} ({}, handler on {}, engine {})",
                        transport.localAddress, transport.dataPath,
                        spec.handlerScheduler() == null ? "the event loop" : spec.handlerScheduler(), engineConfig);
                sink.success(transport);
            });
        });
    }

    private static String dataPath(Channel channel, EngineConfig engineConfig, GsoBatcher batcher, boolean priorityTos,
            HomaSecurityConfig security, long busyPollNs) {
        boolean epoll = UdpOffload.isEpoll(channel.getClass());
        ChannelOption<Boolean> gro = UdpOffload.UDP_GRO;
        boolean groOn = epoll && gro != null && Boolean.TRUE.equals(channel.config().getOption(gro));
        ChannelOption<Integer> slot = UdpOffload.MAX_DATAGRAM_PAYLOAD_SIZE;
        Integer slotBytes = epoll && slot != null ? channel.config().getOption(slot) : null;
        boolean recvmmsg = slotBytes != null && slotBytes > 0;
        return (epoll ? (recvmmsg ? "epoll, recvmmsg/sendmmsg" : "epoll, recvmsg/sendmmsg")
                        : channel.getClass().getSimpleName() + ", one datagram per system call")
                + ", MTU " + engineConfig.mtuBytes()
                + ", pacer " + (engineConfig.linkMbps() == 0 ? "off" : engineConfig.linkMbps() + " Mbit/s")
                + ", grant window " + (engineConfig.rttBytes() == 0 ? "auto" : engineConfig.rttBytes() + " B")
                + ", GSO " + (batcher.enabled() ? "on (up to " + batcher.maxBatchBytes() + " B per send)" : "off")
                + ", GRO " + (groOn ? "on" : "off")
                + ", busy-poll " + (busyPollNs > 0 ? busyPollNs / 1000 + " µs before sleeping" : "off")
                + ", priorities in IP TOS " + (priorityTos ? "on" : "off")
                + ", packet authentication " + (security.enabled()
                        ? security.mode().propertyValue() + " (key " + security.activeKeyId() + " sends, keys "
                                + security.keys().keySet() + " accepted, " + PacketSealer.TRAILER_BYTES + "-byte trailer)"
                        : "off");
    }

    // ------------------------------------------------------------------ public API

    @Override
    public void startServing() {
        if (serving) {
            return;
        }
        serving = true;
        runOnLoop(() -> {
            if (!closed) {
                engine.deliverRequests();
                requestDrive();
            }
        });
    }

    @Override
    public String dataPath() {
        return dataPath;
    }

    /** GSO sends and the packets they carried so far, read on the event loop; for tests and diagnostics. */
    Mono<long[]> gsoCounters() {
        return onLoop(() -> new long[] {batcher.segmentedSends(), batcher.segmentedPackets()});
    }

    @Override
    public boolean isServing() {
        return serving;
    }

    @Override
    public NanoClock clock() {
        return clock;
    }

    @Override
    public Mono<ByteBuf> call(InetSocketAddress server, ByteBuf request) {
        Objects.requireNonNull(server, "server must not be null");
        Objects.requireNonNull(request, "request must not be null");
        byte[][] parts;
        try {
            parts = MessageParts.of(request);
        } finally {
            ReferenceCountUtil.release(request);
        }
        // A long response arrives as the engine's chunks: a composite of them, never joined.
        return callParts(server, parts).map(Unpooled::wrappedBuffer);
    }

    @Override
    public Mono<byte[]> call(InetSocketAddress server, byte[] request) {
        Objects.requireNonNull(request, "request must not be null");
        return callParts(server, new byte[][] {request}).map(MessageBytes::join);
    }

    @Override
    public Mono<byte[]> call(InetSocketAddress server, byte[] head, byte[] body) {
        Objects.requireNonNull(head, "head must not be null");
        Objects.requireNonNull(body, "body must not be null");
        return callParts(server, new byte[][] {head, body}).map(MessageBytes::join);
    }

    /** One RPC whose request is {@code parts} in order; the response comes as the engine's parts. */
    private Mono<byte[][]> callParts(InetSocketAddress server, byte[][] parts) {
        Objects.requireNonNull(server, "server must not be null");
        return Mono.create(sink -> {
            long lengthBytes = MessageBytes.lengthBytes(parts);
            if (lengthBytes < 1 || lengthBytes > maxMessageBytes) {
                // Too long is RESOURCE_EXHAUSTED, as gRPC says of a message over its limit.
                sink.error(new HomaException(lengthBytes < 1 ? HomaStatus.INVALID_ARGUMENT : HomaStatus.RESOURCE_EXHAUSTED,
                        "request length must be between 1 and " + maxMessageBytes + " bytes (max-message-size), was "
                                + lengthBytes));
                return;
            }
            if (server.isUnresolved()) {
                sink.error(new HomaException(HomaStatus.INVALID_ARGUMENT, "server address " + server + " is unresolved"));
                return;
            }
            if (disposed.get()) {
                sink.error(unavailable("transport is disposed"));
                return;
            }
            PendingCall call = new PendingCall(server, parts, sink);
            sink.onCancel(call);
            if (!runOnLoop(call::start)) {
                sink.error(unavailable("event loop is shut down"));
            }
        });
    }

    @Override
    public InetSocketAddress localAddress() {
        return localAddress;
    }

    @Override
    public Mono<EngineCounters> counters() {
        return onLoop(engine::countersSnapshot);
    }

    @Override
    public long droppedDatagrams() {
        return droppedDatagrams.get();
    }

    @Override
    public long unauthenticatedDatagrams() {
        PacketSealer opener = sealer;
        return opener == null ? 0 : opener.unauthenticated();
    }

    @Override
    public long replayedDatagrams() {
        PacketSealer opener = sealer;
        return opener == null ? 0 : opener.replayed();
    }

    @Override
    public long droppedRequests() {
        return droppedRequests.get();
    }

    @Override
    public long eventLoopLagNs() {
        return eventLoopLagNs;
    }

    /** Timers that ran more than {@link #LATE_TIMER_NS} after their deadline and waited for a pass of the loop's I/O. */
    long lateTimers() {
        return lateTimers;
    }

    @Override
    public void dispose() {
        if (!disposed.compareAndSet(false, true)) {
            return;
        }
        if (!runOnLoop(() -> {
            shutdownOnLoop();
            channel.close();
        })) {
            channel.close();
        }
    }

    @Override
    public boolean isDisposed() {
        return disposed.get();
    }

    @Override
    public Mono<Void> drain(Duration gracePeriod) {
        Objects.requireNonNull(gracePeriod, "gracePeriod must not be null");
        if (gracePeriod.isNegative()) {
            throw new IllegalArgumentException("gracePeriod must not be negative, was " + gracePeriod);
        }
        return Mono.defer(() -> {
            draining = true;
            if (!runOnLoop(() -> startDrain(gracePeriod))) {
                drained.tryEmitEmpty(); // the loop is gone: so is the socket
            }
            return drained.asMono();
        });
    }

    @Override
    public boolean isDraining() {
        return draining;
    }

    @Override
    public long refusedRequests() {
        return refusedRequests.get();
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalStateException if the channel is not closed within {@code timeout}
     */
    @Override
    public void disposeNow(Duration timeout) {
        dispose();
        if (eventLoop.inEventLoop()) {
            return;
        }
        onDispose().block(timeout);
        if (channel.isOpen()) {
            throw new IllegalStateException("Homa transport on " + localAddress + " did not close within " + timeout);
        }
    }

    @Override
    public Mono<Void> onDispose() {
        return onDispose.asMono();
    }

    @Override
    public String toString() {
        return "HomaTransport{" + localAddress + ", " + channel.getClass().getSimpleName() + "}";
    }

    /** Calls waiting for their response; for tests. */
    Mono<Integer> pendingCallCount() {
        return onLoop(pendingCalls::size);
    }

    /** The engine's server RPCs held (from the first request DATA until ACK); for tests. */
    Mono<Integer> activeServerRpcs() {
        return onLoop(engine::activeServerRpcs);
    }

    /** The engine's client RPCs in progress; for tests. */
    Mono<Integer> activeClientRpcs() {
        return onLoop(engine::activeClientRpcs);
    }

    private <T> Mono<T> onLoop(Supplier<T> supplier) {
        return Mono.create(sink -> {
            if (!runOnLoop(() -> sink.success(supplier.get()))) {
                sink.error(unavailable("event loop is shut down"));
            }
        });
    }

    /** The largest {@link #eventLoopLagNs()} seen; for tests. */
    long maxEventLoopLagNs() {
        return maxEventLoopLagNs;
    }

    /** The event loop the engine is confined to; for tests. */
    EventLoop eventLoop() {
        return eventLoop;
    }

    /** Busy polls that found work before their deadline, or -1 if the loop does not busy-poll; for tests. */
    long busyPollHits() {
        BusyPollLoops loops = busyPoll;
        return loops == null ? -1 : loops.hits();
    }

    /** The writer that marks packets with their priority; for tests. */
    PriorityTosWriter writer() {
        return writer;
    }

    /** The socket's IP TOS byte as the kernel reports it now (getsockopt); for tests. */
    int socketTrafficClass() {
        return ((DatagramChannel) channel).config().getTrafficClass();
    }

    /** The channel's class, e.g. {@code EpollDatagramChannel}; for tests and diagnostics. */
    Class<? extends Channel> channelType() {
        return channel.getClass();
    }

    // ------------------------------------------------------------------ event loop side

    /** Runs {@code task} on the event loop (now if already there); false if the loop rejected it. */
    private boolean runOnLoop(Runnable task) {
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
    private void requestDrive() {
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
        if (!shuttingDownUntilNs.isEmpty()) {
            long nowNs = clock.nanoTime();
            shuttingDownUntilNs.values().removeIf(untilNs -> nowNs - untilNs >= 0);
        }
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

    /** Hands events to their callers, transmits and re-arms the timer. Runs on the event loop; re-entrant calls fold into the running one. */
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
                    onRequest(request);
                } else if (event instanceof HomaEvent.ResponseReceived response) {
                    PendingCall call = pendingCalls.remove(response.rpcId());
                    if (call != null) {
                        call.sink.success(response.parts());
                    }
                } else if (event instanceof HomaEvent.RpcFailed failed) {
                    PendingCall call = pendingCalls.remove(failed.rpcId());
                    if (failed.reason() == HomaEvent.Reason.SERVER_SHUTTING_DOWN) {
                        // Calls to that server fail at once for a while: it will refuse them too, and
                        // so do those whose request has not left yet (it may be gone when they would).
                        long nowNs = clock.nanoTime();
                        if (shuttingDownUntilNs.put(failed.server(), nowNs + shuttingDownHoldNs) == null) {
                            engine.failUnsentRequests(nowNs, failed.server());
                        }
                    }
                    if (call != null) {
                        call.sink.error(failure(failed));
                    }
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
    private void onIoError(Throwable cause) {
        if (batcher.enabled() && batcher.segmentedSends() > 0 && cause instanceof java.io.IOException) {
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

    private void onRequest(HomaEvent.RequestReceived event) {
        HomaRequestHandler requestHandler = handler;
        if (draining && requestHandler != null && !closed) {
            refuse(event);
            return;
        }
        if (requestHandler == null || closed) {
            droppedRequests.incrementAndGet();
            log.debug("Homa transport on {} dropped request {} from {}: no handler",
                    localAddress, event.rpcId(), event.client());
            if (!closed) {
                engine.abortRequest(clock.nanoTime(), event.client(), event.rpcId());
            }
            return;
        }
        // A long request arrives as the engine's chunks: a composite of them, never joined.
        HomaRequest request = new HomaRequest(event.client(), event.rpcId(), Unpooled.wrappedBuffer(event.parts()));
        Mono<ByteBuf> response = Mono.defer(() -> requestHandler.handle(request));
        Scheduler scheduler = handlerScheduler;
        if (scheduler != null) {
            response = response.subscribeOn(scheduler);
        }
        response.subscribe(new ResponseSubscriber(request));
    }

    /**
     * Refuses a request that arrived complete while draining: the engine forgets it (it never
     * runs) and tells its client at once ({@link HomaEngine#refuseRequest}). On the event loop.
     */
    private void refuse(HomaEvent.RequestReceived event) {
        long nowNs = clock.nanoTime();
        engine.refuseRequest(nowNs, event.client(), event.rpcId());
        refusedRequests.incrementAndGet();
        drainQuietSinceNs = nowNs;
        log.debug("Homa transport on {} refused request {} from {}: shutting down", localAddress, event.rpcId(),
                event.client());
    }

    /** The first {@link #drain} (or a later one with an earlier end); on the event loop. */
    private void startDrain(Duration gracePeriod) {
        if (closed) {
            drained.tryEmitEmpty();
            return;
        }
        long nowNs = clock.nanoTime();
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
        log.debug("Homa transport on {} draining: new requests are refused, {} server RPC(s) held, grace period {}",
                localAddress, engine.activeServerRpcs(), gracePeriod);
        engine.deliverRequests(); // requests held until serving started come out now, and are refused
        engine.refuseFirstContacts();
        requestDrive();
        runDrainCheck();
    }

    /** Ends the drain if it is done or its grace period is over, else looks again soon. On the event loop. */
    private void runDrainCheck() {
        if (drainEnded) {
            return;
        }
        if (closed) {
            drainEnded = true;
            drained.tryEmitEmpty();
            return;
        }
        long nowNs = clock.nanoTime();
        int held = engine.activeServerRpcs();
        boolean done = held == 0 && !engine.hasTransmit() && nowNs - drainQuietSinceNs >= drainQuietNs;
        if (done || nowNs - drainDeadlineNs >= 0) {
            drainEnded = true;
            if (!done) {
                log.info("Homa transport on {}: grace period over with {} server RPC(s) not yet acknowledged",
                        localAddress, held);
            }
            drained.tryEmitEmpty();
            return;
        }
        long untilDeadlineNs = drainDeadlineNs - nowNs;
        eventLoop.schedule(drainCheckTask, Math.min(DRAIN_CHECK_NS, untilDeadlineNs), TimeUnit.NANOSECONDS);
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

    private static long saturatedNanos(Duration duration) {
        try {
            return duration.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE / 4;
        }
    }

    /** Called with the handler's response, on the loop or off it; answers the RPC on the loop. */
    private void respond(HomaRequest request, ByteBuf response) {
        byte[][] parts;
        try {
            parts = MessageParts.of(response);
        } finally {
            ReferenceCountUtil.release(response);
        }
        long lengthBytes = MessageBytes.lengthBytes(parts);
        if (lengthBytes < 1 || lengthBytes > maxMessageBytes) {
            log.warn("Homa handler answered RPC {} from {} with {} bytes, outside 1..{}; request aborted",
                    request.rpcId(), request.client(), lengthBytes, maxMessageBytes);
            abortRequest(request);
            return;
        }
        runOnLoop(() -> {
            if (closed) {
                return;
            }
            if (!engine.sendResponse(clock.nanoTime(), request.client(), request.rpcId(), parts)) {
                log.debug("Homa RPC {} from {} no longer known; response dropped", request.rpcId(), request.client());
            }
            requestDrive();
        });
    }

    /**
     * Gives up a request the handler did not answer: the engine forgets it (never executing it
     * again) and the client's RPC fails at its next RESEND. On the loop or off it.
     */
    private void abortRequest(HomaRequest request) {
        runOnLoop(() -> {
            if (!closed) {
                engine.abortRequest(clock.nanoTime(), request.client(), request.rpcId());
                requestDrive();
            }
        });
    }

    /** Closes the engine: RPCs in flight fail with UNAVAILABLE. Idempotent; runs on the event loop. */
    private void shutdownOnLoop() {
        if (closed) {
            return;
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
        if (!pendingCalls.isEmpty()) {
            List<PendingCall> left = new ArrayList<>(pendingCalls.values());
            pendingCalls.clear();
            for (PendingCall call : left) {
                call.sink.error(unavailable("transport is disposed"));
            }
        }
        drainEnded = true;
        drained.tryEmitEmpty();
    }

    private static HomaException failure(HomaEvent.RpcFailed failed) {
        return switch (failed.reason()) {
            case TIMEOUT -> new HomaTimeoutException(failed.server(), failed.rpcId(), failed.detail());
            case SHUTDOWN -> new HomaException(HomaStatus.UNAVAILABLE, "Homa RPC " + failed.rpcId() + " to "
                    + failed.server() + " failed: transport is disposed (" + failed.detail() + ")");
            case PROTOCOL_ERROR -> new HomaException(HomaStatus.INTERNAL, "Homa RPC " + failed.rpcId() + " to "
                    + failed.server() + " failed: " + failed.detail());
            case SERVER_LOST_RPC -> new HomaException(HomaStatus.UNAVAILABLE, "Homa RPC " + failed.rpcId() + " to "
                    + failed.server() + " failed: " + failed.detail()
                    + "; the server may have executed it (not retried: at-most-once)");
            case SERVER_SHUTTING_DOWN -> new HomaException(HomaStatus.UNAVAILABLE, "Homa RPC " + failed.rpcId() + " to "
                    + failed.server() + " refused: server is shutting down (the request was not executed)");
        };
    }

    private HomaException unavailable(String why) {
        return new HomaException(HomaStatus.UNAVAILABLE, "Homa transport on " + localAddress + ": " + why);
    }

    private static long epochMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    // ------------------------------------------------------------------ helpers

    /** One client RPC from subscribe to its end. */
    private final class PendingCall implements Disposable {
        final InetSocketAddress server;
        final MonoSink<byte[][]> sink;
        private byte @Nullable [][] request;
        private volatile boolean cancelled;
        /** 0 until started; then the engine's rpcid. Event loop only. */
        private long rpcId;

        PendingCall(InetSocketAddress server, byte[][] request, MonoSink<byte[][]> sink) {
            this.server = server;
            this.request = request;
            this.sink = sink;
        }

        /** On the loop. */
        void start() {
            byte[][] parts = request;
            request = null;
            if (cancelled || parts == null) {
                return;
            }
            if (closed) {
                sink.error(unavailable("transport is disposed"));
                return;
            }
            Long untilNs = shuttingDownUntilNs.get(server);
            if (untilNs != null) {
                long nowNs = clock.nanoTime();
                if (untilNs - nowNs > 0) {
                    long agoMs = (shuttingDownHoldNs - (untilNs - nowNs)) / 1_000_000L;
                    sink.error(new HomaException(HomaStatus.UNAVAILABLE, "Homa RPC to " + server
                            + " not sent: server is shutting down (it refused a request " + agoMs + " ms ago; calls to it"
                            + " fail at once for peer-silence-timeout, " + shuttingDownHoldNs / 1_000_000L + " ms)"));
                    return;
                }
                shuttingDownUntilNs.remove(server);
            }
            try {
                rpcId = engine.sendRequest(clock.nanoTime(), server, parts);
            } catch (RuntimeException e) {
                sink.error(new HomaException(HomaStatus.INTERNAL, "Homa engine refused the request: " + e, e));
                return;
            }
            pendingCalls.put(rpcId, this);
            requestDrive();
        }

        /** Cancellation from the subscriber, on any thread. */
        @Override
        public void dispose() {
            cancelled = true;
            runOnLoop(this::cancelOnLoop);
        }

        @Override
        public boolean isDisposed() {
            return cancelled;
        }

        private void cancelOnLoop() {
            if (rpcId != 0 && pendingCalls.get(rpcId) == this) {
                pendingCalls.remove(rpcId);
                if (!closed) {
                    engine.cancel(clock.nanoTime(), rpcId);
                    requestDrive();
                }
            }
        }
    }

    /** Receives a handler's response, on the loop or off it; the request payload lives until the handler's Mono ends. */
    private final class ResponseSubscriber implements CoreSubscriber<ByteBuf> {
        private final HomaRequest request;
        private boolean answered;

        ResponseSubscriber(HomaRequest request) {
            this.request = request;
        }

        @Override
        public void onSubscribe(Subscription subscription) {
            subscription.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(ByteBuf response) {
            if (answered) {
                ReferenceCountUtil.release(response);
                return;
            }
            answered = true;
            try {
                respond(request, response);
            } catch (RuntimeException e) {
                log.warn("Homa transport on {} failed to send the response to RPC {} from {}",
                        localAddress, request.rpcId(), request.client(), e);
            }
        }

        @Override
        public void onError(Throwable error) {
            release();
            log.warn("Homa handler failed on RPC {} from {}; request aborted", request.rpcId(), request.client(), error);
            abortRequest(request);
        }

        @Override
        public void onComplete() {
            release();
            if (!answered) {
                log.warn("Homa handler answered RPC {} from {} with an empty Mono; request aborted",
                        request.rpcId(), request.client());
                abortRequest(request);
            }
        }

        private void release() {
            ReferenceCountUtil.safeRelease(request.payload());
        }
    }

    /** The channel's only handler: datagrams into the engine, never an exception into the pipeline. */
    private static final class DatagramHandler extends ChannelInboundHandlerAdapter {
        /** Set on the event loop by the bind listener, before the channel becomes active. */
        @Nullable NettyHomaTransport transport;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                NettyHomaTransport t = transport;
                if (t != null && msg instanceof DatagramPacket packet) {
                    t.onDatagram(packet);
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            NettyHomaTransport t = transport;
            if (t != null) {
                t.drive();
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            NettyHomaTransport t = transport;
            if (t != null && ctx.channel().isWritable()) {
                t.drive();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            NettyHomaTransport t = transport;
            if (t != null) {
                t.disposed.set(true);
                t.shutdownOnLoop();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            NettyHomaTransport t = transport;
            if (t != null) {
                t.onIoError(cause);
            } else {
                log.debug("Homa transport on {}: I/O error (ignored)", ctx.channel().localAddress(), cause);
            }
        }
    }
}
