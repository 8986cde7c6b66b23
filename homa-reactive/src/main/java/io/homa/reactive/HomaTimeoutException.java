package io.homa.reactive;

import java.net.InetSocketAddress;

/**
 * The server went silent: no packet about any RPC held with it for {@code peer-silence-timeout}
 * (default 5 s), RESENDs notwithstanding, so the RPC was aborted (draft-ousterhout-tsvwg-homa,
 * "Timeouts"). Status {@link HomaStatus#UNAVAILABLE}.
 */
public class HomaTimeoutException extends HomaException {
    private final InetSocketAddress peer;
    private final long rpcId;

    public HomaTimeoutException(InetSocketAddress peer, long rpcId, String detail) {
        super(HomaStatus.UNAVAILABLE, "Homa RPC " + rpcId + " to " + peer + " timed out: " + detail);
        this.peer = peer;
        this.rpcId = rpcId;
    }

    /** The server that went silent. */
    public InetSocketAddress peer() {
        return peer;
    }

    /** The aborted RPC's rpcid. */
    public long rpcId() {
        return rpcId;
    }
}
