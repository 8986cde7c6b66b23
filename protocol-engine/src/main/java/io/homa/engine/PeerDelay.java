package io.homa.engine;

/**
 * One peer's round-trip delay as the ByteDance congestion control measures it ("Leveraging Homa",
 * "per-peer RTT detection"): RTT_PROBE control packets carry the sender's clock, the peer echoes
 * the timestamp in an RTT_RESPS at once, and the echo's age is one sample. {@code peer_rtt_min} is
 * the least sample seen (queues only add to a round trip, so the least is the path's own delay),
 * {@code peer_rtt_recent} the latest samples averaged with the previous value (each sample weighs
 * half, as the paper suggests "to reduce noise").
 *
 * <p>Only echoes of probes that are outstanding count, and each once: an RTT_RESPS that names a
 * timestamp this side did not send (forged, duplicated, or older than the last
 * {@value #MAX_OUTSTANDING} probes) changes nothing, so a peer cannot talk the delay down. A probe
 * that is lost simply never answers: it changes nothing either, and falls out when newer probes
 * push it out. A peer that has answered none of its first {@value #SILENT_PROBES} probes (a
 * draft-only peer drops unknown packet types) is {@link #silent()}: stop probing it.
 *
 * <p>Sans-IO: times are the caller's nanoseconds. Not thread-safe (the engine's loop owns it).
 */
final class PeerDelay {
    /** Probes remembered at once; an echo of an older one is ignored. */
    static final int MAX_OUTSTANDING = 8;
    /** Probes without an answer, none ever, after which the peer counts as not taking probes. */
    static final int SILENT_PROBES = 4;

    private final long[] outstandingNs = new long[MAX_OUTSTANDING];
    private int outstanding;
    private int sent;
    private boolean answeredEver;
    private long rttMinNs;
    private long rttRecentNs;
    private long lastProbeNs;
    private boolean probed;

    /**
     * Records a probe sent at {@code sentNs}, the timestamp it carries; the oldest outstanding
     * probe is forgotten when {@value #MAX_OUTSTANDING} are.
     */
    void probeSent(long sentNs) {
        if (outstanding == MAX_OUTSTANDING) {
            System.arraycopy(outstandingNs, 1, outstandingNs, 0, MAX_OUTSTANDING - 1);
            outstanding--;
        }
        sent++;
        outstandingNs[outstanding++] = sentNs;
        lastProbeNs = sentNs;
        probed = true;
    }

    /**
     * Takes an RTT_RESPS that echoes {@code echoedNs}, received at {@code nowNs}.
     *
     * @return whether it counted: it echoed an outstanding probe (which is then answered), and
     *     its age is not negative
     */
    boolean responseReceived(long echoedNs, long nowNs) {
        int index = -1;
        for (int i = 0; i < outstanding; i++) {
            if (outstandingNs[i] == echoedNs) {
                index = i;
                break;
            }
        }
        if (index < 0) {
            return false;
        }
        long rttNs = nowNs - echoedNs;
        if (rttNs < 0) {
            return false;
        }
        // the probes before this one were lost or overtaken: forget them with it
        System.arraycopy(outstandingNs, index + 1, outstandingNs, 0, outstanding - index - 1);
        outstanding -= index + 1;
        sample(rttNs);
        return true;
    }

    private void sample(long rttNs) {
        if (!answeredEver) {
            answeredEver = true;
            rttMinNs = rttNs;
            rttRecentNs = rttNs;
            return;
        }
        rttMinNs = Math.min(rttMinNs, rttNs);
        rttRecentNs = (rttRecentNs + rttNs) / 2;
    }

    /**
     * Whether a probe is due at {@code nowNs}: none was sent yet, or the last is older than
     * {@code intervalNs} (the paper's {@code rtt_probe_interval}, 1 ms; 8 x {@code peer_rtt_min}
     * while the peer is congested, which the caller passes). Never for a {@link #silent()} peer.
     */
    boolean probeDue(long nowNs, long intervalNs) {
        return !silent() && (!probed || nowNs - lastProbeNs >= intervalNs);
    }

    /** Whether the peer answered none of its first {@value #SILENT_PROBES} probes: it does not take them. */
    boolean silent() {
        return !answeredEver && sent >= SILENT_PROBES;
    }

    /** Whether any probe was answered: {@link #rttMinNs()} and {@link #rttRecentNs()} hold samples. */
    boolean measured() {
        return answeredEver;
    }

    /** The least round trip seen, ns ({@code peer_rtt_min}); 0 before any. */
    long rttMinNs() {
        return rttMinNs;
    }

    /** The recent round trip, ns ({@code peer_rtt_recent}); 0 before any. */
    long rttRecentNs() {
        return rttRecentNs;
    }

    /** Probes sent and not answered (nor forgotten). */
    int outstanding() {
        return outstanding;
    }
}
