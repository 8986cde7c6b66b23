package io.homa.reactive;

import org.jspecify.annotations.Nullable;

/** Base of every error this library signals to callers; carries a {@link HomaStatus}. */
public class HomaException extends RuntimeException {
    private final HomaStatus status;
    private final @Nullable Refusal refusal;

    public HomaException(HomaStatus status, String message) {
        this(status, message, (Refusal) null);
    }

    public HomaException(HomaStatus status, String message, Throwable cause) {
        super(message, cause);
        this.status = status;
        this.refusal = null;
    }

    /**
     * A call the server refused without executing it (or that was never sent for that reason).
     *
     * @param refusal why the server refused, or {@code null} for any other failure
     */
    public HomaException(HomaStatus status, String message, @Nullable Refusal refusal) {
        super(message);
        this.status = status;
        this.refusal = refusal;
    }

    /** The status that describes the failure. */
    public HomaStatus status() {
        return status;
    }

    /**
     * Why the server refused the call without executing it, or {@code null} when the failure is not
     * such a refusal (the request may or may not have run).
     */
    public @Nullable Refusal refusal() {
        return refusal;
    }

    /**
     * Whether the request is known not to have run: the server refused it unexecuted
     * ({@link #refusal()} is set), so sending it again, even for a method that is not idempotent,
     * cannot run it twice. Resilience4j's retry in the starter retries such calls for every method.
     */
    public boolean notExecuted() {
        return refusal != null;
    }

    /** Why a server refused a request unexecuted (the reason byte of its RPC_UNKNOWN, docs/protocol.md). */
    public enum Refusal {
        /**
         * The server is draining ({@link HomaTransport#drain}): UNAVAILABLE "server is shutting
         * down"; this client also fails new calls to it at once for {@code peer-silence-timeout}.
         */
        SHUTTING_DOWN,
        /**
         * The server is full (requests in service or queued work over its bounds): UNAVAILABLE
         * "server overloaded: not executed". Momentary: other calls to that server go on, and a
         * retry after a backoff may well succeed.
         */
        OVERLOADED
    }
}
