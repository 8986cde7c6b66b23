package io.homa.reactive.internal.transport;

import io.homa.engine.EngineConfig;
import io.homa.engine.EngineCounters;
import io.homa.engine.HomaEngine;
import io.homa.engine.trace.Timetrace;
import io.homa.reactive.HomaSecurityConfig;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.NanoClock;
import io.homa.reactive.internal.security.PacketSealer;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.DatagramChannelConfig;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * The {@link HomaTransport}: one Netty datagram channel on one event loop, driving one
 * {@link HomaEngine}. This class only wires its parts together and answers the public API from
 * them:
 * <ul>
 *   <li>{@link DatagramBootstrap} binds the channel and chooses its offloads, with
 *       {@link LinkProbe} deriving the engine's settings from the bound device;
 *   <li>{@link EngineDriver} runs the loop's duty cycle: received datagrams into the engine, the
 *       engine's events to their owners, its packets out ({@link GsoBatcher},
 *       {@link PriorityTosWriter}, {@link PacketSealer}), its timer and the lag probe;
 *   <li>{@link PendingCalls} holds the client calls, {@link RequestDispatch} hands requests to the
 *       handler and its responses back, and {@link Drain} runs a graceful shutdown's first step;
 *   <li>{@link TransportErrors} maps failures to {@link io.homa.reactive.HomaException}s.
 * </ul>
 */
public final class NettyHomaTransport extends HomaTransport {
    private static final Logger log = LoggerFactory.getLogger(NettyHomaTransport.class);

    /** Whether the WARN about an unauthenticated endpoint on a non-loopback address was logged (once per JVM). */
    private static final AtomicBoolean UNAUTHENTICATED_WARNED = new AtomicBoolean();

    private final Channel channel;
    private final InetSocketAddress localAddress;
    private final NanoClock clock;
    private final String dataPath;
    /** The transport's own loops when they busy-poll ({@link HomaTransportConfig#busyPollNs()}), else null. */
    private final @Nullable BusyPollLoops busyPoll;
    private final @Nullable PacketSealer sealer;
    private final AtomicBoolean disposed = new AtomicBoolean();
    private final Sinks.Empty<Void> onDispose = Sinks.empty();
    private volatile boolean serving;
    private final EngineDriver driver;
    private final PendingCalls calls;
    private final RequestDispatch requests;
    private final Drain drain;
    private final Timetrace trace;

    /**
     * Runs on the event loop, in the bind listener, before the first datagram is read.
     *
     * @param member what this socket binds with: settings, loop, the endpoint's shared identity and timetrace
     * @param gsoBatchBytes the longest GSO send, bytes, 0 without GSO ({@link GsoBatcher})
     */
    NettyHomaTransport(DatagramBootstrap.Member member, Channel channel, int gsoBatchBytes) {
        TransportSettings settings = member.settings();
        HomaTransportConfig config = settings.config();
        EngineConfig engineConfig = member.engineConfig();
        this.channel = channel;
        this.localAddress = (InetSocketAddress) channel.localAddress();
        this.clock = settings.clock();
        this.busyPoll = member.busyPoll();
        DatagramChannelConfig channelConfig = ((DatagramChannel) channel).config();
        boolean priorityTos = config.priorityTos().enabledFor(localAddress.getAddress());
        PriorityTosWriter writer = new PriorityTosWriter(channel, priorityTos,
                priorityTos ? channelConfig.getTrafficClass() : 0, channelConfig::setTrafficClass);
        HomaSecurityConfig security = config.security();
        GsoBatcher batcher = new GsoBatcher(channel.alloc(), writer::write,
                engineConfig.maxDatagramBytes() + security.overheadBytes(), gsoBatchBytes);
        this.dataPath = DatagramBootstrap.describe(channel, engineConfig, batcher, priorityTos, security,
                busyPoll == null ? 0 : busyPoll.busyPollNs());
        // rpcids an off-path host cannot guess: a random start within the microsecond and random
        // steps, from a generator seeded once by the system's CSPRNG. Each socket's sealer draws
        // its own random epoch, so that the loops of one endpoint never seal under one nonce.
        SecureRandom seed = new SecureRandom();
        this.sealer = security.enabled() ? new PacketSealer(security, localAddress, seed) : null;
        if (!security.enabled() && !localAddress.getAddress().isLoopbackAddress()
                && UNAUTHENTICATED_WARNED.compareAndSet(false, true)) {
            log.warn("Homa transport bound to {} without packet authentication: anyone who can send UDP datagrams to"
                    + " this port can talk to it and forge peers' packets. Set homa.security.mode=authenticate (or"
                    + " encrypt) with shared keys, or bind to an address inside a network you trust", localAddress);
        }
        this.trace = member.trace();
        HomaEngine engine = new HomaEngine(engineConfig, localAddress.getPort(), firstRpcId(seed),
                new SplittableRandom(seed.nextLong()), trace, member.shared());
        if (settings.holdRequests()) {
            engine.holdRequests();
        }
        this.serving = !settings.holdRequests();
        this.driver = new EngineDriver(channel, engine, clock, new PacketOutput(localAddress, writer, batcher, sealer), sealer);
        this.calls = new PendingCalls(driver, config.engine().maxMessageBytes(), disposed,
                engineConfig.peerSilenceTimeoutNs(), trace);
        this.drain = new Drain(driver, engineConfig.resendIntervalNs());
        this.requests = new RequestDispatch(driver, drain, settings.handler(), settings.handlerScheduler(),
                config.engine().maxMessageBytes(), trace);
        channel.closeFuture().addListener(future -> onDispose.tryEmitEmpty());
        driver.start(calls, requests);
    }

