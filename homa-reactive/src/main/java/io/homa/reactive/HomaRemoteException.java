package io.homa.reactive;

import java.util.Map;
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
    private final Map<String, String> metadata;

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
        this(status, message, remoteType, Map.of());
    }

    /**
     * @param metadata the response metadata the server's method set before failing (its
     *     "trailers"), reserved keys left out; copied
     */
    public HomaRemoteException(HomaStatus status, String message, @Nullable String remoteType,
                               Map<String, String> metadata) {
        super(status, status + ": " + message);
        this.remoteMessage = message;
        this.remoteType = remoteType;
        this.metadata = Map.copyOf(metadata);
    }

    /**
     * The response metadata sent with the error (what the method set in its call context's response
     * metadata, binary values base64 under keys ending in {@code -bin}); empty when none.
     */
    public Map<String, String> metadata() {
        return metadata;
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
