package io.homa.engine;

import java.net.InetSocketAddress;

/** What the engine tells its user, through {@link HomaEngine#pollEvent()}. */
public sealed interface HomaEvent {

    /**
     * Server side: a whole request has arrived and should be executed once. Answer it with
     * {@link HomaEngine#sendResponse(long, InetSocketAddress, long, byte[])}.
     *
     * @param client the client endpoint
     * @param rpcId the client's rpcid (even)
     * @param message the request bytes, now owned by the receiver of the event
     */
    record RequestReceived(InetSocketAddress client, long rpcId, byte[] message) implements HomaEvent {}

    /**
     * Client side: the whole response of an RPC started by
     * {@link HomaEngine#sendRequest(long, InetSocketAddress, byte[])} has arrived.
     *
     * @param rpcId the RPC
     * @param message the response bytes, now owned by the receiver of the event
     */
    record ResponseReceived(long rpcId, byte[] message) implements HomaEvent {}

    /**
     * Client side: the RPC ended without a response.
     *
     * @param rpcId the RPC
     * @param server the server it was sent to
     * @param reason why
     * @param detail a human-readable explanation (peer, silence, ...)
     */
    record RpcFailed(long rpcId, InetSocketAddress server, Reason reason, String detail) implements HomaEvent {}

    /** Why an RPC failed. */
    enum Reason {
        /**
         * The server said nothing about any RPC of ours for {@code peerSilenceTimeoutNs}, RESENDs
         * (backed off) notwithstanding (draft "Timeouts").
         */
        TIMEOUT,
        /**
         * The server no longer knows the RPC although it executed it or gave it up (it answered
         * RPC_UNKNOWN): the response is lost and the request is not sent again, because a second
         * execution would break at-most-once semantics.
         */
        SERVER_LOST_RPC,
        /**
         * The server sent DATA that contradicts earlier DATA of the same response (another message
         * length): the response cannot be trusted.
         */
        PROTOCOL_ERROR,
        /**
         * The server refused the request without executing it because it is shutting down (an
         * RPC_UNKNOWN with this project's reason byte, {@link HomaEngine#refuseRequest}).
         */
        SERVER_SHUTTING_DOWN,
        /** The engine was closed before the RPC ended. */
        SHUTDOWN
    }
}