    /**
     * Binds a transport with {@code settings}, as {@link io.homa.reactive.HomaTransportSpec#bind()}
     * does ({@link DatagramBootstrap}).
     */
    public static Mono<HomaTransport> bind(TransportSettings settings) {
        return DatagramBootstrap.bind(settings);
    }

    /**
     * A first client rpcid: clock-derived ({@link HomaEngine#clockDerivedFirstRpcId}), so that a
     * restarted endpoint does not reuse its predecessor's, plus a random even offset within the
     * microsecond.
     */
    static long firstRpcId() {
        return firstRpcId(new SecureRandom());
    }

    private static long firstRpcId(SecureRandom seed) {
        return HomaEngine.clockDerivedFirstRpcId(epochMicros())
                + 2L * seed.nextInt(1 << (HomaEngine.RPC_ID_CLOCK_SHIFT - 1));
    }

    private static long epochMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    /** The duty cycle this transport runs on its loop. */
    EngineDriver driver() {
        return driver;
    }

    /** The client calls waiting for their response. */
    PendingCalls calls() {
        return calls;
    }

    /** The sealer's epoch, or null without packet authentication. */
    byte @Nullable [] sealerEpoch() {
        PacketSealer own = sealer;
        return own == null ? null : own.epoch();
    }

    /** The transport's own loops when they busy-poll, else null. */
    @Nullable BusyPollLoops busyPoll() {
        return busyPoll;
    }

    /** The channel went inactive (closed by us or under us): the engine closes. On the event loop. */
    void onChannelInactive() {
        disposed.set(true);
        closeOnLoop();
    }

    /**
     * Closes the engine but leaves the socket open (datagrams are then dropped and counted), for a
     * loop group that closes all its engines before any socket ({@link LoopGroupTransport#dispose()}).
     */
    Mono<Void> closeEngine() {
        return driver.onLoop(() -> {
            closeOnLoop();
            return Boolean.TRUE;
        }).then();
    }

    /** Closes the engine: RPCs in flight fail with UNAVAILABLE. Idempotent; runs on the event loop. */
    private void closeOnLoop() {
        if (driver.close()) {
            calls.failAll();
            drain.onClosed();
        }
    }

    // ------------------------------------------------------------------ public API

    @Override
    public void startServing() {
        if (serving) {
            return;
        }
        serving = true;
        driver.runOnLoop(() -> {
            if (!driver.isClosed()) {
                driver.engine().deliverRequests();
                driver.requestDrive();
            }
        });
    }

    @Override
    public boolean isServing() {
        return serving;
    }

    @Override
    public String dataPath() {
        return dataPath;
    }

    @Override
    public Timetrace timetrace() {
        return trace;
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
        return callParts(server, parts).map(this::composite);
    }

    @Override
    public Mono<byte[]> call(InetSocketAddress server, byte[] request) {
        Objects.requireNonNull(request, "request must not be null");
        return callParts(server, new byte[][] {request}).map(this::joined);
    }

    @Override
    public Mono<byte[]> call(InetSocketAddress server, byte[] head, byte[] body) {
        Objects.requireNonNull(head, "head must not be null");
        Objects.requireNonNull(body, "body must not be null");
        return callParts(server, new byte[][] {head, body}).map(this::joined);
    }

    /** A response's parts as one buffer whose chunks go back to the engine's pool when it is released. */
    private ByteBuf composite(byte[][] received) {
        return ReceivedMessage.of(received, driver.engine().chunkPool());
    }

    /** A response's parts joined into one array; pooled chunks are given back at once. */
    private byte[] joined(byte[][] received) {
        return ReceivedMessage.joined(received, driver.engine().chunkPool());
    }

    private Mono<byte[][]> callParts(InetSocketAddress server, byte[][] parts) {
        Objects.requireNonNull(server, "server must not be null");
        return calls.call(server, parts);
    }

    @Override
    public InetSocketAddress localAddress() {
        return localAddress;
    }

    @Override
    public Mono<EngineCounters> counters() {
        return driver.onLoop(driver.engine()::countersSnapshot);
    }

    @Override
    public long droppedDatagrams() {
        return driver.droppedDatagrams();
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
        return requests.droppedRequests();
    }

    @Override
    public long eventLoopLagNs() {
        return driver.eventLoopLagNs();
    }

    @Override
    public Mono<Void> drain(Duration gracePeriod) {
        Objects.requireNonNull(gracePeriod, "gracePeriod must not be null");
        if (gracePeriod.isNegative()) {
            throw new IllegalArgumentException("gracePeriod must not be negative, was " + gracePeriod);
        }
        return drain.drain(gracePeriod);
    }

    @Override
    public boolean isDraining() {
        return drain.isDraining();
    }

    @Override
    public long refusedRequests() {
        return drain.refusedRequests();
    }

    @Override
    public long refusedOverloadedRequests() {
        return requests.refusedOverloadedRequests();
    }

    @Override
    public void dispose() {
        if (!disposed.compareAndSet(false, true)) {
            return;
        }
        if (!driver.runOnLoop(() -> {
            closeOnLoop();
            channel.close();
        })) {
            channel.close();
        }
    }

    @Override
    public boolean isDisposed() {
        return disposed.get();
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalStateException if the channel is not closed within {@code timeout}
     */
    @Override
    public void disposeNow(Duration timeout) {
        dispose();
        if (driver.eventLoop().inEventLoop()) {
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
}
