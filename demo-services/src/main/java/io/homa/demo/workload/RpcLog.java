package io.homa.demo.workload;

import java.util.Arrays;

/**
 * The length and RTT of every successful RPC of a run, kept so that the report can bucket RPCs by
 * the rank of their length.
 *
 * <p>Thread-safe: {@link #add} is synchronized (the RPCs of a run complete on several threads).
 */
public final class RpcLog {
    private int[] lengthsBytes = new int[1024];
    private long[] rttsNs = new long[1024];
    private int size;

    /**
     * RPCs sorted by length; RPCs of equal length stay in the order they were added (completion
     * order), so a rank cut through a run of equal lengths does not sort them by RTT.
     *
     * @param lengthsBytes ascending lengths
     * @param rttsNs the RTT in ns of the RPC at the same index
     */
    public record Sorted(int[] lengthsBytes, long[] rttsNs) {
        /** Number of RPCs. */
        public int size() {
            return lengthsBytes.length;
        }
    }

    /**
     * Records one successful RPC.
     *
     * @param lengthBytes its request length, >= 0
     * @param rttNs its round-trip time in ns, >= 0
     */
    public synchronized void add(int lengthBytes, long rttNs) {
        if (lengthBytes < 0) {
            throw new IllegalArgumentException("lengthBytes must be >= 0, was " + lengthBytes);
        }
        if (rttNs < 0) {
            throw new IllegalArgumentException("rttNs must be >= 0, was " + rttNs);
        }
        if (size == lengthsBytes.length) {
            lengthsBytes = Arrays.copyOf(lengthsBytes, size * 2);
            rttsNs = Arrays.copyOf(rttsNs, size * 2);
        }
        lengthsBytes[size] = lengthBytes;
        rttsNs[size] = rttNs;
        size++;
    }

    /** Number of records. */
    public synchronized int size() {
        return size;
    }

    /** The records sorted by length, ties in the order they were added (a copy). */
    public synchronized Sorted sortedByLength() {
        // Sort keys (length, index): the index breaks ties by insertion order.
        long[] keys = new long[size];
        for (int i = 0; i < size; i++) {
            keys[i] = ((long) lengthsBytes[i] << 32) | i;
        }
        Arrays.sort(keys);
        int[] lengths = new int[size];
        long[] rtts = new long[size];
        for (int i = 0; i < size; i++) {
            int index = (int) keys[i];
            lengths[i] = lengthsBytes[index];
            rtts[i] = rttsNs[index];
        }
        return new Sorted(lengths, rtts);
    }
}
