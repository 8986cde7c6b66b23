package io.homa.engine;

import java.net.InetSocketAddress;

/**
 * What an endpoint knows about one other endpoint, in both roles: as its server (RPCs it sent us,
 * rpcids it has finished) and as its client (acks we still owe it). Survives RPC timeouts
 * (draft "Timeouts": per-peer state is not deleted).
 */
final class Peer extends TimerEntry {
    /**
     * Finished client rpcids remembered individually per peer; beyond that, the oldest are folded
     * into a floor.
     */
    static final int FINISHED_RPC_IDS_KEPT = 4096;

    final InetSocketAddress address;
    /** What requests still arriving from this peer's IP address hold, shared by its ports ({@link RpcTable}). */
    RpcTable.AddressLoad addressLoad;
    /** This peer's RPCs we serve, by rpcid (a primitive map: looked up for every packet). */
    final LongMap<ServerRpc> serverRpcs = new LongMap<>();
    /**
     * The draft's "additional state to detect long-delayed packets": this client's finished
     * rpcids, bounded by {@link #FINISHED_RPC_IDS_KEPT} (see {@link AtMostOnce}).
     */
    final FinishedRpcIds finished = new FinishedRpcIds(FINISHED_RPC_IDS_KEPT);
    /** Client RPCs this endpoint has in progress to the peer (as its client). */
    int clientRpcCount;
    /** Acks this endpoint (as client) owes the peer (as server). */
    long[] pendingAcks = new long[8];
    int pendingAckCount;
    /**
     * The peer's server epoch as last heard from it about an RPC we hold (0: none heard yet, and
     * then our requests to it name {@link io.homa.engine.internal.wire.HomaHeader#EPOCH_ASK}; a peer that
     * knows only the draft never sends one).
     */
    int serverEpoch;
    /**
     * As its client: the latest address token the peer (as our server) wrote in a packet about an
     * RPC we hold; echoed in every packet we send it ({@link AddressValidation}). 0: none yet.
     */
    long echoToken;
    /** As its server: our address token for it, computed on first use (0 until then). */
    long addressToken;
    /** As its server: whether it echoed our token, proving it receives what we send to its address. */
    boolean addressValidated;
    /**
     * As its server, until validated: bytes we may still send it, {@value EngineConfig#VALIDATION_AMPLIFICATION}
     * times what it sent us less what DATA was committed to it.
     */
    long validationCreditBytes;
    /** Unscheduled cutoffs the peer sent us (draft "CUTOFFS"); null until it sends some. */
    int[] cutoffs;
    int cutoffVersion;
    /** Last time any well-formed packet arrived from this peer (creation time until one does). */
    long lastHeardNs;
    /** Whether any well-formed packet ever arrived from this peer. */
    boolean heardFrom;
    /**
     * This peer's inbound messages that need grants, in SRPT order; kept by {@link GrantScheduler},
     * which offers the first {@code maxGrantsPerPeer} of them for grants.
     */
    final InboundOrder grantable = new InboundOrder();
    /** Version of our cutoffs last sent to this peer in a CUTOFFS packet (0 = none), and when. */
    int cutoffsSentVersion;
    long cutoffsSentNs;
    /** When the acks we owe this peer go out in an explicit ACK if no DATA has carried them. */
    long ackFlushNs;
    /** Last time this endpoint started an RPC with the peer. */
    long lastUsedNs;
    /** Round-trip time to this peer, from GRANT or RESEND to the DATA it released. */
    final RttEstimate rtt;
    /**
     * This peer's response time as a server: from our request's last byte leaving to the first
     * byte of its response arriving (its handler's time plus a round trip). It delays the first
     * RESEND for a response's start, since a RESEND cannot make a handler finish sooner: a busy
     * server is not probed for every RPC it is working on. Kept apart from {@link #rtt}, which
     * times the network only.
     */
    final RttEstimate responseTime;
    /** Round trips, link rate and ratio for RTT-based congestion control ({@link RttCongestion}). */
    final PeerCongestion congestion = new PeerCongestion();
    /**
     * While the peer is silent: when the next probe (a RESEND or NEED_ACK of one of its RPCs) may
     * go, and the step after that (0 = the peer's RTO). One probe per step, not one per RPC.
     */
    long nextProbeNs;
    long probeBackoffNs;
    /** Whether a probe ever went to this peer for its silence, and when the last one did. */
    boolean probedSilent;
    long probedSilentNs;

    /**
     * @param nowNs creation time: the clock's origin is arbitrary (it may be negative), so times
     *     start from it, never from 0
     */
    Peer(InetSocketAddress address, long nowNs, long minRtoNs, long maxRtoNs) {
        this.address = address;
        this.lastHeardNs = nowNs;
        this.lastUsedNs = nowNs;
        this.nextProbeNs = nowNs;
        this.rtt = new RttEstimate(minRtoNs, maxRtoNs);
        this.responseTime = new RttEstimate(minRtoNs, maxRtoNs);
    }

    /** A peer whose RTO floor is the default resend interval (for tests). */
    Peer(InetSocketAddress address, long nowNs) {
        this(address, nowNs, EngineConfig.DEFAULT_RESEND_INTERVAL_NS, EngineConfig.MAX_RESEND_BACKOFF_NS);
    }

    /**
     * Folds a round trip that started at {@code sentNs} into {@link #rtt}, unless the peer went
     * silent meanwhile (we probed it, or this was the probe): then the sample measures its pause,
     * not the path, and would hold the RTO at its cap long after the peer is back.
     *
     * @return whether the sample was taken
     */
    boolean sampleRtt(long sentNs, long nowNs) {
        if (probedSilent && probedSilentNs - sentNs >= 0) {
            return false;
        }
        rtt.sample(nowNs - sentNs);
        return true;
    }

    /** A packet about an RPC held with this peer arrived: it is alive, and probing starts over. */
    void heard(long nowNs) {
        lastHeardNs = nowNs;
        heardFrom = true;
        probeBackoffNs = 0;
        nextProbeNs = nowNs;
    }

    /** Whether nothing is in progress with this peer, in either role. */
    boolean idle() {
        return serverRpcs.isEmpty() && pendingAckCount == 0 && clientRpcCount == 0;
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
    int unscheduledPriority(int messageLengthBytes, int priorityLevels) {
        if (cutoffs == null) {
            return priorityLevels - 1;
        }
        for (int i = Math.min(cutoffs.length, priorityLevels) - 1; i >= 0; i--) {
            if (Integer.toUnsignedLong(cutoffs[i]) >= messageLengthBytes) {
                return i;
            }
        }
        return 0;
    }
}
