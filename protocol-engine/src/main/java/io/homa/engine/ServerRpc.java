package io.homa.engine;

/**
 * Server side of one RPC, held from the first request DATA until the client acknowledges the
 * response (draft "At-most-once semantics"). Its lifecycle is {@link State}; every move goes
 * through {@link #moveTo}, which rejects the moves the table does not allow.
 */
final class ServerRpc extends TimerEntry {
    /**
     * Lifecycle of a server RPC. Allowed moves (anything else is a bug and throws):
     * <pre>
     *   RECEIVING_REQUEST --> IN_SERVICE --> SENDING_RESPONSE --> AWAITING_ACK
     *          |                  |                 |                  |
     *          +------------------+-------> DEAD <--+------------------+
     * </pre>
     */
    enum State {
        /** Request bytes arriving; RESENDs for missing ones; reclaimed if the client goes silent. */
        RECEIVING_REQUEST,
        /** Request delivered to the application; response not yet given; RESENDs get BUSY. */
        IN_SERVICE,
        /** Response being sent. */
        SENDING_RESPONSE,
        /** Response fully sent; NEED_ACK until the client ACKs. */
        AWAITING_ACK,
        /** Released (ACK, RPC_UNKNOWN, abort, reclaim); the engine no longer holds it. */
        DEAD;

        boolean allows(State next) {
            return switch (this) {
                case RECEIVING_REQUEST -> next == IN_SERVICE || next == DEAD;
                case IN_SERVICE -> next == SENDING_RESPONSE || next == DEAD;
                case SENDING_RESPONSE -> next == AWAITING_ACK || next == DEAD;
                case AWAITING_ACK -> next == DEAD;
                case DEAD -> false;
            };
        }

        /** Whether the request reached the application (so the rpcid must be remembered as finished). */
        boolean delivered() {
            return this == IN_SERVICE || this == SENDING_RESPONSE || this == AWAITING_ACK;
        }
    }

    final long rpcId;
    final Peer client;
    final InboundMessage request;
    OutboundMessage response;
    private State state = State.RECEIVING_REQUEST;
    long lastHeardNs;
    /** When request DATA last arrived (while receiving it); the RPC's creation before the first. */
    long lastRequestDataNs;
    /** When the next RESEND (while receiving) or NEED_ACK (while awaiting ack) is due. */
    long nextTimerNs;
    int resendsWithoutAnswer;
    /** The wait before the next RESEND or NEED_ACK after one went unanswered; 0 = the client's RTO. */
    long resendBackoffNs;
    /** The complete request while the endpoint holds requests (not yet serving); null otherwise. */
    byte[][] heldRequest;
    /**
     * The request carried the INCAST flag: the response's unscheduled head, bytes (the one its
     * client named, at most our unscheduled bytes; paper §3.6); 0 = not marked.
     */
    int incastHeadBytes;

    ServerRpc(long rpcId, Peer client, InboundMessage request) {
        this.rpcId = rpcId;
        this.client = client;
        this.request = request;
    }

    State state() {
        return state;
    }

    /**
     * Moves to {@code next}.
     *
     * @throws IllegalStateException if the lifecycle does not allow the move
     */
    void moveTo(State next) {
        if (!state.allows(next)) {
            throw new IllegalStateException("server RPC " + rpcId + ": " + state + " -> " + next + " is not allowed");
        }
        state = next;
    }

    /**
     * A packet about this RPC arrived from its client: it is alive, the backoff ends and, while
     * receiving, the RESEND timer restarts at the client's RTO.
     */
    void heard(long nowNs) {
        resendsWithoutAnswer = 0;
        resendBackoffNs = 0;
        heardBusy(nowNs);
    }

    /** BUSY about this RPC (the client still sends other messages first): alive, backoff kept. */
    void heardBusy(long nowNs) {
        lastHeardNs = nowNs;
        if (state == State.RECEIVING_REQUEST) {
            nextTimerNs = nowNs + resendIntervalNs();
        }
    }

    /** The current wait between RESENDs or NEED_ACKs: the client's RTO, doubled per unanswered one. */
    long resendIntervalNs() {
        return resendBackoffNs == 0 ? client.rtt.rtoNs() : resendBackoffNs;
    }
}
