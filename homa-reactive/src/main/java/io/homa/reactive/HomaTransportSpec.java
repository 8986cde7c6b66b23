package io.homa.reactive;

import io.homa.reactive.internal.transport.NettyHomaTransport;
import io.homa.reactive.internal.transport.TransportSettings;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.netty.resources.LoopResources;

/**
 * What a {@link HomaTransport} binds with, in the shape of Reactor Netty's {@code UdpServer}: an
 * immutable value where every setter returns a new instance, so a spec may be shared and
 * customized without surprises. Made by {@link HomaTransport#create(HomaTransportConfig)}.
 *
 * <ul>
 *   <li>{@link #runOn(LoopResources)}: the event loops to run on, owned by the caller (a Spring
 *       context, a test), who disposes them. Without it the transport creates
 *       {@link HomaTransportConfig#resolvedLoops()} loops of its own and disposes them with itself.
 *   <li>{@link #clock(NanoClock)}: the clock for the engine, the pacer, timers and deadlines
 *       (default {@link NanoClock#system()}).
 *   <li>{@link #handler(HomaRequestHandler)} and {@link #handlerScheduler(Scheduler)}: the server
 *       side (default: none, a client-only endpoint; the handler called on the event loop).
 *   <li>{@link #holdRequests(boolean)}: bind with received requests held by the engine until
 *       {@link HomaTransport#startServing()} (for an application still starting).
 * </ul>
 */
public final class HomaTransportSpec {

    private final HomaTransportConfig config;
    private final @Nullable HomaRequestHandler handler;
    private final @Nullable Scheduler handlerScheduler;
    private final @Nullable LoopResources loops;
    private final NanoClock clock;
    private final boolean holdRequests;

    private HomaTransportSpec(HomaTransportConfig config, @Nullable HomaRequestHandler handler,
            @Nullable Scheduler handlerScheduler, @Nullable LoopResources loops, NanoClock clock, boolean holdRequests) {
        this.config = config;
        this.handler = handler;
        this.handlerScheduler = handlerScheduler;
        this.loops = loops;
        this.clock = clock;
        this.holdRequests = holdRequests;
    }

    static HomaTransportSpec of(HomaTransportConfig config) {
        Objects.requireNonNull(config, "config must not be null");
        return new HomaTransportSpec(config, null, null, null, NanoClock.system(), false);
    }

    /** The same spec with other settings (where to bind, protocol settings). */
    public HomaTransportSpec config(HomaTransportConfig value) {
        Objects.requireNonNull(value, "config must not be null");
        return new HomaTransportSpec(value, handler, handlerScheduler, loops, clock, holdRequests);
    }

    /**
     * The server side: answers requests. Without one the endpoint is client-only: requests it
     * receives are dropped and counted ({@link HomaTransport#droppedRequests()}).
     */
    public HomaTransportSpec handler(@Nullable HomaRequestHandler value) {
        return new HomaTransportSpec(config, value, handlerScheduler, loops, clock, holdRequests);
    }

    /**
     * Where {@link HomaRequestHandler#handle} is called and its {@code Mono} subscribed:
     * {@code null} (the default) for the transport's event loop, with no thread hop, where the
     * handler must not block; otherwise this scheduler, one hop there and one back per request.
     */
    public HomaTransportSpec handlerScheduler(@Nullable Scheduler value) {
        return new HomaTransportSpec(config, handler, value, loops, clock, holdRequests);
    }

    /**
     * Runs on these event loops ({@link HomaTransportConfig#resolvedLoops()} of them, starting at the
     * next in turn; a loop twice if they are fewer), which the caller owns and disposes
     * after the transport; the epoll or NIO group is chosen by {@link HomaTransportConfig#nativeTransport()}.
     */
    public HomaTransportSpec runOn(LoopResources value) {
        Objects.requireNonNull(value, "loops must not be null");
        return new HomaTransportSpec(config, handler, handlerScheduler, value, clock, holdRequests);
    }

    /** The clock of the engine, the pacer, the timers and the RPC layer's deadlines. */
    public HomaTransportSpec clock(NanoClock value) {
        Objects.requireNonNull(value, "clock must not be null");
        return new HomaTransportSpec(config, handler, handlerScheduler, loops, value, holdRequests);
    }

    /**
     * Whether requests are held by the engine until {@link HomaTransport#startServing()}: held
     * requests stay in service (their clients' RESENDs are answered BUSY, so they neither time
     * out nor execute twice) and are handed to the handler in arrival order. Default false.
     */
    public HomaTransportSpec holdRequests(boolean value) {
        return new HomaTransportSpec(config, handler, handlerScheduler, loops, clock, value);
    }

    public HomaTransportConfig config() {
        return config;
    }

    /**
     * Binds lazily.
     *
     * @return a {@code Mono} that binds on subscribe and emits the bound transport, or signals
     *     {@link HomaException} with {@link HomaStatus#UNAVAILABLE} (the cause attached) if the
     *     socket cannot be bound
     */
    public Mono<HomaTransport> bind() {
        return NettyHomaTransport.bind(
                new TransportSettings(config, handler, handlerScheduler, loops, clock, holdRequests));
    }

    /**
     * Binds and waits.
     *
     * @throws IllegalStateException naming the address if binding fails or takes longer than
     *     {@code timeout}
     */
    public HomaTransport bindNow(Duration timeout) {
        HomaTransport transport;
        try {
            transport = bind().block(timeout);
        } catch (RuntimeException e) {
            Throwable cause = Exceptions.unwrap(e);
            throw new IllegalStateException("Homa transport could not bind to " + config.bindAddress() + ":"
                    + config.port() + ": " + cause.getMessage(), cause);
        }
        if (transport == null) {
            throw new IllegalStateException("Homa transport did not bind within " + timeout);
        }
        return transport;
    }
}
