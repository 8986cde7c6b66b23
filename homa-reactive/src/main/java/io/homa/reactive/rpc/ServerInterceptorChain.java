package io.homa.reactive.rpc;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import reactor.core.publisher.Mono;

/**
 * A dispatcher's server interceptors, the first added outermost, and the chain they make around
 * a call. Thread-safe: interceptors may be added while requests are served; a call keeps the
 * ones there were when it arrived.
 */
final class ServerInterceptorChain {
    private final List<HomaServerInterceptor> interceptors = new CopyOnWriteArrayList<>();

    void add(HomaServerInterceptor interceptor) {
        interceptors.add(Objects.requireNonNull(interceptor, "interceptor must not be null"));
    }

    /** The interceptors now, outermost first (empty when there are none). */
    List<HomaServerInterceptor> snapshot() {
        return List.copyOf(interceptors);
    }

    /**
     * {@code end} wrapped in {@code snapshot}, the first one outermost; an interceptor that throws
     * or signals an error is answered with the error response for it, as the method would be.
     */
    static Function<ServerCall, Mono<RpcEnvelope.Response>> around(List<HomaServerInterceptor> snapshot,
            Function<ServerCall, Mono<RpcEnvelope.Response>> end, ServerErrors errors) {
        Function<ServerCall, Mono<RpcEnvelope.Response>> chain = end;
        for (int i = snapshot.size() - 1; i >= 0; i--) {
            HomaServerInterceptor interceptor = snapshot.get(i);
            Function<ServerCall, Mono<RpcEnvelope.Response>> next = chain;
            chain = c -> Mono.defer(() -> interceptor.intercept(c, next))
                    .onErrorResume(error -> Mono.just(errors.errorResponse(error, c.fullMethodName())));
        }
        return chain;
    }
}
