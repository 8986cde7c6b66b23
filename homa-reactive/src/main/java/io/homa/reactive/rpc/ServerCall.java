package io.homa.reactive.rpc;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One incoming RPC as {@link HomaServerInterceptor}s see it: every request the dispatcher
 * decodes, unary calls and stream control RPCs alike (see {@link #streamPhase()}).
 *
 * @param service the service name
 * @param method the method name
 * @param metadata the request metadata (unmodifiable), e.g. trace context and
 *     {@link RpcMetadata#TIMEOUT_MS}; an interceptor may pass a copy with changes to {@code next}
 * @param peer the client's endpoint
 * @param rpcId the client's Homa rpcid
 */
public record ServerCall(String service, String method, Map<String, String> metadata, InetSocketAddress peer,
                         long rpcId) {
    public ServerCall {
        Objects.requireNonNull(service, "service must not be null");
        Objects.requireNonNull(method, "method must not be null");
        metadata = Map.copyOf(Objects.requireNonNull(metadata, "metadata must not be null"));
        Objects.requireNonNull(peer, "peer must not be null");
    }

    /** {@code service.method}. */
    public String fullMethodName() {
        return service + "." + method;
    }

    /**
     * {@code null} for a unary call; for a stream, {@link RpcMetadata#STREAM_OPEN},
     * {@link RpcMetadata#STREAM_NEXT} or {@link RpcMetadata#STREAM_CANCEL}.
     */
    public @Nullable String streamPhase() {
        return metadata.get(RpcMetadata.STREAM);
    }

    /** A copy with other metadata. */
    public ServerCall withMetadata(Map<String, String> metadata) {
        return new ServerCall(service, method, metadata, peer, rpcId);
    }
}
