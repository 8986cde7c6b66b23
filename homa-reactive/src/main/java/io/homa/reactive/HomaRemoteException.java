package io.homa.reactive;

import org.jspecify.annotations.Nullable;

/**
 * The server executed (or refused) the call and answered with a status other than OK: the
 * failure happened remotely, and its status, message and (when the server sent it) the class name
 * of the remote exception came back in the response envelope.
 *
 * <p>{@link #getMessage()} is {@code "STATUS: remote message"}; {@link #remoteMessage()} is the
 * remote message alone.
 */
public class HomaRemoteException extends HomaException {
    private final String remoteMessage;
    private final @Nullable String remoteType;

    /** A remote failure without a remote exception type. */
    public HomaRemoteException(HomaStatus status, String message) {
        this(status, message, null);
    }

    /**
     * @param status the status the server answered
     * @param message the server's error message
     * @param remoteType the class name of the exception the server's method threw (response
     *     metadata {@code homa-error-type}), or {@code null} when the server did not say
     */
    public HomaRemoteException(HomaStatus status, String message, @Nullable String remoteType) {
        super(status, status + ": " + message);
        this.remoteMessage = message;
        this.remoteType = remoteType;
    }

    /** The server's error message, without the status prefix. */
    public String remoteMessage() {
        return remoteMessage;
    }

    /**
     * The fully qualified class name of the exception thrown on the server (e.g.
     * {@code java.lang.IllegalStateException}), or {@code null} if the server did not send it.
     */
    public @Nullable String remoteType() {
        return remoteType;
    }
}
