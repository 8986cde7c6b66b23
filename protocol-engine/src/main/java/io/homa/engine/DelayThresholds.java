package io.homa.engine;

/**
 * The delay thresholds of one peer and the unscheduled window they give, after the ByteDance
 * congestion control ("Leveraging Homa", "Congestion detection" and "Unscheduled window"):
 * {@code gso_delay} is how long one GSO batch takes on the wire at the peer's link rate,
 * {@code rtt_low = 2 (rtt_min + gso_delay)}, {@code rtt_mid = 2 rtt_low}. A recent round trip
 * below {@code rtt_mid} means a clear path: the window is {@code rtt_mid}. Between {@code rtt_mid}
 * and {@code rtt_high} the window shrinks as the paper's {@code rtt_low - (rtt_recent - rtt_mid)
 * 3/8}. Above {@code rtt_high} the path is congested: one GSO batch.
 *
 * <p><b>Departure from the paper.</b> The paper sets {@code rtt_high = 8 rtt_min}, which lies
 * above {@code rtt_mid = 4 (rtt_min + gso_delay)} only while a GSO batch drains in less than
 * {@code rtt_min}: true at 25 Gbit/s (64 KB in 21 µs), false at 100 Mbit/s, where one 1,500-byte
 * packet takes 120 µs against a 20-30 µs probe round trip, and the middle region vanishes (every
 * delay is then "clear" or "congested"). Here {@code rtt_high = 8 (rtt_min + gso_delay)}: the
 * paper's value wherever {@code gso_delay} is small beside {@code rtt_min}, and
 * {@code rtt_low < rtt_mid < rtt_high} at every link rate, so the window always has its three
 * regions. The formula of the middle region is the paper's; at {@code rtt_high} it gives
 * {@code (rtt_min + gso_delay) / 2}, above the one batch of the congested region.
 *
 * @param rttMinNs the peer's least round trip ({@code peer_rtt_min}), ns, positive
 * @param gsoDelayNs how long one GSO batch takes at the peer's link rate, ns, at least 0
 * @param gsoBatchBytes the bytes of one GSO batch (the congested window), positive
 * @param linkMbps the peer's link rate, Mbit/s, positive
 */
record DelayThresholds(long rttMinNs, long gsoDelayNs, int gsoBatchBytes, int linkMbps) {
    /** The paper's share of unscheduled bytes below which the extra window is halved (40%). */
    static final double LOW_UNSCHEDULED_RATIO = 0.40;

    DelayThresholds {
        if (rttMinNs <= 0 || gsoDelayNs < 0 || gsoBatchBytes <= 0 || linkMbps <= 0) {
            throw new IllegalArgumentException("rttMinNs, gsoBatchBytes and linkMbps must be positive and gsoDelayNs"
                    + " at least 0, were " + rttMinNs + ", " + gsoBatchBytes + ", " + linkMbps + ", " + gsoDelayNs);
        }
    }

    /**
     * The thresholds of a peer whose least round trip is {@code rttMinNs}, whose link runs at
     * {@code linkMbps}, to which the engine sends GSO batches of {@code gsoBatchBytes}.
     */
    static DelayThresholds of(long rttMinNs, int gsoBatchBytes, int linkMbps) {
        if (linkMbps <= 0) {
            throw new IllegalArgumentException("linkMbps must be positive, was " + linkMbps);
        }
        return new DelayThresholds(rttMinNs, transmitNs(gsoBatchBytes, linkMbps), gsoBatchBytes, linkMbps);
    }

    /** How long {@code bytes} take on a link of {@code linkMbps}, ns. */
    static long transmitNs(long bytes, int linkMbps) {
        return bytes * 8_000L / linkMbps;
    }

    /** {@code rtt_low = 2 (rtt_min + gso_delay)}, ns. */
    long rttLowNs() {
        return 2 * (rttMinNs + gsoDelayNs);
    }

    /** {@code rtt_mid = 2 rtt_low}, ns. */
    long rttMidNs() {
        return 2 * rttLowNs();
    }

    /** {@code rtt_high = 8 (rtt_min + gso_delay)}, ns (the paper: {@code 8 rtt_min}; see the class comment). */
    long rttHighNs() {
        return 8 * (rttMinNs + gsoDelayNs);
    }

    /** Whether a recent round trip of {@code rttRecentNs} means congestion: above {@code rtt_high}. */
    boolean congested(long rttRecentNs) {
        return rttRecentNs > rttHighNs();
    }

    /**
     * The unscheduled window for a recent round trip of {@code rttRecentNs}, as time on the
     * peer's link ({@code rtt_unscheduled}), ns: {@code rtt_mid} below {@code rtt_mid}; the
     * paper's {@code rtt_low - (rtt_recent - rtt_mid) 3/8} up to {@code rtt_high}; above it, the
     * time of one GSO batch.
     */
    long unscheduledWindowNs(long rttRecentNs) {
        if (rttRecentNs <= rttMidNs()) {
            return rttMidNs();
        }
        if (rttRecentNs > rttHighNs()) {
            return Math.max(1, gsoDelayNs);
        }
        return rttLowNs() - (rttRecentNs - rttMidNs()) * 3 / 8;
    }

    /**
     * The unscheduled bytes a new message to this peer may start with, for a recent round trip
     * of {@code rttRecentNs}: the window at the peer's link rate, never less than one GSO batch.
     * With {@code throttleEmpty} (nothing of ours waits for grants or the pacer) the window is
     * {@code rtt_mid} whatever the delay, halved when the receiver's {@code unscheduledRatio} of
     * incoming bytes is below {@value #LOW_UNSCHEDULED_RATIO} (the paper's extra unscheduled bytes).
     */
    long unscheduledBytes(long rttRecentNs, boolean throttleEmpty, double unscheduledRatio) {
        long windowNs = unscheduledWindowNs(rttRecentNs);
        if (throttleEmpty) {
            windowNs = rttMidNs();
            if (unscheduledRatio < LOW_UNSCHEDULED_RATIO) {
                windowNs /= 2;
            }
        }
        return Math.max(gsoBatchBytes, windowNs * linkMbps / 8_000L);
    }

    /** The receiver's scheduled window at its own link rate, {@code rtt_mid * local_link_mbps / 8}, bytes. */
    long scheduledWindowBytes(int localLinkMbps) {
        return rttMidNs() * localLinkMbps / 8_000L;
    }
}
