package io.homa.reactive.rpc;

import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.util.Arrays;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

/**
 * One exported method at the RPC layer.
 *
 * @param service service name, not empty
 * @param method method name, not empty
 * @param argumentTypes the parameter types, in order (empty for a method without arguments);
 *     copied
 * @param kind {@link Kind#UNARY} (the publisher has 0..1 items), {@link Kind#STREAM} (a
 *     {@code Flux} the client consumes with {@link HomaClient#stream}), or, for a method with one
 *     {@code Publisher}/{@code Flux} parameter (the request stream, which the client feeds with
 *     {@link HomaClient#channel}), {@link Kind#CLIENT_STREAM} (0..1 result) or
 *     {@link Kind#BIDI_STREAM} (a stream of results). A stream's publisher is requested only what
 *     the client asked for, so it must honour backpressure: a source that ignores demand (e.g.
 *     {@code Flux.interval}) fails with an overflow error unless it has an {@code onBackpressure*}
 *     operator
 * @param idempotent whether running the method twice is harmless (informational: interceptors
 *     and tooling may read it)
 * @param invoker runs the method with the decoded arguments (one per type, elements may be
 *     {@code null}; at {@link #requestStreamIndex()} a {@code Flux} of the request stream's items)
 *     and returns its result. For UNARY an empty publisher means a {@code null}
 *     result. Called where {@code blocking} says
 * @param blocking whether the invoker may block the thread it runs on. {@code false} (a method
 *     that returns a {@code Mono}, {@code Flux} or {@code CompletionStage}): called and subscribed
 *     on the transport's event loop, with no thread hop, so it must not block, as in WebFlux and
 *     RSocket; a request whose payload is longer than the dispatcher's
 *     {@link RpcDispatcher#offloadBytes(int) offload threshold} is decoded and run on the
 *     dispatcher's scheduler instead. {@code true} (a method returning a plain value): called on
 *     the dispatcher's scheduler, one hop there and one back
 */
