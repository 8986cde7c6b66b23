package io.homa.engine;

/**
 * What RTT-based congestion control knows of one peer (Lu and Zhang, "Leveraging Homa", section
 * "per-peer RTT detection"): its round trips, link rate and unscheduled ratio as it reported
 * them, and the probe of ours it has not answered yet.
 */
final class PeerCongestion {
    /** Smallest round trip a probe measured, ns (the paper's {@code peer_rtt_min}); 0 before any. */
    long rttMinNs;
    /** Recent round trip, each sample averaged with the previous value (the paper's {@code peer_rtt_recent}), ns. */
    long rttRecentNs;
    /** Samples taken. */
    long samples;
    /** The peer's link rate as it advertised it, Mbit/s; 0 before any. */
    int linkMbps;
    /** The share of unscheduled bytes in what the peer receives, percent; -1 until it reports one. */
    int unscheduledPercent = -1;
    /** The wire timestamp of our probe not yet answered, 0 for none, and when it left. */
    long outstandingTimestampNs;
    long outstandingSentNs;
    /** When our last probe to the peer left (meaningful once {@link #probed}). */
    long lastProbeNs;
    boolean probed;
    /** Our probes in a row given up unanswered. */
    int unanswered;
    /** Set once the peer has left {@link RttCongestion#MAX_UNANSWERED_PROBES} probes in a row unanswered without ever answering one. */
    boolean probingStopped;
    /** The grant window for this peer's messages, bytes ({@code rtt_mid} at our link rate); 0 = the global one. */
    int grantWindowBytes;

    /** Folds in one round trip of {@code rttNs} (positive). */
    void sample(long rttNs) {
        if (samples++ == 0) {
            rttMinNs = rttNs;
            rttRecentNs = rttNs;
        } else {
            rttMinNs = Math.min(rttMinNs, rttNs);
            rttRecentNs = (rttRecentNs + rttNs) / 2;
        }
        unanswered = 0;
    }
}
