package io.homa.reactive.rpc;

import java.lang.reflect.Type;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * One client call as {@link HomaClientInterceptor}s see it. {@link #metadata()} is mutable: what an
 * interceptor puts there before the request is sent (i.e. before it subscribes to the
 * {@code next} publisher) travels in the request envelope, e.g. trace context. The same object is
 * reused when the call's publisher is subscribed again (a retry), so interceptors should
 * {@code put} (replace) rather than assume an empty map. Keys starting with {@code homa-} are
 * reserved and rejected when the request is sent.
 */
public final class RpcCall {
    private final String service;
    private final String method;
    private final @Nullable Object[] arguments;
    private final Type responseType;
    private final CallOptions options;
    private final boolean streaming;
    private final Map<String, String> metadata;

    /**
     * A call description; {@link HomaClient} makes one per call. Public for interceptor tests.
     *
     * @param arguments the arguments (not copied; elements may be {@code null})
     * @param responseType the result type, or the element type of a stream
     * @param streaming whether this is a stream call
     */
    public RpcCall(String service, String method, @Nullable Object[] arguments, Type responseType,
                   CallOptions options, boolean streaming) {
        this.service = Objects.requireNonNull(service, "service must not be null");
        this.method = Objects.requireNonNull(method, "method must not be null");
        this.arguments = Objects.requireNonNull(arguments, "arguments must not be null");
        this.responseType = Objects.requireNonNull(responseType, "responseType must not be null");
        this.options = Objects.requireNonNull(options, "options must not be null");
        this.streaming = streaming;
        // ConcurrentHashMap's copy constructor makes a table even for an empty map; this one waits
        // for the first entry (most calls carry none).
        Map<String, String> initial = options.metadata();
        this.metadata = initial.isEmpty() ? new ConcurrentHashMap<>() : new ConcurrentHashMap<>(initial);
    }

    /** The service name. */
    public String service() {
        return service;
    }

    /** The method name. */
    public String method() {
        return method;
    }

    /** The arguments (a copy; elements may be {@code null}). */
    public @Nullable Object[] arguments() {
        return arguments.clone();
    }

    /** The result type, or the element type of a stream. */
    public Type responseType() {
        return responseType;
    }

    /** The call's options. */
    public CallOptions options() {
        return options;
    }

    /** Request metadata, starting with {@link CallOptions#metadata()}; mutable, thread-safe. */
    public Map<String, String> metadata() {
        return metadata;
    }

    /** Whether this is a {@link HomaClient#stream} call. */
    public boolean streaming() {
        return streaming;
    }

    /** {@code service.method}. */
    public String fullMethodName() {
        return service + "." + method;
    }

    @Override
    public String toString() {
        return "RpcCall{" + service + "." + method + (streaming ? ", stream" : "") + ", arguments="
                + Arrays.toString(arguments) + "}";
    }
}
