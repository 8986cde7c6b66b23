package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.NanoClock;
import io.homa.reactive.internal.rpc.EnvelopeCodec;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import reactor.core.publisher.Mono;

/**
 * The errors a client call ends with: no peer for the service, a response that does not decode,
 * the server's error status, and the call's own deadline passing.
 */
final class ClientErrors {
    private ClientErrors() {}

    /** UNAVAILABLE: the resolver found no endpoint for the call's service. */
    static HomaException noPeer(RpcCall call) {
        return new HomaException(HomaStatus.UNAVAILABLE,
                "no peer for service '" + call.service() + "' (the resolver found none)");
    }

    /** {@code resolved}, or UNAVAILABLE if it completes empty. */
    static Mono<InetSocketAddress> orNoPeer(RpcCall call, Mono<InetSocketAddress> resolved) {
        return resolved.switchIfEmpty(Mono.error(() -> noPeer(call)));
    }

    /** The response in {@code bytes}; INTERNAL if they are not a response envelope. */
    static RpcEnvelope.Response decodeResponse(RpcCall call, byte[] bytes) {
        try {
            return EnvelopeCodec.decodeResponse(bytes);
        } catch (HomaException e) {
            throw badResponse(call, e);
        }
    }

    /**
     * The response in {@code bytes}, its payload in place (a slice of {@code bytes}); INTERNAL if
     * they are not a response envelope.
     */
    static EnvelopeCodec.ResponseView decodeResponseView(RpcCall call, byte[] bytes) {
        try {
            return EnvelopeCodec.decodeResponseView(Unpooled.wrappedBuffer(bytes));
        } catch (HomaException e) {
            throw badResponse(call, e);
        }
    }

    static HomaException badResponse(RpcCall call, HomaException e) {
        return new HomaException(HomaStatus.INTERNAL, "bad response from " + call.fullMethodName() + ": " + e.getMessage(), e);
    }

    static HomaRemoteException remoteException(RpcEnvelope.Response response) {
        return remoteException(response.status(), response.message(), response.metadata());
    }

    static HomaRemoteException remoteException(HomaStatus status, String message, Map<String, String> metadata) {
        return new HomaRemoteException(status, message, metadata.get(RpcMetadata.ERROR_TYPE),
                HomaMetadata.readOnlyOf(metadata).asMap());
    }

    /**
     * The error a call's remote failure reaches its caller as: {@code remote} itself, except that a
     * DEADLINE_EXCEEDED arriving once the call's own deadline has passed here too is the caller's
     * deadline error ({@link #deadlineExceeded}, with {@code remote} as its cause). The server's
     * timer for the deadline the call sent (rounded up to whole milliseconds) may fire before the
     * client's: the caller sees the same error whichever noticed first.
     */
    static HomaException remoteError(RpcCall call, HomaRemoteException remote, long startNs, long timeoutNs,
                                     NanoClock clock) {
        if (remote.status() == HomaStatus.DEADLINE_EXCEEDED && timeoutNs > 0 && clock.nanoTime() - startNs >= timeoutNs) {
            HomaException own = deadlineExceeded(call, timeoutNs);
            own.initCause(remote);
            return own;
        }
        return remote;
    }

    static HomaException deadlineExceeded(RpcCall call, long timeoutNs) {
        return new HomaException(HomaStatus.DEADLINE_EXCEEDED, "deadline of "
                + Duration.ofNanos(timeoutNs).toMillis() + " ms exceeded calling " + call.fullMethodName());
    }
}
