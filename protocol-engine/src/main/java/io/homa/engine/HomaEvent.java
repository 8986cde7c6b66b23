package io.homa.engine;

import java.net.InetSocketAddress;
import java.util.Objects;

/** What the engine tells its user, through {@link HomaEngine#pollEvent()}. */
public sealed interface HomaEvent {

    /**
     * Server side: a whole request has arrived and should be executed once. Answer it with
     * {@link HomaEngine#sendResponse(long, InetSocketAddress, long, SendOptions)}.
     *
     * @param client the client endpoint
     * @param rpcId the client's rpcid (even)
     * @param parts the request bytes, in order, as the engine reassembled them: arrays of
     *     {@value InboundMessage#CHUNK_BYTES} bytes but the last (never joined, so that a long
     *     message is never copied whole, nor allocated as one large object); now owned by the
     *     receiver of the event
     */
    record RequestReceived(InetSocketAddress client, long rpcId, byte[][] parts) implements HomaEvent {
        public RequestReceived {
            Objects.requireNonNull(parts, "parts");
        }

        /** The request as one array: its only part, or a new array joining the parts. */
        public byte[] message() {
            return MessageBytes.join(parts);
        }
    }

    /**
     * Client side: the whole response of an RPC started by
     * {@link HomaEngine#sendRequest(long, InetSocketAddress, SendOptions)} has arrived.
     *
     * @param rpcId the RPC
     * @param parts the response bytes, in order, as in {@link RequestReceived#parts()}; now owned
     *     by the receiver of the event
     */
    record ResponseReceived(long rpcId, byte[][] parts) implements HomaEvent {
        public ResponseReceived {
            Objects.requireNonNull(parts, "parts");
        }

        /** The response as one array: its only part, or a new array joining the parts. */
        public byte[] message() {
            return MessageBytes.join(parts);
        }
    }

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
        /**
         * The server refused the request without executing it because it is overloaded (an
         * RPC_UNKNOWN with this project's overloaded reason byte, {@link HomaEngine#refuseOverloaded},
         * {@link HomaEngine#refuseNewRequests}). Only this RPC fails: the server is up, so other
         * RPCs to it go on, and the request may be sent again as a new RPC, since it did not run.
         */
        SERVER_OVERLOADED,
        /** The engine was closed before the RPC ended. */
        SHUTDOWN
    }
}
