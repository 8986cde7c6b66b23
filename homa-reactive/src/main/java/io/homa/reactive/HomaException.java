package io.homa.reactive;

/** Base of every error this library signals to callers; carries a {@link HomaStatus}. */
public class HomaException extends RuntimeException {
    private final HomaStatus status;

    public HomaException(HomaStatus status, String message) {
        super(message);
        this.status = status;
    }

    public HomaException(HomaStatus status, String message, Throwable cause) {
        super(message, cause);
        this.status = status;
    }

    /** The status that describes the failure. */
    public HomaStatus status() {
        return status;
    }
}
