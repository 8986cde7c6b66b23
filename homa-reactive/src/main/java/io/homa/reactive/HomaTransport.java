package io.homa.reactive;

import io.homa.engine.EngineCounters;
import io.netty.buffer.ByteBuf;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The message layer: one Homa endpoint on one UDP socket, acting as client and server at once.
 * Its {@link io.homa.engine.HomaEngine} is confined to the socket's event loop; handlers never run
 * there.
 *
 * <p>Threading: request handlers run on the handler scheduler. Responses of {@link #call} are
 * signalled on the event loop, so operators placed directly after a call must not block (use
 * {@code publishOn} for heavy or blocking work). Nothing here blocks the event loop.
 *
 * <p>Sockets run on a shared set of Reactor Netty event loops (daemon threads {@code homa-epoll-N}
 * or {@code homa-nio-N}; as many as processors, at least 2, or the system property
 * {@code homa.ioThreads}), with Netty's native epoll transport when it is available and
 * {@link HomaTransportConfig#nativeTransport()} is set, NIO otherwise. Each new transport takes the
 * next loop in turn. Outgoing packets are paced at {@link HomaTransportConfig#linkMbps()}.
 *
 * <p>IP priorities: with {@link HomaTransportConfig#priorityTos()} (the default) each packet
 * leaves with the engine's priority for it (0..7; control packets 7) in the IP TOS byte as
 * {@code priority << 5}, on epoll and NIO alike.
 */
public abstract class HomaTransport implements Disposable {

    /**
     * Binds a transport lazily; request handlers run on {@link Schedulers#boundedElastic()}.
     *
     * @param config where to bind and protocol settings
     * @param handler server side: answers requests; {@code null} for a client-only endpoint, whose
     *     incoming requests are dropped and counted ({@link #droppedRequests()}) and left
     *     unanswered (see {@link HomaRequestHandler#handle})
     * @return a {@code Mono} that binds on subscribe and emits the bound transport, or signals an
     *     error if the socket cannot be bound ({@link HomaException} with
     *     {@link HomaStatus#UNAVAILABLE}, the cause attached)
     */
    public static Mono<HomaTransport> bind(HomaTransportConfig config, @Nullable HomaRequestHandler handler) {
        return bind(config, handler, Schedulers.boundedElastic());
    }

    /**
     * Binds a transport lazily, running request handlers on {@code handlerScheduler}.
     *
     * @param config where to bind and protocol settings
     * @param handler server side, or {@code null} for a client-only endpoint
     * @param handlerScheduler where {@link HomaRequestHandler#handle} is called (never an event loop)
     * @return a {@code Mono} that binds on subscribe and emits the bound transport
     */
    public static Mono<HomaTransport> bind(
            HomaTransportConfig config, @Nullable HomaRequestHandler handler, Scheduler handlerScheduler) {
        Objects.requireNonNull(config, "config must not be null");
        Objects.requireNonNull(handlerScheduler, "handlerScheduler must not be null");
        return NettyHomaTransport.create(config, handler, handlerScheduler, false);
    }

    /**
     * Binds a transport lazily that holds the requests it receives until {@link #startServing()}:
     * for a server whose application is still starting (the socket is up, so its own calls to
     * other endpoints work, but its services are not all registered yet). Held requests stay with
     * the engine, whose answers to their clients' RESENDs are BUSY, so they neither time out nor
     * execute twice; {@link #startServing()} hands them to {@code handler} in arrival order.
     *
     * @param config where to bind and protocol settings
     * @param handler server side
     * @param handlerScheduler where {@link HomaRequestHandler#handle} is called (never an event loop)
     * @return a {@code Mono} that binds on subscribe and emits the bound transport, not yet serving
     */
    public static Mono<HomaTransport> bindHoldingRequests(
            HomaTransportConfig config, HomaRequestHandler handler, Scheduler handlerScheduler) {
        Objects.requireNonNull(config, "config must not be null");
        Objects.requireNonNull(handler, "handler must not be null");
        Objects.requireNonNull(handlerScheduler, "handlerScheduler must not be null");
        return NettyHomaTransport.create(config, handler, handlerScheduler, true);
    }

    /**
     * Binds and waits.
     *
     * @throws IllegalStateException if binding fails or takes longer than {@code timeout}
     */
    public static HomaTransport bindNow(
            HomaTransportConfig config, @Nullable HomaRequestHandler handler, Duration timeout) {
        return bindNow(config, handler, Schedulers.boundedElastic(), timeout);
    }

    /**
     * Binds with a handler scheduler and waits.
     *
     * @throws IllegalStateException if binding fails or takes longer than {@code timeout}
     */
    public static HomaTransport bindNow(
            HomaTransportConfig config,
            @Nullable HomaRequestHandler handler,
            Scheduler handlerScheduler,
            Duration timeout) {
        HomaTransport transport;
        try {
            transport = bind(config, handler, handlerScheduler).block(timeout);
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

    /**
     * Sends a request and emits its response. Lazy: nothing is sent before subscribe; cancelling
     * abandons the RPC. The request bytes are copied when this method is called and the buffer is
     * released at once, so the returned {@code Mono} may be subscribed again (each subscription is
     * a new RPC).
     *
     * @param server the server endpoint
     * @param request the request bytes, 1..maxMessageBytes; the transport releases it
     * @return the response bytes (the subscriber must release them), or an error:
     *     {@link HomaTimeoutException} when the server goes silent, {@link HomaException} with
     *     {@link HomaStatus#INVALID_ARGUMENT} for an empty or oversized request, or with
     *     {@link HomaStatus#UNAVAILABLE} when the transport is disposed
     */
    public abstract Mono<ByteBuf> call(InetSocketAddress server, ByteBuf request);

    /**
     * {@link #call(InetSocketAddress, ByteBuf)} with byte arrays. The transport keeps
     * {@code request} (no copy) until the RPC ends: do not modify it meanwhile.
     */
    public abstract Mono<byte[]> call(InetSocketAddress server, byte[] request);

    /** The bound local address (with the actual port when bound to port 0). */
    public abstract InetSocketAddress localAddress();

    /** A snapshot of the engine's counters, taken on the event loop. */
    public abstract Mono<EngineCounters> counters();

    /**
     * Starts handing requests to the handler, first those held since
     * {@link #bindHoldingRequests bind}, in arrival order. Idempotent; a transport bound any other
     * way serves from the start.
     */
    public abstract void startServing();

    /** Whether requests go to the handler ({@link #startServing()} called, or bound serving). */
    public abstract boolean isServing();

    /** Datagrams dropped before the engine saw them (e.g. arriving after dispose). */
    public abstract long droppedDatagrams();

    /**
     * Requests the engine delivered that were dropped unanswered because this endpoint has no
     * handler (a client-only endpoint). The base implementation returns 0.
     */
    public long droppedRequests() {
        return 0;
    }

    /**
     * Closes the socket and fails RPCs in flight with {@link HomaStatus#UNAVAILABLE}; waits up to
     * 10 s (does not wait when called on the event loop).
     */
    public void disposeNow() {
        disposeNow(Duration.ofSeconds(10));
    }

    /** Closes the socket and waits up to {@code timeout} (does not wait when called on the event loop). */
    public abstract void disposeNow(Duration timeout);

    /** Completes when the transport is closed. */
    public abstract Mono<Void> onDispose();
}