public record RpcMethod(
        String service,
        String method,
        Type[] argumentTypes,
        Kind kind,
        boolean idempotent,
        Function<@Nullable Object[], ? extends Publisher<?>> invoker,
        boolean blocking) {

    /** How a method answers. */
    public enum Kind {
        /** One response: a {@code Mono} (or a publisher of which only the first item counts). */
        UNARY,
        /** A stream of items, fetched in batches driven by the client's demand. */
        STREAM,
        /**
         * Client streaming: one {@code Publisher} parameter receives the client's items, pushed in
         * batches no larger than the method's demand; the result has 0..1 items.
         */
        CLIENT_STREAM,
        /** Bidirectional streaming: a request stream as {@link #CLIENT_STREAM}, a result stream as {@link #STREAM}. */
        BIDI_STREAM;

        /** Whether the client sends a request stream ({@link #CLIENT_STREAM}, {@link #BIDI_STREAM}). */
        public boolean hasRequestStream() {
            return this == CLIENT_STREAM || this == BIDI_STREAM;
        }
    }

    /**
     * Validates: names must be non-empty, types and invoker non-null, and exactly the request
     * streaming kinds have one {@code Publisher} parameter.
     *
     * @throws IllegalArgumentException if a name is empty, or the {@code Publisher} parameters do
     *     not match {@code kind}
     */
    public RpcMethod {
        Objects.requireNonNull(service, "service must not be null");
        Objects.requireNonNull(method, "method must not be null");
        Objects.requireNonNull(argumentTypes, "argumentTypes must not be null");
        Objects.requireNonNull(kind, "kind must not be null");
        Objects.requireNonNull(invoker, "invoker must not be null");
        if (service.isEmpty()) {
            throw new IllegalArgumentException("service must not be empty");
        }
        if (method.isEmpty()) {
            throw new IllegalArgumentException("method must not be empty");
        }
        argumentTypes = argumentTypes.clone();
        for (int i = 0; i < argumentTypes.length; i++) {
            Objects.requireNonNull(argumentTypes[i], "argumentTypes[" + i + "] must not be null");
        }
        int publishers = 0;
        for (Type type : argumentTypes) {
            if (isPublisher(type)) {
                publishers++;
            }
        }
        if (kind.hasRequestStream() && publishers != 1) {
            throw new IllegalArgumentException(service + "." + method + " is " + kind
                    + " and must have exactly one Publisher (Flux) parameter, has " + publishers);
        }
        if (!kind.hasRequestStream() && publishers != 0) {
            throw new IllegalArgumentException(service + "." + method + " has a Publisher (Flux) parameter, so its kind"
                    + " must be CLIENT_STREAM or BIDI_STREAM, not " + kind);
        }
    }

    /** Whether {@code type} is {@code Publisher}, {@code Flux} or another publisher class, raw or parameterized. */
    static boolean isPublisher(Type type) {
        Type raw = type instanceof ParameterizedType parameterized ? parameterized.getRawType() : type;
        return raw instanceof Class<?> type1 && Publisher.class.isAssignableFrom(type1);
    }

    /**
     * The position of the request stream's parameter ({@link Kind#CLIENT_STREAM},
     * {@link Kind#BIDI_STREAM}), or -1 for a method without one.
     */
    public int requestStreamIndex() {
        if (!kind.hasRequestStream()) {
            return -1;
        }
        for (int i = 0; i < argumentTypes.length; i++) {
            if (isPublisher(argumentTypes[i])) {
                return i;
            }
        }
        throw new IllegalStateException("unreachable: validated in the constructor");
    }

    /**
     * The type of the request stream's items: the type argument of its {@code Publisher}/{@code Flux}
     * parameter ({@code Object} when raw or a wildcard without bound), or {@code null} for a method
     * without a request stream.
     */
    public @Nullable Type requestElementType() {
        int index = requestStreamIndex();
        if (index < 0) {
            return null;
        }
        if (argumentTypes[index] instanceof ParameterizedType parameterized) {
            Type element = parameterized.getActualTypeArguments()[0];
            if (element instanceof WildcardType wildcard) {
                Type[] upper = wildcard.getUpperBounds();
                return upper.length > 0 ? upper[0] : Object.class;
            }
            return element instanceof TypeVariable<?> ? Object.class : element;
        }
        return Object.class;
    }

    /** The types of the arguments carried in the request envelope: all but the request stream's. */
    Type[] wireArgumentTypes() {
        int index = requestStreamIndex();
        if (index < 0) {
            return argumentTypes.clone();
        }
        Type[] types = new Type[argumentTypes.length - 1];
        for (int i = 0, j = 0; i < argumentTypes.length; i++) {
            if (i != index) {
                types[j++] = argumentTypes[i];
            }
        }
        return types;
    }

    /** A method that does not block ({@code blocking = false}). */
    public RpcMethod(String service, String method, Type[] argumentTypes, Kind kind, boolean idempotent,
                     Function<@Nullable Object[], ? extends Publisher<?>> invoker) {
        this(service, method, argumentTypes, kind, idempotent, invoker, false);
    }

    /**
     * A unary, non-idempotent, non-blocking method with at most one argument.
     *
     * @param argumentType type of the single argument, or {@code null} for a method without one
     * @param invoker runs the method with the decoded argument ({@code null} when there is none)
     */
    public RpcMethod(String service, String method, @Nullable Type argumentType,
                     Function<@Nullable Object, ? extends Mono<?>> invoker) {
        this(service, method, argumentType == null ? new Type[0] : new Type[] {argumentType}, Kind.UNARY, false,
                unaryInvoker(invoker));
    }

    /** A unary method that does not block. */
    public static RpcMethod unary(String service, String method, Type[] argumentTypes,
                                  Function<@Nullable Object[], ? extends Publisher<?>> invoker) {
        return new RpcMethod(service, method, argumentTypes, Kind.UNARY, false, invoker);
    }

    /** A streaming method that does not block. */
    public static RpcMethod stream(String service, String method, Type[] argumentTypes,
                                   Function<@Nullable Object[], ? extends Publisher<?>> invoker) {
        return new RpcMethod(service, method, argumentTypes, Kind.STREAM, false, invoker);
    }

    /** A client-streaming method (one {@code Publisher} parameter, 0..1 result) that does not block. */
    public static RpcMethod clientStream(String service, String method, Type[] argumentTypes,
                                         Function<@Nullable Object[], ? extends Publisher<?>> invoker) {
        return new RpcMethod(service, method, argumentTypes, Kind.CLIENT_STREAM, false, invoker);
    }

    /** A bidirectional streaming method (one {@code Publisher} parameter, a stream of results) that does not block. */
    public static RpcMethod bidiStream(String service, String method, Type[] argumentTypes,
                                       Function<@Nullable Object[], ? extends Publisher<?>> invoker) {
        return new RpcMethod(service, method, argumentTypes, Kind.BIDI_STREAM, false, invoker);
    }

    /** A copy with {@code idempotent}. */
    public RpcMethod withIdempotent(boolean idempotent) {
        return new RpcMethod(service, method, argumentTypes, kind, idempotent, invoker, blocking);
    }

    /** A copy with {@code blocking}: whether the invoker runs on the dispatcher's scheduler. */
    public RpcMethod withBlocking(boolean blocking) {
        return new RpcMethod(service, method, argumentTypes, kind, idempotent, invoker, blocking);
    }

    /** The parameter types (a copy). */
    @Override
    public Type[] argumentTypes() {
        return argumentTypes.clone();
    }

    /** The single argument type, or {@code null} when the method has none. */
    public @Nullable Type argumentType() {
        return argumentTypes.length == 0 ? null : argumentTypes[0];
    }

    /** {@code service.method}. */
    public String fullName() {
        return service + "." + method;
    }

    private static Function<@Nullable Object[], Publisher<?>> unaryInvoker(
            Function<@Nullable Object, ? extends Mono<?>> invoker) {
        Objects.requireNonNull(invoker, "invoker must not be null");
        return arguments -> invoker.apply(arguments.length == 0 ? null : arguments[0]);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof RpcMethod that
                && service.equals(that.service)
                && method.equals(that.method)
                && Arrays.equals(argumentTypes, that.argumentTypes)
                && kind == that.kind
                && idempotent == that.idempotent
                && blocking == that.blocking
                && invoker.equals(that.invoker);
    }

    @Override
    public int hashCode() {
        return Objects.hash(service, method, Arrays.hashCode(argumentTypes), kind, idempotent, invoker, blocking);
    }

    @Override
    public String toString() {
        return "RpcMethod{" + service + "." + method + Arrays.toString(argumentTypes) + ", " + kind
                + (idempotent ? ", idempotent" : "") + (blocking ? ", blocking" : "") + "}";
    }
}
