package io.homa.engine.internal.wire;

/**
 * How the unscheduled ratio (the receiver's share of unscheduled bytes in what it receives, Lu
 * and Zhang, "Leveraging Homa", section "Unscheduled ratio") travels: one byte, 0 for none (what
 * a peer that does not report it writes, the draft's reserved value), else 1 + the percentage.
 * In GRANT it sits in the common header's reserved byte 13 ({@link HomaHeader#REASON_OFFSET},
 * used only by RPC_UNKNOWN), in RTT_PROBE and RTT_RESPS at {@link RttProbeHeader#UNSCHEDULED_RATIO_OFFSET}.
 */
public final class UnscheduledRatio {
    /** No ratio reported. */
    public static final int NONE = 0;
    /** Largest valid wire value: 100% + 1. */
    public static final int MAX_WIRE_VALUE = 101;

    private UnscheduledRatio() {}

    /** The wire byte for {@code percent} (0..100), or {@link #NONE} for a negative one (not measured). */
    public static int toWire(int percent) {
        return percent < 0 ? NONE : 1 + Math.min(100, percent);
    }

    /** The percentage a valid non-{@link #NONE} wire byte stands for. */
    public static int percent(int wireValue) {
        return wireValue - 1;
    }

    /** Whether {@code wireValue} is one a sender may write (0..101). */
    public static boolean valid(int wireValue) {
        return wireValue >= NONE && wireValue <= MAX_WIRE_VALUE;
    }
}
