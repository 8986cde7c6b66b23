package io.homa.reactive.rpc;

import java.util.function.Function;
import reactor.core.publisher.Mono;

/**
 * Wraps the dispatcher's handling of each decoded request: metrics, tracing (read trace context
 * from {@link ServerCall#metadata()}), auth. Interceptors run on the transport's handler
 * scheduler, outermost first (the first added sees the call first). Every decoded request passes
 * through them, stream control RPCs included ({@link ServerCall#streamPhase()}); requests that
 * arrive while the dispatcher shuts down, and malformed envelopes, do not.
 */
@FunctionalInterface
public interface HomaServerInterceptor {
    /**
     * @param call the incoming call
     * @param next the rest of the chain (the dispatcher's method invocation at the end); it never
     *     signals an error: failures are error responses
     * @return the response to send; an error signal is turned into an error response as a
     *     method's error would be
     */
    Mono<RpcEnvelope.Response> intercept(ServerCall call, Function<ServerCall, Mono<RpcEnvelope.Response>> next);
}
