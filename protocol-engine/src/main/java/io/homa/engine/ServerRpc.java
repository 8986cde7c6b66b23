package io.homa.engine;

/**
 * Server side of one RPC, held from the first request DATA until the client acknowledges the
 * response (draft "At-most-once semantics").
 */
final class ServerRpc {
    /** Lifecycle; transitions only go down this list. */
    enum State {
        /** Request bytes arriving. */
        RECEIVING_REQUEST,
        /** Request delivered to the application; response not yet given. */
        IN_SERVICE,
        /** Response being sent. */
        SENDING_RESPONSE,
        /** Response fully sent; NEED_ACK until the client ACKs. */
        AWAITING_ACK
    }

    final long rpcId;
    final Peer client;
    final InboundMessage request;
    OutboundMessage response;
    State state = State.RECEIVING_REQUEST;
    long lastHeardNs;
    /** When the next RESEND (while receiving) or NEED_ACK (while awaiting ack) is due. */
    long nextTimerNs;
    int resendsWithoutAnswer;
    /** The request carried the INCAST flag: send little of the response unscheduled (paper §3.6). */
    boolean incast;

    ServerRpc(long rpcId, Peer client, InboundMessage request) {
        this.rpcId = rpcId;
        this.client = client;
        this.request = request;
    }
}
