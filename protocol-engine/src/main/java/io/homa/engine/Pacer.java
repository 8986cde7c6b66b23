package io.homa.engine;

import io.homa.engine.internal.wire.DataHeader;

/**
 * The sender's pacer (draft "Pacing": endpoints "MUST limit the buildup of transmit queues in the
 * NIC"; Linux Homa's {@code homa_pacer.c} with its {@code link_mbps} and {@code max_nic_queue_ns}):
 * a token bucket filled at {@code linkMbps} megabits per second that holds at most
 * {@code maxNicQueueNs} nanoseconds of transmission at that rate, the small queue the draft lets
 * the pacer build up ahead of the link so that the uplink stays busy when the pacer is late.
 *
 * <p>Every packet costs what it takes of an Ethernet link: its UDP payload plus
 * {@value EngineConfig#IP_UDP_HEADER_BYTES} bytes of IPv4 and UDP header plus
 * {@value #ETHERNET_FRAMING_BYTES} bytes of Ethernet framing. A pacer that counted less would run
 * ahead of the link by that share (2.5% for full packets) for as long as it sends, and the
 * surplus would pile up in the NIC's queue, ahead of every short message that comes after it. A packet may leave whenever the credit is positive, so a packet larger than
 * the whole bucket still goes and the credit turns negative until the link has caught up.
 * Control packets and messages of one standard Ethernet packet
 * ({@link #bypasses(int) bypass}) do not wait for credit but are still charged for it.
 *
 * <p>Sans-IO: time is the caller's {@code nowNs} (any origin, negative or close to
 * {@link Long#MAX_VALUE} included; times are compared by their difference), and the pacer never
 * reads a clock. The credit is kept exactly, as a {@code long} in millibits: a nanosecond at
 * {@code linkMbps} earns {@code linkMbps} millibits, and a byte costs 8,000. Not thread-safe.
 *
 * <p>Usage, at one {@code nowNs} per transmit round: send the bypassing packets and
 * {@link #charge} them; then, while {@link #hasCredit(long)}, send one packet and charge it; when
 * packets remain and the credit has run out, come back at {@link #nextSendNs(long)}.
 */
final class Pacer {
    /**
     * Longest message whose packets bypass the pacer: the message bytes of one standard Ethernet
     * packet (1,500-byte IP packet less IP/UDP and DATA headers).
     */
    static final int URGENT_MESSAGE_BYTES = 1_500 - EngineConfig.IP_UDP_HEADER_BYTES - DataHeader.HEADER_LENGTH;
    /** Fewest nanoseconds of credit to earn before coming back: a wake-up costs more than a small packet. */
    static final long MIN_REFILL_NS = 10_000;
    /**
     * Bytes an Ethernet link spends on a frame besides its IP packet: header (14), frame check
     * sequence (4), preamble and start delimiter (8), inter-frame gap (12).
     */
    static final int ETHERNET_FRAMING_BYTES = 38;
    /** Nearest wake-up after running out of credit. */
    static final long MIN_WAIT_NS = 1_000;

    private static final long MILLIBITS_PER_BYTE = 8_000;
    /** Floor of the credit, far beyond any real deficit, so that no charge can overflow it. */
    private static final long MIN_CREDIT_MILLIBITS = Long.MIN_VALUE / 4;

    private final int linkMbps;
    private final long maxNicQueueNs;
    private final long maxCreditMillibits;
    /** Credit to have earned before {@link #nextSendNs} calls back. */
    private final long wantedCreditMillibits;
    private long creditMillibits;
    /** Time up to which credit has been added. */
    private long refilledNs;
    /** Whether {@link #refilledNs} is a time of the caller's clock (false until the first refill when built without one). */
    private boolean clockStarted;

    /**
     * Starts with a full bucket, the clock starting at the first {@link #refill} (for an owner that
     * has no time yet when it builds the pacer, such as a {@link HomaEngine}).
     */
    Pacer(int linkMbps, long maxNicQueueNs) {
        this(linkMbps, maxNicQueueNs, 0);
        this.clockStarted = false;
    }

    /**
     * Starts with a full bucket.
     *
     * @param linkMbps rate in megabits per second (10^6 bits), 0..1,000,000; 0 disables pacing:
     *     every packet may leave at once
     * @param maxNicQueueNs the bucket's size in nanoseconds of transmission at {@code linkMbps},
     *     1 ns..1 s
     * @param nowNs current time, of any origin
     */
    Pacer(int linkMbps, long maxNicQueueNs, long nowNs) {
        if (linkMbps < 0 || linkMbps > 1_000_000) {
            throw new IllegalArgumentException("linkMbps must be between 0 and 1,000,000, was " + linkMbps);
        }
        if (maxNicQueueNs < 1 || maxNicQueueNs > 1_000_000_000L) {
            throw new IllegalArgumentException("maxNicQueueNs must be between 1 and 1,000,000,000, was " + maxNicQueueNs);
        }
        this.linkMbps = linkMbps;
        this.maxNicQueueNs = maxNicQueueNs;
        this.maxCreditMillibits = maxNicQueueNs * linkMbps;
        // A quarter of the bucket, at least 10 µs of it, but never more than the bucket holds
        // (credit earned beyond it would be lost, and the link left idle).
        this.wantedCreditMillibits = Math.min(maxCreditMillibits,
                Math.max(maxCreditMillibits / 4, MIN_REFILL_NS * linkMbps));
        this.creditMillibits = maxCreditMillibits;
        this.refilledNs = nowNs;
        this.clockStarted = true;
    }

