package io.homa.bench.systems;

import io.grpc.Status;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTimeoutException;
import java.util.Locale;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * What a failed call was, in each system's own terms, for S11: timed out (the caller's deadline
 * passed, or the server answered that it had), refused (the server said it would not do the work
 * now), or anything else.
 */
public enum FailureKind {
    /** The deadline passed: {@link TimeoutException} (the caller's timer), gRPC and Homa DEADLINE_EXCEEDED, Homa's peer silence. */
    TIMEOUT,
    /**
     * The server refused the call: gRPC RESOURCE_EXHAUSTED or UNAVAILABLE, Homa UNAVAILABLE or
     * RESOURCE_EXHAUSTED, RSocket REJECTED or an application error from a scheduler that rejected the work.
     */
    REFUSED,
    /** Anything else. */
    OTHER;

    /** The report's name: {@code timeout}, {@code refused} or {@code other}. */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The kind of {@code error}, a call's failure (wrapped in completion exceptions or not). */
    public static FailureKind of(Throwable error) {
        Throwable cause = error;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof TimeoutException) {
            return TIMEOUT;
        }
        if (cause instanceof HomaTimeoutException) {
            return TIMEOUT; // status UNAVAILABLE, but the server went silent: nothing was refused
        }
        if (cause instanceof HomaException homa) {
            return of(homa.status());
        }
        if (cause instanceof io.grpc.StatusRuntimeException || cause instanceof io.grpc.StatusException) {
            return switch (Status.fromThrowable(cause).getCode()) {
                case DEADLINE_EXCEEDED -> TIMEOUT;
                case RESOURCE_EXHAUSTED, UNAVAILABLE -> REFUSED;
                default -> OTHER;
            };
        }
        if (cause instanceof io.rsocket.exceptions.RejectedException) {
            return REFUSED;
        }
        if (cause instanceof io.rsocket.exceptions.ApplicationErrorException) {
            // A handler's scheduler that rejected the work (Reactor: "Scheduler unavailable",
            // RejectedExecutionException) reaches the caller as an application error with its message.
            String message = String.valueOf(cause.getMessage()).toLowerCase(Locale.ROOT);
            return message.contains("rejected") || message.contains("scheduler unavailable") ? REFUSED : OTHER;
        }
        return OTHER;
    }

    static FailureKind of(HomaStatus status) {
        return switch (status) {
            case DEADLINE_EXCEEDED -> TIMEOUT;
            case UNAVAILABLE, RESOURCE_EXHAUSTED -> REFUSED;
            default -> OTHER;
        };
    }
}
