package io.homa.reactive.rpc;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Wraps {@link HomaClient} calls: metrics, tracing, retries, circuit breakers, auth headers.
 * Interceptors are applied outermost first (the first in the client's list sees the call first)
 * and wrap the whole call, service resolution included: subscribing to {@code next} again (a
 * retry) resolves the service again and sends a new request.
 */
public interface HomaClientInterceptor {
    /**
     * Wraps a unary call.
     *
     * @param call the call; put request metadata into {@link RpcCall#metadata()} before
     *     subscribing to {@code next}
     * @param next the rest of the chain; lazy
     * @return the publisher the caller (or the next outer interceptor) subscribes to
     */
    <T> Mono<T> interceptUnary(RpcCall call, Mono<T> next);

    /** Wraps a stream call; by default passes it through unchanged. */
    default <T> Flux<T> interceptStream(RpcCall call, Flux<T> next) {
        return next;
    }
}
