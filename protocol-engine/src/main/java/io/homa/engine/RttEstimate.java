package io.homa.engine;

/**
 * One peer's round-trip time, smoothed as RFC 6298 §2 does (SRTT and RTTVAR, gains 1/8 and 1/4),
 * from unambiguous samples only (Karn's rule, RFC 6298 §3): a GRANT or RESEND of ours to the first
 * DATA it released that was not itself a retransmission, and a client's only outstanding RESEND to
 * the BUSY that answers it (the engine answers at once, from its event loop). Never from a request
 * to its response, which includes the handler's time.
 *
 * <p>The retransmission timeout it gives, {@link #rtoNs()}, is the larger of the configured
 * {@code resendIntervalNs} and SRTT + 4 x RTTVAR (capped): the wait before the first RESEND for missing
 * bytes (draft "Retransmission"), which {@link Timers} then doubles while the peer stays silent.
 */
final class RttEstimate {
    private final long minRtoNs;
    private final long maxRtoNs;
    /** Smoothed RTT; 0 until the first sample. */
    private long srttNs;
    private long rttvarNs;
    private long samples;

    RttEstimate(long minRtoNs, long maxRtoNs) {
        this.minRtoNs = minRtoNs;
        this.maxRtoNs = maxRtoNs;
    }

    /** Folds in one round-trip sample of {@code rttNs} (negative samples, from a clock step, are ignored). */
    void sample(long rttNs) {
        if (rttNs < 0) {
            return;
        }
        if (samples++ == 0) {
            srttNs = rttNs;
            rttvarNs = rttNs / 2;
        } else {
            rttvarNs += (Math.abs(srttNs - rttNs) - rttvarNs) / 4;
            srttNs += (rttNs - srttNs) / 8;
        }
    }

    /**
     * The wait before a RESEND to this peer: SRTT + 4 x RTTVAR, at least {@code resendIntervalNs}
     * and at most the backoff cap ({@link EngineConfig#maxResendIntervalNs()}).
     */
    long rtoNs() {
        return Math.min(maxRtoNs, Math.max(minRtoNs, srttNs + 4 * rttvarNs));
    }

    /** Smoothed RTT in nanoseconds, 0 before any sample. */
    long srttNs() {
        return srttNs;
    }

    long rttvarNs() {
        return rttvarNs;
    }

    long samples() {
        return samples;
    }
}
