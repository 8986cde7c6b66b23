package io.homa.engine;

/**
 * Client side of one RPC: the request being sent and the response being received (draft
 * "Sender", "Receiver", "Retransmission"). Its lifecycle is {@link State}; every move goes through
 * {@link #moveTo}, which rejects the moves the table does not allow.
 */
final class ClientRpc extends TimerEntry {
    /**
     * Lifecycle of a client RPC. Allowed moves (anything else is a bug and throws):
     * <pre>
     *   QUEUED ----------> SENDING_REQUEST ----------> RECEIVING_RESPONSE
     *     |                     |                            |
     *     +---------------------+------------> DONE <--------+
     * </pre>
     */
    enum State {
        /** Started; no packet has left yet, so no RESEND timer runs. */
        QUEUED,
        /** The request's first packet has left; the RESEND timer runs; no response byte yet. */
        SENDING_REQUEST,
        /** Response DATA arriving (the server had the whole request). */
        RECEIVING_RESPONSE,
        /** Completed, failed, timed out or cancelled; the engine no longer holds it. */
        DONE;

        boolean allows(State next) {
            return switch (this) {
                case QUEUED -> next == SENDING_REQUEST || next == DONE;
                case SENDING_REQUEST -> next == RECEIVING_RESPONSE || next == DONE;
                case RECEIVING_RESPONSE -> next == DONE;
                case DONE -> false;
            };
        }
    }

    final long rpcId;
    final Peer server;
    private State state = State.QUEUED;
    OutboundMessage request;
    /** Null until the first response DATA ({@link State#RECEIVING_RESPONSE}). */
    InboundMessage response;
    /**
     * Last time any packet for this RPC arrived from the server, the request's first packet left,
     * or the RPC was found waiting on this endpoint: the server's silence counts from then.
     */
    long lastHeardNs;
    /**
     * The server incarnation the RPC is bound to (its epoch): set when the first DATA of the
     * request leaves naming an epoch of the server (not {@link io.homa.engine.internal.wire.HomaHeader#EPOCH_ASK}),
     * or when the server's RESEND answering first contact names one (it binds this RPC only, see
     * {@code HomaEngine.learnFromServer}): from then on only that incarnation may run it, and
     * every packet of the RPC names it.
     */
    int epoch;
    boolean epochBound;
    /** When to RESEND next; meaningful from {@link State#SENDING_REQUEST} on. */
    long nextResendNs = Long.MAX_VALUE;
    /** Whether the server ever sent a packet about this RPC (so it knows of it). */
    boolean heardAbout;
    /** RESENDs sent since the server was last heard from. */
    int resendsWithoutAnswer;
    /** The wait before the next RESEND after one went unanswered; 0 = the server's RTO (no backoff). */
    long resendBackoffNs;
    /**
     * A round-trip sample in progress: the first RESEND since the server was last heard, and
     * when it left; a second RESEND before an answer makes the sample ambiguous (Karn's rule).
     */
    boolean resendProbe;
    boolean resendProbeAmbiguous;
    long resendProbeSentNs;
    /** Whether the request's last byte has left, and when (the start of the server's response time). */
    boolean requestSent;
    long requestSentNs;

    ClientRpc(long rpcId, Peer server) {
        this.rpcId = rpcId;
        this.server = server;
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
            throw new IllegalStateException("client RPC " + rpcId + ": " + state + " -> " + next + " is not allowed");
        }
        state = next;
    }

    /**
     * A packet about this RPC (DATA, GRANT, RESEND, NEED_ACK) arrived from its server: it is alive
     * and answering, so the backoff ends and the RESEND timer restarts at the server's RTO.
     */
    void heard(long nowNs) {
        resendsWithoutAnswer = 0;
        resendBackoffNs = 0;
        resendProbe = false;
        heardBusy(nowNs);
    }

    /**
     * BUSY about this RPC: the server is alive but not ready, so the RESEND timer restarts with
     * the backed-off interval (draft "BUSY").
     */
    void heardBusy(long nowNs) {
        heardAbout = true;
        lastHeardNs = nowNs;
        if (state != State.QUEUED) {
            nextResendNs = nowNs + resendIntervalNs();
        }
    }

    /**
     * The current wait between RESENDs: the server's RTO, doubled per unanswered RESEND. For a
     * response not yet started it is at least the server's usual response time: the server is
     * still receiving the request (its GRANTs and RESENDs drive that) or running the handler.
     */
    long resendIntervalNs() {
        if (resendBackoffNs != 0) {
            return resendBackoffNs;
        }
        long rtoNs = server.rtt.rtoNs();
        return response == null ? Math.max(rtoNs, server.responseTime.rtoNs()) : rtoNs;
    }
}