    /**
     * The bucket an engine's pacer holds, in nanoseconds at the link rate: {@code maxNicQueueNs},
     * but at least two full packets' worth. A bucket shorter than a packet lets no credit build up
     * while the pacer waits: every packet needs a wake-up of its own, and the wake-up's lateness
     * (about 100 µs at the median on a busy virtual machine, against 123 µs for a 1,500-byte packet
     * at 100 Mbit/s) is lost from the link's time. At 10 Gbit/s and above, with either MTU, two
     * packets fit in the default 50 µs, which is left alone.
     *
     * @return 1 ns..{@link EngineConfig#MAX_MAX_NIC_QUEUE_NS}; {@code maxNicQueueNs} when unpaced
     */
    static long bucketNs(EngineConfig config) {
        if (config.linkMbps() <= 0) {
            return config.maxNicQueueNs();
        }
        long frameBytes = (long) config.maxDatagramBytes() + EngineConfig.IP_UDP_HEADER_BYTES + ETHERNET_FRAMING_BYTES;
        long twoPacketsNs = (2 * frameBytes * MILLIBITS_PER_BYTE + config.linkMbps() - 1) / config.linkMbps();
        return Math.min(EngineConfig.MAX_MAX_NIC_QUEUE_NS, Math.max(config.maxNicQueueNs(), twoPacketsNs));
    }

    /** Whether pacing is on ({@code linkMbps > 0}). */
    boolean enabled() {
        return linkMbps > 0;
    }

    int linkMbps() {
        return linkMbps;
    }

    long maxNicQueueNs() {
        return maxNicQueueNs;
    }

    /** Whether a packet may leave now: the credit, refilled up to {@code nowNs}, is positive. */
    boolean hasCredit(long nowNs) {
        if (linkMbps == 0) {
            return true;
        }
        refill(nowNs);
        return creditMillibits > 0;
    }

    /**
     * Adds the credit earned since the last refill, up to the bucket's size. A {@code nowNs}
     * before the last refill (a clock read out of order) adds nothing.
     */
    void refill(long nowNs) {
        if (!clockStarted) {
            clockStarted = true;
            refilledNs = nowNs;
            return;
        }
        long elapsedNs = nowNs - refilledNs;
        if (linkMbps == 0 || elapsedNs <= 0) {
            return;
        }
        refilledNs = nowNs;
        long headroomMillibits = maxCreditMillibits - creditMillibits;
        // Compared by division first: elapsedNs * linkMbps may overflow after a long idle gap.
        if (elapsedNs >= headroomMillibits / linkMbps + 1) {
            creditMillibits = maxCreditMillibits;
        } else {
            creditMillibits = Math.min(maxCreditMillibits, creditMillibits + elapsedNs * linkMbps);
        }
    }

    /**
     * Charges one packet sent, paced or bypassing, at the time of the last refill (call
     * {@link #hasCredit(long)} or {@link #refill(long)} with the current time first).
     *
     * @param datagramBytes its UDP payload (Homa header and data); the IP/UDP headers and the
     *     Ethernet framing are added here
     */
    void charge(int datagramBytes) {
        if (datagramBytes < 0) {
            throw new IllegalArgumentException("datagramBytes must not be negative, was " + datagramBytes);
        }
        if (linkMbps == 0) {
            return;
        }
        long costMillibits = (datagramBytes + (long) EngineConfig.IP_UDP_HEADER_BYTES + ETHERNET_FRAMING_BYTES)
                * MILLIBITS_PER_BYTE;
        creditMillibits = Math.max(MIN_CREDIT_MILLIBITS, creditMillibits - costMillibits);
    }

    /**
     * The credit as of the last refill, in bytes (rounded towards negative infinity; negative
     * after a packet larger than the credit); {@link Long#MAX_VALUE} when pacing is disabled.
     */
    long creditBytes() {
        return linkMbps == 0 ? Long.MAX_VALUE : Math.floorDiv(creditMillibits, MILLIBITS_PER_BYTE);
    }

    /** The bucket's size in bytes: {@code maxNicQueueNs} of transmission at {@code linkMbps}. */
    long maxCreditBytes() {
        return maxCreditMillibits / MILLIBITS_PER_BYTE;
    }

    /**
     * When to come back to send more: {@code nowNs} if the credit (refilled up to {@code nowNs})
     * is positive or pacing is disabled; otherwise the time at which the bucket will have earned a
     * quarter of its size, or 10 µs of transmission if that is more (but never more than the
     * bucket holds), and at least 1 µs from now: a wake-up per small packet would cost more than
     * the packet.
     */
    long nextSendNs(long nowNs) {
        if (!hasCredit(nowNs)) {
            long missingMillibits = wantedCreditMillibits - creditMillibits;
            long waitNs = missingMillibits / linkMbps + (missingMillibits % linkMbps == 0 ? 0 : 1);
            return nowNs + Math.max(MIN_WAIT_NS, waitNs);
        }
        return nowNs;
    }

    /**
     * Whether a message's packets go without waiting for credit (they are still charged): at most
     * {@link #URGENT_MESSAGE_BYTES} bytes, one standard Ethernet packet. Control packets always do.
     */
    static boolean bypasses(int messageLengthBytes) {
        return messageLengthBytes <= URGENT_MESSAGE_BYTES;
    }
}
