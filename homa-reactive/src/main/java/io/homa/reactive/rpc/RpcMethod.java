package io.homa.reactive.rpc;

import java.lang.reflect.Type;
import java.util.function.Function;
import reactor.core.publisher.Mono;

/**
 * One exported method at the RPC layer.
 *
 * @param service service name
 * @param method method name
 * @param argumentType type of the single argument, or {@code null} for a method without one
 * @param invoker runs the method with the decoded argument ({@code null} when there is none)
 *     and returns its result; called on the dispatcher's scheduler, never on the event loop.
 *     An empty {@code Mono} means a {@code null} result.
 */
public record RpcMethod(String service, String method, Type argumentType, Function<Object, Mono<?>> invoker) {}
