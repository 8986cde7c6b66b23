package io.homa.reactive.rpc;

import java.net.InetSocketAddress;
import java.util.Objects;
import reactor.core.publisher.Mono;

/**
 * What a server method may know of the call it serves: names, the client's endpoint, the request
 * metadata, and response metadata it may set. Declare a parameter of this type on a
 * {@code @HomaService} method (it is not a wire argument), or read it from the Reactor
 * {@code Context} under the key {@code HomaCallContext.class} ({@link #current()}), which the
 * dispatcher writes into every method's {@code Mono}/{@code Flux}.
 *
 * <p>Response metadata set before a unary method's result (or error) is sent travels in the
 * response envelope; the caller reads it with {@link HomaClient#callForResponse} (a declarative
 * client: a {@code Mono<HomaResponse<T>>} result). For streaming methods it is not sent.
 */
public final class HomaCallContext {
    private final ServerCall call;
    private final HomaMetadata requestMetadata;
    private final HomaMetadata responseMetadata = HomaMetadata.create();

    /** The context of {@code call}; made by the dispatcher, public for tests of methods. */
    public HomaCallContext(ServerCall call) {
        this.call = Objects.requireNonNull(call, "call must not be null");
        this.requestMetadata = HomaMetadata.readOnlyOf(call.metadata());
    }

    /** The current call's context, from the subscriber's Reactor {@code Context}; empty outside a call. */
    public static Mono<HomaCallContext> current() {
        return Mono.deferContextual(context -> Mono.justOrEmpty(context.getOrEmpty(HomaCallContext.class)));
    }

    /** The service name. */
    public String service() {
        return call.service();
    }

    /** The method name. */
    public String method() {
        return call.method();
    }

    /** The client's endpoint (its Homa port). */
    public InetSocketAddress peer() {
        return call.peer();
    }

    /** The request metadata the client sent, reserved keys left out; read-only. */
    public HomaMetadata requestMetadata() {
        return requestMetadata;
    }

    /** Metadata to send back with a unary response (or its error); mutable until the response leaves. */
    public HomaMetadata responseMetadata() {
        return responseMetadata;
    }

    @Override
    public String toString() {
        return "HomaCallContext{" + call.fullMethodName() + " from " + call.peer() + "}";
    }
}
