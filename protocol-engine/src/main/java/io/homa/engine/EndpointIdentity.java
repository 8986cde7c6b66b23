package io.homa.engine;

import io.homa.engine.internal.wire.HomaHeader;
import java.util.random.RandomGenerator;

/**
 * Who this endpoint is to its peers, all drawn from its first rpcid and its source of rpcid
 * steps when it is built: the client rpcids it hands out, its server epoch, the key of its
 * address tokens ({@link AddressValidation}) and the version of its first unscheduled cutoffs.
 * Each must differ from a previous run of the same endpoint (a restart), so that a server does
 * not take a new RPC for one it remembers, a client does not take a new server for its
 * predecessor, and a peer does not keep cutoffs of the old run. Without steps everything follows
 * from the first rpcid alone, so that tests and simulations repeat.
 */
final class EndpointIdentity {
    private long nextRpcId;
    /** Draws the gap to the next rpcid; null: consecutive rpcids (+2), as tests and simulations want. */
    private final RandomGenerator rpcIdSteps;
    private final SharedIdentity shared;

    /**
     * @param firstRpcId the first client rpcid, positive and even
     * @param rpcIdSteps source of random rpcid steps, or null for consecutive rpcids
     * @param shared what this engine shares with the other engines of its endpoint
     * @throws IllegalArgumentException if {@code firstRpcId} is odd or not positive
     */
    EndpointIdentity(long firstRpcId, RandomGenerator rpcIdSteps, SharedIdentity shared) {
        if (firstRpcId <= 0 || (firstRpcId & 1) != 0) {
            throw new IllegalArgumentException("firstRpcId must be positive and even, was " + firstRpcId);
        }
        this.nextRpcId = firstRpcId;
        this.rpcIdSteps = rpcIdSteps;
        this.shared = shared;
    }

    /**
     * The server epoch of an engine whose first rpcid is {@code firstRpcId}: 1..2^24-1, a hash of a
     * value unique to this endpoint's run (the clock-derived first rpcid), so that a restarted
     * server is a new incarnation to its clients with probability 1 - 1/16,777,215. Every packet
     * the engine sends as a server carries it ({@link HomaHeader#EPOCH_OFFSET}); clients bind each
     * RPC to the epoch its request reached, and a retransmission or RESEND naming another epoch is
     * answered RPC_UNKNOWN instead of running the request again: at-most-once across a restart.
     */
    static int serverEpoch(long firstRpcId) {
        long mixed = firstRpcId * 0xD6E8FEB86659FD93L;
        mixed ^= mixed >>> 32;
        mixed *= 0xD6E8FEB86659FD93L;
        mixed ^= mixed >>> 29;
        return (int) Long.remainderUnsigned(mixed, HomaHeader.MAX_EPOCH) + 1;
    }

    /** {@link HomaEngine#clockDerivedFirstRpcId}: a positive even rpcid from microseconds since 1970. */
    static long clockDerivedFirstRpcId(long epochMicros) {
        long id = (epochMicros << HomaEngine.RPC_ID_CLOCK_SHIFT) & Long.MAX_VALUE & ~1L;
        return id == 0 ? 2 : id;
    }

    /**
     * The rpcid of the next client RPC. With steps, the next one is 2..{@link
     * HomaEngine#MAX_RPC_ID_STEP} further, an even step drawn uniformly, so that an off-path forger
     * cannot guess the rpcids of live RPCs from one it saw.
     */
    long nextRpcId() {
        long rpcId = nextRpcId;
        nextRpcId += rpcIdSteps == null ? 2 : 2 + 2L * rpcIdSteps.nextInt(HomaEngine.MAX_RPC_ID_STEP / 2);
        return rpcId;
    }

    /** This endpoint's server epoch, {@link #serverEpoch(long)} of its first rpcid. */
    int serverEpoch() {
        return shared.serverEpoch();
    }

    /** The version of this endpoint's first unscheduled cutoffs ({@link UnscheduledCutoffs#initialVersion}). */
    int firstCutoffVersion() {
        return shared.firstCutoffVersion();
    }

    /**
     * The key of this endpoint's address tokens, 32 bytes: from a {@link SecureRandom} with rpcid
     * steps, derived from the first rpcid without them.
     */
    byte[] tokenKey() {
        return shared.tokenKey();
    }
}
