package io.homa.engine;

/**
 * The thresholds and windows of RTT-based congestion control (Lu and Zhang, "Leveraging Homa",
 * sections "Congestion detection", "Unscheduled window" and "Scheduled window"), as pure
 * functions of one peer's round trips and link rates.
 *
 * <p>The paper defines {@code gso_delay = gso_bytes * 8 / link_mbps},
 * {@code rtt_low = 2 (rtt_min + gso_delay)}, {@code rtt_mid = 2 rtt_low} and
 * {@code rtt_high = 8 rtt_min}. It assumes a GSO batch drains faster than {@code rtt_min}; at
 * 100 Mbit/s one 1,500-byte packet takes 120 µs against a 20-30 µs round trip, so {@code rtt_mid}
 * lands above {@code rtt_high} and the middle region, where the window shrinks gradually,
 * vanishes: the window would fall from {@code rtt_mid} straight to one batch. Here
 * {@code rtt_high = 8 (rtt_min + gso_delay)}, which equals the paper's where the batch is
 * negligible and keeps {@code rtt_low < rtt_mid < rtt_high} at any link rate (the batch itself is
 * bounded by the pacer's allowance, {@link EngineParams#gsoBatchBytes}).
 *
 * @param gsoDelayNs how long one GSO batch takes on the peer's link, ns
 * @param rttLowNs {@code 2 (rtt_min + gso_delay)}: below it the path is idle, ns
 * @param rttMidNs {@code 2 rtt_low}: below it the window is the full {@code rtt_mid}, ns
 * @param rttHighNs {@code 8 (rtt_min + gso_delay)}: above it the path is congested, ns
 */
record CongestionWindow(long gsoDelayNs, long rttLowNs, long rttMidNs, long rttHighNs) {

    /**
     * @param rttMinNs the peer's smallest measured round trip, ns, positive
     * @param linkMbps the peer's link rate, Mbit/s, positive
     * @param gsoBatchBytes the GSO batch, bytes, positive
     */
    static CongestionWindow of(long rttMinNs, long linkMbps, int gsoBatchBytes) {
        long gsoDelayNs = gsoBatchBytes * 8_000L / linkMbps;
        long base = rttMinNs + gsoDelayNs;
        return new CongestionWindow(gsoDelayNs, 2 * base, 4 * base, 8 * base);
    }

    /**
     * The paper's {@code rtt_unscheduled} for a recent round trip of {@code rttRecentNs}, in ns of
     * transmission at the peer's link rate: {@code rtt_mid} below {@code rtt_mid},
     * {@code rtt_low - (rtt_recent - rtt_mid) * 3/8} up to {@code rtt_high}, and 0 above it (the
     * caller sends one GSO batch).
     */
    long unscheduledNs(long rttRecentNs) {
        if (rttRecentNs <= rttMidNs) {
            return rttMidNs;
        }
        if (rttRecentNs > rttHighNs) {
            return 0;
        }
        return rttLowNs - (rttRecentNs - rttMidNs) * 3 / 8;
    }

    /** Whether a recent round trip of {@code rttRecentNs} says the path is congested ({@code > rtt_high}). */
    boolean congested(long rttRecentNs) {
        return rttRecentNs > rttHighNs;
    }

    /** Bytes a link of {@code linkMbps} carries in {@code ns}. */
    static long bytes(long ns, long linkMbps) {
        return ns * linkMbps / 8_000L;
    }
}
