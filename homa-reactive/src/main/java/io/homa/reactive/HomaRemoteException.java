package io.homa.reactive;

/**
 * The server executed (or refused) the call and answered with a status other than OK: the
 * failure happened remotely, and its status and message came back in the response envelope.
 */
public class HomaRemoteException extends HomaException {
    public HomaRemoteException(HomaStatus status, String message) {
        super(status, status + ": " + message);
    }
}
