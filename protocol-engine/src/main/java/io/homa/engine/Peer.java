package io.homa.engine;

import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What an endpoint knows about one other endpoint, in both roles: as its server (RPCs it sent us,
 * rpcids it has finished) and as its client (acks we still owe it). Survives RPC timeouts
 * (draft "Timeouts": per-peer state is not deleted).
 */
final class Peer {
    /** Finished client rpcids remembered per peer, so late duplicates never execute again. */
    static final int FINISHED_RPC_IDS_KEPT = 8192;

    final InetSocketAddress address;
    final Map<Long, ServerRpc> serverRpcs = new HashMap<>();
    /** Client rpcids whose server state was released (acked or reclaimed), most recent last. */
    private final LinkedHashMap<Long, Boolean> finishedRpcIds = new LinkedHashMap<>(64, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
            return size() > FINISHED_RPC_IDS_KEPT;
        }
    };
    /** Acks this endpoint (as client) owes the peer (as server). */
    long[] pendingAcks = new long[8];
    int pendingAckCount;
    /** Unscheduled cutoffs the peer sent us (draft "CUTOFFS"); null until it sends some. */
    int[] cutoffs;
    int cutoffVersion;
    /** Last time any well-formed packet arrived from this peer. */
    long lastHeardNs;

    Peer(InetSocketAddress address) {
        this.address = address;
    }

    void rememberFinished(long rpcId) {
        finishedRpcIds.put(rpcId, Boolean.TRUE);
    }

    boolean isFinished(long rpcId) {
        return finishedRpcIds.containsKey(rpcId);
    }

    void addPendingAck(long rpcId) {
        if (pendingAckCount == pendingAcks.length) {
            pendingAcks = java.util.Arrays.copyOf(pendingAcks, pendingAckCount * 2);
        }
        pendingAcks[pendingAckCount++] = rpcId;
    }

    /** Removes and returns the most recent pending ack, or 0 if none. */
    long takePendingAck() {
        return pendingAckCount == 0 ? 0 : pendingAcks[--pendingAckCount];
    }

    /** Priority for an unscheduled packet of a message this long: largest i with cutoffs[i] >= length. */
    int unscheduledPriority(int messageLengthBytes) {
        if (cutoffs == null) {
            return HomaEngine.MAX_PRIORITY;
        }
        for (int i = cutoffs.length - 1; i >= 0; i--) {
            if (Integer.toUnsignedLong(cutoffs[i]) >= messageLengthBytes) {
                return i;
            }
        }
        return 0;
    }
}
