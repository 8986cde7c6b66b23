package io.homa.engine;

/**
 * A server's at-most-once record of the rpcids one client has finished: the draft's "additional
 * state to detect long-delayed packets" (draft "At-most-once semantics"), so that a request DATA
 * packet delayed in the network past the RPC's acknowledgment does not execute the request a
 * second time.
 *
 * <p>The record is a floor, at or below which every rpcid counts as finished (the draft's "rpcid
 * for each client, such that all RPCs with rpcid's less than or equal to this have been
 * processed"), plus up to {@code capacity} finished rpcids above the floor, held individually.
 * When one more is remembered with the record full, the smallest is dropped and becomes the
 * floor. Memory per client is therefore bounded, at the price of counting as finished any rpcid
 * at or below the floor that was never remembered (an RPC still in progress there is found in the
 * engine's table of live RPCs first).
 *
 * <p>The individual rpcids are a sorted circular buffer of {@code long}: rpcids usually finish in
 * increasing order, so remembering one appends at the tail in O(1) and folding the smallest into
 * the floor drops the head in O(1); an rpcid that finishes out of order is placed by binary
 * search, moving the shorter side of the buffer by one slot. Lookups are a binary search. Nothing
 * is boxed and nothing is allocated except the buffer itself, which starts small and doubles up to
 * the capacity (rounded up to a power of two).
 *
 * <p>Forged acknowledgments: {@link #remember} ignores rpcids above the highest one actually
 * received from this client ({@link #received}), so an ACK listing thousands of made-up rpcids
 * (say at or above 2^62) can neither raise the floor above any real rpcid nor make the real
 * rpcids that follow count as finished. The floor never exceeds {@link #highestReceivedRpcId()}.
 *
 * <p>rpcids are compared as signed numbers, as the engine issues them (positive); both the floor
 * and the highest received rpcid start at 0, so that 0 and negative rpcids count as finished and
 * can never be remembered. Not thread-safe.
 */
final class FinishedRpcIds {
    /** Finished rpcids held individually per client unless told otherwise. */
    static final int DEFAULT_CAPACITY = 4096;
    /** Largest capacity: the buffer's length is a power of two of at most this. */
    static final int MAX_CAPACITY = 1 << 30;
    private static final int INITIAL_LENGTH = 16;

    private final int capacity;
    /** Finished rpcids above the floor, ascending from {@link #head}, circular; length a power of two. */
    private long[] rpcIds;
    private int mask;
    private int head;
    private int size;
    /** Every rpcid at or below this counts as finished. */
    private long floorRpcId;
    /** The highest rpcid that a request DATA from this client created state for. */
    private long highestReceivedRpcId;

    FinishedRpcIds() {
        this(DEFAULT_CAPACITY);
    }

    /**
     * @param capacity finished rpcids held individually above the floor, 1..{@value #MAX_CAPACITY}
     */
    FinishedRpcIds(int capacity) {
        if (capacity < 1 || capacity > MAX_CAPACITY) {
            throw new IllegalArgumentException("capacity must be between 1 and " + MAX_CAPACITY + ", was " + capacity);
        }
        this.capacity = capacity;
        int length = Math.min(INITIAL_LENGTH, ceilingPowerOfTwo(capacity));
        this.rpcIds = new long[length];
        this.mask = length - 1;
    }

    /**
     * Notes that a request DATA packet of {@code rpcId} created state on this server: rpcids up to
     * the highest so noted may be remembered as finished.
     */
    void received(long rpcId) {
        if (rpcId > highestReceivedRpcId) {
            highestReceivedRpcId = rpcId;
        }
    }

    /**
     * Records that {@code rpcId} is finished. Ignores rpcids at or below the floor, rpcids already
     * remembered and rpcids above {@link #highestReceivedRpcId()} (never received: a forged or
     * mistaken acknowledgment). With the record full, the smallest rpcid held becomes the floor.
     */
    void remember(long rpcId) {
        if (rpcId <= floorRpcId || rpcId > highestReceivedRpcId) {
            return;
        }
        if (size == 0 || rpcId > rpcIds[(head + size - 1) & mask]) {
            if (size == capacity) {
                dropHead();
            } else if (size == rpcIds.length) {
                grow();
            }
            rpcIds[(head + size) & mask] = rpcId;
            size++;
            return;
        }
        int index = search(rpcId);
        if (index >= 0) {
            return; // already remembered
        }
        int insertAt = -index - 1;
        if (size == capacity) {
            if (insertAt == 0) {
                floorRpcId = rpcId; // smaller than everything held: it would be folded at once
                return;
            }
            dropHead();
            insertAt--;
        } else if (size == rpcIds.length) {
            grow();
        }
        if (insertAt < size - insertAt) {
            // Move the first insertAt rpcids one slot towards the front.
            head = (head - 1) & mask;
            for (int i = 0; i < insertAt; i++) {
                rpcIds[(head + i) & mask] = rpcIds[(head + i + 1) & mask];
            }
        } else {
            // Move the rpcids from insertAt on one slot towards the back.
            for (int i = size; i > insertAt; i--) {
                rpcIds[(head + i) & mask] = rpcIds[(head + i - 1) & mask];
            }
        }
        rpcIds[(head + insertAt) & mask] = rpcId;
        size++;
    }

    /** Whether {@code rpcId} is finished: at or below the floor, or remembered. */
    boolean contains(long rpcId) {
        if (rpcId <= floorRpcId) {
            return true;
        }
        if (size == 0 || rpcId < rpcIds[head] || rpcId > rpcIds[(head + size - 1) & mask]) {
            return false;
        }
        return search(rpcId) >= 0;
    }

    /** Every rpcid at or below this counts as finished; never above {@link #highestReceivedRpcId()}. */
    long floorRpcId() {
        return floorRpcId;
    }

    /** The highest rpcid noted by {@link #received}, or 0. */
    long highestReceivedRpcId() {
        return highestReceivedRpcId;
    }

    /** Finished rpcids held individually, above the floor. */
    int size() {
        return size;
    }

    int capacity() {
        return capacity;
    }

    /** Folds the smallest rpcid held into the floor. */
    private void dropHead() {
        floorRpcId = rpcIds[head];
        head = (head + 1) & mask;
        size--;
    }

    /** Doubles the buffer (only while it is shorter than the capacity), unrolling it to start at 0. */
    private void grow() {
        long[] grown = new long[rpcIds.length * 2];
        for (int i = 0; i < size; i++) {
            grown[i] = rpcIds[(head + i) & mask];
        }
        rpcIds = grown;
        mask = grown.length - 1;
        head = 0;
    }

    /**
     * Binary search over the rpcids held, by position from the head.
     *
     * @return the position of {@code rpcId}, or {@code -(insertion position) - 1}
     */
    private int search(long rpcId) {
        int low = 0;
        int high = size - 1;
        while (low <= high) {
            int middle = (low + high) >>> 1;
            long value = rpcIds[(head + middle) & mask];
            if (value < rpcId) {
                low = middle + 1;
            } else if (value > rpcId) {
                high = middle - 1;
            } else {
                return middle;
            }
        }
        return -low - 1;
    }

    private static int ceilingPowerOfTwo(int value) {
        return value <= 1 ? 1 : Integer.highestOneBit(value - 1) << 1;
    }
}
