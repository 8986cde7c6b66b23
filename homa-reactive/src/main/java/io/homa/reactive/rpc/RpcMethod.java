package io.homa.reactive.rpc;

import java.lang.reflect.Type;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * One exported method at the RPC layer.
 *
 * @param service service name, not empty
 * @param method method name, not empty
 * @param argumentType type of the single argument, or {@code null} for a method without one
 * @param invoker runs the method with the decoded argument ({@code null} when there is none)
 *     and returns its result; called on the dispatcher's scheduler, never on the event loop.
 *     An empty {@code Mono} means a {@code null} result.
 */
public record RpcMethod(
        String service, String method, @Nullable Type argumentType, Function<@Nullable Object, Mono<?>> invoker) {

    /** Validates: names must be non-empty, the invoker non-null. */
    public RpcMethod {
        Objects.requireNonNull(service, "service must not be null");
        Objects.requireNonNull(method, "method must not be null");
        Objects.requireNonNull(invoker, "invoker must not be null");
        if (service.isEmpty()) {
            throw new IllegalArgumentException("service must not be empty");
        }
        if (method.isEmpty()) {
            throw new IllegalArgumentException("method must not be empty");
        }
    }
}
