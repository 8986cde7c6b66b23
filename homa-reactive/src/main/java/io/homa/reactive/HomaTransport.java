package io.homa.reactive;

import io.homa.engine.EngineCounters;
import io.netty.buffer.ByteBuf;
import java.net.InetSocketAddress;
import java.time.Duration;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * The message layer: one Homa endpoint on one UDP socket, acting as client and server at once.
 * Its {@link io.homa.engine.HomaEngine} is confined to the socket's event loop; handlers and
 * subscribers never run there.
 *
 * <p>STUB: the implementation (a package-private final class) is being written; signatures are final.
 */
public abstract class HomaTransport implements Disposable {

    /**
     * Binds a transport lazily.
     *
     * @param config where to bind and protocol settings
     * @param handler server side: answers requests; {@code null} for a client-only endpoint, whose
     *     incoming requests are dropped and counted
     * @return a {@code Mono} that binds on subscribe and emits the bound transport, or signals an
     *     error if the socket cannot be bound
     */
    public static Mono<HomaTransport> bind(HomaTransportConfig config, HomaRequestHandler handler) {
        return Mono.error(new UnsupportedOperationException("stub"));
    }

    /**
     * Binds and waits.
     *
     * @throws IllegalStateException if binding fails or takes longer than {@code timeout}
     */
    public static HomaTransport bindNow(HomaTransportConfig config, HomaRequestHandler handler, Duration timeout) {
        HomaTransport transport = bind(config, handler).block(timeout);
        if (transport == null) {
            throw new IllegalStateException("Homa transport did not bind within " + timeout);
        }
        return transport;
    }

    /**
     * Sends a request and emits its response. Lazy: nothing is sent before subscribe; cancelling
     * abandons the RPC.
     *
     * @param server the server endpoint
     * @param request the request bytes, 1..maxMessageBytes; the transport releases it
     * @return the response bytes (the subscriber must release them), or an error:
     *     {@link HomaTimeoutException} when the server goes silent, {@link HomaException} with
     *     {@link HomaStatus#INVALID_ARGUMENT} for an empty or oversized request, or with
     *     {@link HomaStatus#UNAVAILABLE} when the transport is disposed
     */
    public abstract Mono<ByteBuf> call(InetSocketAddress server, ByteBuf request);

    /** {@link #call(InetSocketAddress, ByteBuf)} with byte arrays. */
    public abstract Mono<byte[]> call(InetSocketAddress server, byte[] request);

    /** The bound local address (with the actual port when bound to port 0). */
    public abstract InetSocketAddress localAddress();

    /** A snapshot of the engine's counters, taken on the event loop. */
    public abstract Mono<EngineCounters> counters();

    /** Datagrams dropped before the engine saw them (e.g. arriving after dispose). */
    public abstract long droppedDatagrams();

    /** Closes the socket and fails RPCs in flight with {@link HomaStatus#UNAVAILABLE}; waits up to 10 s. */
    public void disposeNow() {
        disposeNow(Duration.ofSeconds(10));
    }

    /** Closes the socket and waits up to {@code timeout}. */
    public abstract void disposeNow(Duration timeout);

    /** Completes when the transport is closed. */
    public abstract Mono<Void> onDispose();
}
