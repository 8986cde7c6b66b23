package io.homa.engine;

import java.security.SecureRandom;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;

/**
 * What every engine of one endpoint shares when the endpoint runs several engines behind one
 * address (one per event loop, their sockets bound to one port with {@code SO_REUSEPORT}): its
 * server epoch, the key of its address tokens ({@link AddressValidation}) and the version of its
 * first unscheduled cutoffs. The kernel hashes each client's datagrams to one engine of the group,
 * but the hash changes when the group's membership does (a loop closes); then a client meets
 * another engine of the same endpoint, which must be the same incarnation to it (the same epoch,
 * so that its RPCs in flight are not failed as by a restart, draft "Server restarts") and must take
 * the address tokens its sibling issued. Each engine keeps its own rpcid sequence, RPC table and
 * peer table.
 *
 * <p>Immutable; an endpoint draws it once and hands it to each of its engines.
 */
public final class SharedIdentity {
    private final int serverEpoch;
    private final int firstCutoffVersion;
    private final byte[] tokenKey;

    private SharedIdentity(int serverEpoch, int firstCutoffVersion, byte[] tokenKey) {
        this.serverEpoch = serverEpoch;
        this.firstCutoffVersion = firstCutoffVersion;
        this.tokenKey = tokenKey;
    }

    /**
     * The identity of an endpoint whose first engine starts its rpcids at {@code firstRpcId}, as a
     * lone engine would draw it: epoch and cutoff version from {@code firstRpcId}, the token key
     * from a {@link SecureRandom} with {@code random} steps, from {@code firstRpcId} without (so
     * that tests and simulations repeat).
     *
     * @param firstRpcId a positive even rpcid, usually {@link HomaEngine#clockDerivedFirstRpcId}
     * @param random non-null for an endpoint with random rpcid steps (a real one)
     * @throws IllegalArgumentException if {@code firstRpcId} is odd or not positive
     */
    public static SharedIdentity of(long firstRpcId, RandomGenerator random) {
        if (firstRpcId <= 0 || (firstRpcId & 1) != 0) {
            throw new IllegalArgumentException("firstRpcId must be positive and even, was " + firstRpcId);
        }
        byte[] key = new byte[32];
        if (random != null) {
            new SecureRandom().nextBytes(key);
        } else {
            new SplittableRandom(firstRpcId).nextBytes(key);
        }
        return new SharedIdentity(EndpointIdentity.serverEpoch(firstRpcId),
                UnscheduledCutoffs.initialVersion(firstRpcId), key);
    }

    /** The endpoint's server epoch, 1..{@code 2^24 - 1}, carried by every packet its engines send as a server. */
    public int serverEpoch() {
        return serverEpoch;
    }

    int firstCutoffVersion() {
        return firstCutoffVersion;
    }

    /** The address-token key, 32 bytes; only the engine's own classes see it. */
    byte[] tokenKey() {
        return tokenKey;
    }

    /** Whether {@code other} holds the same key (for tests of a group's engines). */
    boolean sameTokenKey(SharedIdentity other) {
        return Arrays.equals(tokenKey, other.tokenKey);
    }

    @Override
    public String toString() {
        return "SharedIdentity{epoch " + serverEpoch + "}";
    }
}
