package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Exceptions;

/**
 * The server's error responses: what a failed call answers, from the {@link RpcExceptionMapper}s
 * (asked in the order they were added), a {@link HomaException}'s own status, or INTERNAL.
 * Thread-safe: mappers may be added while requests are served.
 */
final class ServerErrors {
    private static final Logger log = LoggerFactory.getLogger(RpcDispatcher.class);

    private final List<RpcExceptionMapper> mappers = new CopyOnWriteArrayList<>();

    void add(RpcExceptionMapper mapper) {
        mappers.add(Objects.requireNonNull(mapper, "mapper must not be null"));
    }

    /** The error response for {@code error}: mapped status and message, and the exception's type. */
    RpcEnvelope.Response errorResponse(Throwable error, String what) {
        Throwable cause = Exceptions.unwrap(error);
        HomaException mapped = map(cause);
        RpcEnvelope.Response response;
        if (mapped != null) {
            log.debug("Homa RPC {} answered {}: {}", what, mapped.status(), mapped.getMessage());
            response = RpcEnvelope.Response.error(mapped.status(), message(mapped));
        } else {
            log.warn("Homa RPC {} failed", what, cause);
            response = RpcEnvelope.Response.error(HomaStatus.INTERNAL, describe(cause));
        }
        return response.withMetadata(RpcMetadata.ERROR_TYPE, cause.getClass().getName());
    }

    private @Nullable HomaException map(Throwable error) {
        for (RpcExceptionMapper mapper : mappers) {
            HomaException mapped;
            try {
                mapped = mapper.map(error);
            } catch (RuntimeException e) {
                log.warn("Homa exception mapper {} failed on {}", mapper, error.getClass().getName(), e);
                continue;
            }
            if (mapped != null) {
                return mapped;
            }
        }
        if (error instanceof RejectedExecutionException) {
            return new HomaException(HomaStatus.RESOURCE_EXHAUSTED,
                    "the server's scheduler is full and rejected the call: " + describe(error));
        }
        return error instanceof HomaException homa ? homa : null;
    }

    private static String message(HomaException error) {
        if (error instanceof HomaRemoteException remote) {
            return remote.remoteMessage();
        }
        return String.valueOf(error.getMessage());
    }

    /** {@code "ExceptionType: message"}, or just the type when there is no message. */
    static String describe(Throwable error) {
        String type = error.getClass().getSimpleName();
        if (type.isEmpty()) {
            type = error.getClass().getName();
        }
        String message = error.getMessage();
        return message == null ? type : type + ": " + message;
    }

    /** What a call gets when the server is shutting down. */
    static HomaException unavailable() {
        return new HomaException(HomaStatus.UNAVAILABLE, "server is shutting down");
    }
}
