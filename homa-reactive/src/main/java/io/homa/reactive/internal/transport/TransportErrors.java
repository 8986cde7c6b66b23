package io.homa.reactive.internal.transport;

import io.homa.engine.HomaEvent;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTimeoutException;
import java.net.InetSocketAddress;

/** How the engine's failures and the transport's own reach a caller: as {@link HomaException}s with their status. */
final class TransportErrors {

    private TransportErrors() {}

    /** The exception a client call fails with when the engine gives its RPC up. */
    static HomaException failure(HomaEvent.RpcFailed failed) {
        return switch (failed.reason()) {
            case TIMEOUT -> new HomaTimeoutException(failed.server(), failed.rpcId(), failed.detail());
            case SHUTDOWN -> new HomaException(HomaStatus.UNAVAILABLE, "Homa RPC " + failed.rpcId() + " to "
                    + failed.server() + " failed: transport is disposed (" + failed.detail() + ")");
            case PROTOCOL_ERROR -> new HomaException(HomaStatus.INTERNAL, "Homa RPC " + failed.rpcId() + " to "
                    + failed.server() + " failed: " + failed.detail());
            case SERVER_LOST_RPC -> new HomaException(HomaStatus.UNAVAILABLE, "Homa RPC " + failed.rpcId() + " to "
                    + failed.server() + " failed: " + failed.detail()
                    + "; the server may have executed it (not retried: at-most-once)");
            case SERVER_SHUTTING_DOWN -> new HomaException(HomaStatus.UNAVAILABLE, "Homa RPC " + failed.rpcId() + " to "
                    + failed.server() + " refused: server is shutting down (the request was not executed)",
                    HomaException.Refusal.SHUTTING_DOWN);
            case SERVER_OVERLOADED -> overloaded(failed);
        };
    }

    /**
     * The server refused the call unexecuted because it is full: UNAVAILABLE, and a
     * {@link HomaException.Refusal#OVERLOADED} refusal, which a retry may send again whatever the
     * method (it did not run).
     */
    static HomaException overloaded(HomaEvent.RpcFailed failed) {
        return new HomaException(HomaStatus.UNAVAILABLE, "Homa RPC " + failed.rpcId() + " to " + failed.server()
                + " refused: server overloaded: not executed", HomaException.Refusal.OVERLOADED);
    }

    /** The transport on {@code localAddress} cannot take the call, for the reason {@code why}. */
    static HomaException unavailable(InetSocketAddress localAddress, String why) {
        return new HomaException(HomaStatus.UNAVAILABLE, "Homa transport on " + localAddress + ": " + why);
    }

    /** A call whose request is empty or longer than {@code maxMessageBytes}. */
    static HomaException badRequestLength(long lengthBytes, int maxMessageBytes) {
        // Too long is RESOURCE_EXHAUSTED, as gRPC says of a message over its limit.
        return new HomaException(lengthBytes < 1 ? HomaStatus.INVALID_ARGUMENT : HomaStatus.RESOURCE_EXHAUSTED,
                "request length must be between 1 and " + maxMessageBytes + " bytes (max-message-size), was "
                        + lengthBytes);
    }
}
