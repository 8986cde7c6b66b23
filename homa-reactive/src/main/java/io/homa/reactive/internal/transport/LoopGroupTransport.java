package io.homa.reactive.internal.transport;

import io.homa.engine.EngineCounters;
import io.homa.engine.trace.Timetrace;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.NanoClock;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One endpoint on several event loops: a socket and a {@link io.homa.engine.HomaEngine} per loop,
 * each a {@link NettyHomaTransport} confined to its loop, so that an endpoint uses as many cores as
 * it has loops, as a WebFlux or gRPC server spreads its connections over one loop per core.
 *
 * <p>Serving: one socket per loop on the endpoint's port, all with {@code SO_REUSEPORT}. The kernel
 * hashes each datagram's 4-tuple to one socket of the group, so every packet of a client's RPC (its
 * request DATA, RESENDs, ACKs, NEED_ACK answers) reaches the engine that holds the RPC, for as long
 * as the group's membership is stable. When it changes (a loop's socket closes) a client may move to
 * another engine: the engines share the endpoint's server epoch and address-token key
 * ({@link io.homa.engine.SharedIdentity}), so the client meets the same incarnation and its tokens
 * hold; an RPC in flight on the engine that left fails as it would on a restart (RPC_UNKNOWN), and
 * the RPC layer's at-most-once rules apply as to any server that forgot an RPC.
 *
 * <p>Calling: responses come back to the port a request left from, and the kernel's hash cannot be
 * chosen, so calls do not leave from the shared port: each loop has a second socket on a port of
 * its own, whose engine holds that loop's client RPCs. Calls to one server always leave from the
 * same one of them (a hash of the server's address), so calls to many servers spread over the
 * loops while everything about one server stays in one engine. A client-only endpoint (no
 * handler) has only these, the first on the configured port.
 *
 * <p>What each engine keeps for itself: its RPC table, peer table, grant scheduler (SRPT among the
 * messages arriving on its socket) and pacer (each paces at the link rate; together they may queue
 * up to their number times the NIC queue bound). Packet authentication: each socket seals with its
 * own random 128-bit epoch, so no two loops ever use one key and nonce, and each keeps its own
 * replay windows.
 */
final class LoopGroupTransport extends HomaTransport {
    /** The sockets on the endpoint's port, one per loop; empty for a client-only endpoint. */
    private final List<NettyHomaTransport> servers;
    /** The sockets calls leave from, one per loop, each on a port of its own. */
    private final List<NettyHomaTransport> callers;
    private final List<NettyHomaTransport> all;
    private final InetSocketAddress localAddress;
    private final Timetrace trace;
    private final AtomicBoolean disposing = new AtomicBoolean();

    private LoopGroupTransport(List<NettyHomaTransport> servers, List<NettyHomaTransport> callers, Timetrace trace) {
        this.servers = List.copyOf(servers);
        this.callers = List.copyOf(callers);
        List<NettyHomaTransport> both = new ArrayList<>(servers);
        both.addAll(callers);
        this.all = List.copyOf(both);
        this.localAddress = (servers.isEmpty() ? callers : servers).get(0).localAddress();
        this.trace = trace;
        // The loops live and die together: a socket that closes under us (the channel failed)
        // takes the others with it, so that the group's membership, which the kernel's hash and
        // so every client's choice of engine follows, never changes while the endpoint serves.
        for (NettyHomaTransport member : all) {
            member.onDispose().subscribe(null, e -> dispose(), this::dispose);
        }
    }

    /**
     * Binds {@code count} sockets on {@code bindAddress}'s port with {@code SO_REUSEPORT} (when the
     * endpoint has a handler) and {@code count} caller sockets on ports of their own, each pair on
     * one loop of {@code group}, starting at {@code group.next()}.
     *
     * @param template the first loop's member; the others are copies on their loops
     * @param onClosed run once every socket has closed (disposes loops of the transport's own), or null
     */
    static Mono<HomaTransport> bind(DatagramBootstrap.Member template, InetSocketAddress bindAddress, int count,
            EventLoopGroup group, ChannelOption<Boolean> reusePort, @Nullable Runnable onClosed) {
        TransportSettings settings = template.settings();
        List<EventLoop> loops = loopsFrom(group, template.loop(), count);
        boolean serving = settings.handler() != null;
        TransportSettings callerSettings = new TransportSettings(settings.config(), null, null, settings.loops(),
                settings.clock(), false);
        List<NettyHomaTransport> bound = new ArrayList<>();
        Mono<Void> servers;
        if (serving) {
            int port;
            try {
                port = freePort(bindAddress);
            } catch (IOException e) {
                return Mono.error(new HomaException(HomaStatus.UNAVAILABLE,
                        "cannot bind Homa transport to " + bindAddress + ": " + e, e));
            }
            InetSocketAddress shared = new InetSocketAddress(bindAddress.getAddress(), port);
            servers = Flux.fromIterable(loops)
                    .concatMap(loop -> DatagramBootstrap.bindMember(template.on(loop, settings, reusePort), shared, null))
                    .doOnNext(bound::add)
                    .then();
        } else {
            servers = Mono.empty();
        }
        // A client-only endpoint's first socket takes the configured port (as a one-loop endpoint
        // would), the others ports of their own.
        InetSocketAddress ephemeral = new InetSocketAddress(bindAddress.getAddress(), 0);
        List<NettyHomaTransport> callers = new ArrayList<>();
        Mono<Void> callerSockets = Flux.range(0, loops.size())
                .concatMap(i -> DatagramBootstrap.bindMember(template.on(loops.get(i), callerSettings, null),
                        i == 0 && !serving ? bindAddress : ephemeral, null))
                .doOnNext(callers::add)
                .then();
        return servers.then(callerSockets)
                .then(Mono.fromSupplier(() -> {
                    LoopGroupTransport transport = new LoopGroupTransport(bound, callers, template.trace());
                    if (onClosed != null) {
                        transport.onDispose().subscribe(null, e -> onClosed.run(), onClosed);
                    }
                    return (HomaTransport) transport;
                }))
                .onErrorResume(e -> {
                    // A socket that did not bind: close the ones that did, then dispose our loops.
                    List<NettyHomaTransport> opened = new ArrayList<>(bound);
                    opened.addAll(callers);
                    opened.forEach(NettyHomaTransport::dispose);
                    Mono<Void> closed = Flux.fromIterable(opened).flatMap(NettyHomaTransport::onDispose).then();
                    return closed.then(Mono.fromRunnable(() -> {
                        if (onClosed != null) {
                            onClosed.run();
                        }
                    })).then(Mono.error(e));
                });
    }

    /**
     * {@code count} loops of {@code group}, starting at {@code first} and wrapping around (the same
     * loop more than once if the group has fewer).
     */
    private static List<EventLoop> loopsFrom(EventLoopGroup group, EventLoop first, int count) {
        List<EventLoop> all = new ArrayList<>();
        for (EventExecutor executor : group) {
            all.add((EventLoop) executor);
        }
        int start = Math.max(0, all.indexOf(first));
        List<EventLoop> loops = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            loops.add(all.get((start + i) % all.size()));
        }
        return loops;
    }

    /**
     * The port the group binds: the configured one if no socket holds it, or for port 0 one the
     * kernel picks for a socket without {@code SO_REUSEPORT}. Binding first without it matters: a
     * socket with {@code SO_REUSEPORT} may join another group of the same user on that port (a
     * second instance of the application, or for port 0 the kernel's pick), and the two would then
     * share each other's traffic instead of the second failing with "address in use".
     *
     * @throws IOException if the port is in use
     */
    private static int freePort(InetSocketAddress bindAddress) throws IOException {
        try (DatagramSocket probe = new DatagramSocket(null)) {
            probe.setReuseAddress(false);
            probe.bind(bindAddress);
            return probe.getLocalPort();
        }
    }

    /** The sockets on the endpoint's port (empty for a client-only endpoint). */
    List<NettyHomaTransport> servers() {
        return servers;
    }

    /** The sockets calls leave from. */
    List<NettyHomaTransport> callers() {
        return callers;
    }

    /** Every socket of the endpoint, serving ones first. */
    List<NettyHomaTransport> members() {
        return all;
    }

    /**
     * The caller socket for calls to {@code server}: always the same one (a hash of the address),
     * as a gRPC channel keeps one connection on one loop. One engine then holds everything this
     * endpoint knows of that server: its epoch, its address token, its RTT, whether it is shutting
     * down; and its RPCs to it leave in the order they are made (a stream's pushes).
     */
    private NettyHomaTransport caller(InetSocketAddress server) {
        Objects.requireNonNull(server, "server must not be null");
        int hash = server.hashCode() * 0x9E3779B9;
        return callers.get(Math.floorMod(hash ^ (hash >>> 16), callers.size()));
    }

    private long sum(ToLongFunction<NettyHomaTransport> counter) {
        long total = 0;
        for (NettyHomaTransport member : all) {
            total += counter.applyAsLong(member);
        }
        return total;
    }

    @Override
    public Mono<ByteBuf> call(InetSocketAddress server, ByteBuf request) {
        return caller(server).call(server, request);
    }

    @Override
    public Mono<byte[]> call(InetSocketAddress server, byte[] request) {
        return caller(server).call(server, request);
    }

    @Override
    public Mono<byte[]> call(InetSocketAddress server, byte[] head, byte[] body) {
        return caller(server).call(server, head, body);
    }

    @Override
    public InetSocketAddress localAddress() {
        return localAddress;
    }

    @Override
    public Mono<EngineCounters> counters() {
        return Flux.fromIterable(all).concatMap(NettyHomaTransport::counters).collectList().map(EngineCounters::sum);
    }

    @Override
    public void startServing() {
        servers.forEach(NettyHomaTransport::startServing);
    }

    @Override
    public boolean isServing() {
        return !servers.isEmpty() && servers.stream().allMatch(NettyHomaTransport::isServing);
    }

    @Override
    public String dataPath() {
        return all.get(0).dataPath() + ", " + callers.size() + " event loops"
                + (servers.isEmpty() ? " (client only, a port per loop)"
                        : " (port " + localAddress.getPort() + " shared with SO_REUSEPORT, calls from a port per loop)");
    }

    @Override
    public Timetrace timetrace() {
        return trace;
    }

    @Override
    public NanoClock clock() {
        return all.get(0).clock();
    }

    @Override
    public long droppedDatagrams() {
        return sum(NettyHomaTransport::droppedDatagrams);
    }

    @Override
    public long unauthenticatedDatagrams() {
        return sum(NettyHomaTransport::unauthenticatedDatagrams);
    }

    @Override
    public long replayedDatagrams() {
        return sum(NettyHomaTransport::replayedDatagrams);
    }

    /** The largest lag among the loops. */
    @Override
    public long eventLoopLagNs() {
        long max = 0;
        for (NettyHomaTransport member : all) {
            max = Math.max(max, member.eventLoopLagNs());
        }
        return max;
    }

    @Override
    public long droppedRequests() {
        return sum(NettyHomaTransport::droppedRequests);
    }

    @Override
    public long refusedOverloadedRequests() {
        return sum(NettyHomaTransport::refusedOverloadedRequests);
    }

    @Override
    public long refusedRequests() {
        return sum(NettyHomaTransport::refusedRequests);
    }

    /** Drains every serving socket at once; calls from this endpoint go on meanwhile. */
    @Override
    public Mono<Void> drain(Duration gracePeriod) {
        Objects.requireNonNull(gracePeriod, "gracePeriod must not be null");
        if (gracePeriod.isNegative()) {
            throw new IllegalArgumentException("gracePeriod must not be negative, was " + gracePeriod);
        }
        return Flux.fromIterable(servers).flatMap(server -> server.drain(gracePeriod)).then();
    }

    @Override
    public boolean isDraining() {
        return servers.stream().anyMatch(NettyHomaTransport::isDraining);
    }

    /**
     * Closes every engine first, then every socket: a datagram the kernel hashes to a remaining
     * socket while the group shrinks then meets a closed engine, which drops it, never an engine
     * that would take it for a new RPC (the engines share one epoch, so a client could not tell).
     */
    @Override
    public void dispose() {
        if (!disposing.compareAndSet(false, true)) {
            return;
        }
        Flux.fromIterable(all)
                .flatMap(member -> member.closeEngine().onErrorResume(e -> Mono.empty()))
                .then(Mono.fromRunnable(() -> all.forEach(NettyHomaTransport::dispose)))
                .subscribe(null, e -> all.forEach(NettyHomaTransport::dispose));
    }

    @Override
    public boolean isDisposed() {
        return disposing.get();
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalStateException if a socket is not closed within {@code timeout}
     */
    @Override
    public void disposeNow(Duration timeout) {
        dispose();
        for (NettyHomaTransport member : all) {
            if (member.driver().eventLoop().inEventLoop()) {
                return; // blocking here would hold up the loop that has to close it
            }
        }
        try {
            onDispose().block(timeout);
        } catch (IllegalStateException e) {
            throw new IllegalStateException("Homa transport on " + localAddress + " did not close within " + timeout, e);
        }
    }

    @Override
    public Mono<Void> onDispose() {
        return Flux.fromIterable(all).flatMap(NettyHomaTransport::onDispose).then();
    }

    @Override
    public String toString() {
        return "HomaTransport{" + localAddress + ", " + callers.size() + " loops}";
    }
}
