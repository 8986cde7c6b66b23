package io.homa.engine;

import io.homa.engine.InvalidSettingException.Unit;

/**
 * Protocol settings of one {@link HomaEngine}. Defaults follow draft-ousterhout-tsvwg-homa and
 * Linux Homa where they apply; every value is validated here, and a bad one fails with an
 * {@link IllegalArgumentException} naming the setting and its allowed range.
 *
 * @param mtuBytes largest IP packet, headers included; a DATA packet carries
 *     {@code mtuBytes - 28 - 56} message bytes (IPv4 + UDP headers, then the DATA header).
 *     256..65535, default 1500.
 * @param unscheduledBytes bytes of each message sent before any GRANT, at most: never more than
 *     one round trip's worth ({@code rttBytes}, automatic or set), since bytes sent before the
 *     receiver can schedule them only queue in the network (draft "Flow control": the unscheduled
 *     bytes are RTTbytes). 1..64 MiB, default 60,000: all of it from about 4.5 Gbit/s up, less
 *     below (at 100 Mbit/s, three 1,500-byte packets).
 * @param maxMessageBytes largest request or response accepted or sent; longer inbound messages
 *     are dropped as malformed. 1..64 MiB, default 1 MiB.
 * @param resendIntervalNs the shortest silence after which a receiver asks for missing bytes with
 *     RESEND (draft "Retransmission"); the actual wait is the larger of this and the peer's
 *     SRTT + 4 x RTTVAR (RFC 6298), doubled after each unanswered RESEND up to
 *     {@link #maxResendIntervalNs()}. 1 ms..60 s, default 10 ms.
 * @param peerSilenceTimeoutNs how long a peer may stay silent (no packet about any RPC held with
 *     it) before its RPCs fail with a timeout (draft "Timeouts"): a wall-clock budget that a JVM
 *     pause, a cold start or a busy server fits in. While a peer is silent, RESENDs to it back off
 *     exponentially up to {@link #maxResendIntervalNs()}. A server reclaims an RPC whose client
 *     was silent for twice this. 100 ms..10 min, and at least twice {@code resendIntervalNs};
 *     default 5 s.
 * @param peerIdleTimeoutNs how long a peer with no RPC in progress and no packet is remembered;
 *     then its state, including the record of its finished rpcids that stops late duplicates from
 *     executing again (draft "At-most-once semantics": "additional state"), is dropped. Must
 *     exceed twice {@code peerSilenceTimeoutNs}, the longest an RPC can live on a silent peer.
 *     1 s..1 day, default 60 s.
 * @param maxInboundBufferBytes memory for messages still arriving; beyond it, the first packet of
 *     a new inbound message is dropped (its sender retries), while messages already arriving may
 *     complete. 64 KiB..1 TiB, default 256 MiB.
 * @param maxOvercommit inbound messages granted to at once (draft "Overcommitment"; paper §3.5),
 *     the shortest remaining first (SRPT). 1..64, default 8.
 * @param maxGrantsPerPeer of those, at most this many from one sending peer. 1..64, default 4:
 *     with 1, a client's concurrent long messages to one server are granted one at a time and
 *     the others' senders fall into RESENDs, which costs goodput; the total stays capped by
 *     {@code maxOvercommit} and {@code maxIncomingBytes}, so an incast is no larger.
 * @param maxIncomingBytes cap on the total incoming (granted or unscheduled bytes not yet
 *     received) over all inbound messages (draft "Buffer management"), and never more than
 *     {@code maxOvercommit} windows ({@code rttBytes}): what the chosen messages need to keep the
 *     link busy, so that grants never fill a switch port's queue beyond it (at 100 Mbit/s, 8
 *     windows of three packets). 1 packet..1 GiB, default 400,000.
 * @param fifoGrantFraction share of granted bytes that go to the oldest inbound message rather
 *     than the shortest, so that nothing starves (draft "SRPT and starvation"), at the highest
 *     scheduled priority and at most a window and two increments ahead of what has arrived of it.
 *     0..0.5, default 0.05.
 * @param priorityLevels network priority levels in use, 1..8 (default 8); the highest serve
 *     unscheduled packets and control packets, the lowest scheduled ones (paper §3.4).
 * @param incastThreshold outstanding client RPCs above which new requests carry the INCAST flag
 *     (paper §3.6). 1..1,000,000, default 64.
 * @param incastUnscheduledBytes unscheduled bytes a server sends of the response to an INCAST
 *     request (never more than {@code unscheduledBytes}); the rest waits for the client's
 *     GRANTs. 0..64 MiB, default 400. A client of this project names a larger head for each
 *     request itself, from {@code incastBufferBytes}; this is its floor, and what a server sends
 *     when the client names none.
 * @param incastBufferBytes the buffer a client lets the unscheduled heads of its responses fill
 *     (the switch port in front of it, or on loopback its socket's receive buffer): a request
 *     whose first packet leaves while {@code k} RPCs are outstanding (itself included), more than
 *     {@code incastThreshold}, asks its server for a head of {@code incastBufferBytes / k} bytes,
 *     in whole packets, at least {@code incastUnscheduledBytes} and at most {@code unscheduledBytes}
 *     (a request whose head would not be smaller than {@code unscheduledBytes} is not marked). The
 *     rule: the requests of a fan-out of N queued together each leave with the N outstanding, so
 *     N heads fit the buffer, while a response no longer than its head needs no GRANT round
 *     trip at all. 0 leaves every marked response at {@code incastUnscheduledBytes} (the
 *     paper's fixed head). 0..1 GiB, default 2 MiB, a shallow
 *     switch port ({@code IncastSimulationTest} drives a fan-out of 1,000 through a 2 MB port
 *     without a drop); a transport bound to loopback uses more ({@code HomaTransportConfig.incastBufferBytes}).
 * @param linkMbps the pacer's rate in megabits per second (Linux Homa's {@code link_mbps}; draft
 *     "Pacing"): DATA of messages longer than one Ethernet packet leaves at most this fast, counting
 *     UDP payload plus IP/UDP headers plus Ethernet framing. 0 disables pacing (the engine's default: an engine that is
 *     not told its link's rate hands out packets as fast as they are polled). 0..1,000,000
 * @param maxNicQueueNs how far the pacer may run ahead of the link (Linux Homa's
 *     {@code max_nic_queue_ns}), in nanoseconds of transmission at {@code linkMbps}: packets handed
 *     to the kernel but not yet on the wire, where a short message would queue behind them; never
 *     less than two full packets' worth, so that credit builds up while the pacer waits for its
 *     timer (at 100 Mbit/s, 246 µs). 1,000..10,000,000 ns, default 50,000
 * @param rttBytes how far a receiver grants each inbound message ahead of what has arrived (Linux
 *     Homa's {@code rtt_bytes}; draft "Flow control": RTTbytes), in bytes; never less than
 *     {@code unscheduledBytes} or two full packets. 0 (the default) = automatic: what the link
 *     carries at {@code linkMbps} (10 Gbit/s when unpaced) in one round trip between two JVM
 *     endpoints, 100 µs, plus two full packets (a DATA packet's store-and-forward at the sender's
 *     NIC and at the switch port). The bytes granted and not yet arrived wait in the receiver's queues,
 *     ahead of any short message that arrives after them, so a window longer than the round trip
 *     needs costs short messages latency. 0..64 MiB
 * @param addressValidation whether a server sends a client's address at most
 *     {@value #VALIDATION_AMPLIFICATION}x the bytes it received from it until the client has shown
 *     that it receives our packets, by echoing the address token of our packets (QUIC's
 *     rule, RFC 9000 §8.1): without it, forged requests or RESENDs from a spoofed address would make
 *     the server send that address far more than the forger sent. Clients of this project echo the
 *     token from the first packet they get, so they pass in their first round trip; a client that
 *     knows only the draft never echoes and stays held to the 3x. Default true.
 */
public record EngineConfig(
        int mtuBytes,
        int unscheduledBytes,
        int maxMessageBytes,
        long resendIntervalNs,
        long peerSilenceTimeoutNs,
        long peerIdleTimeoutNs,
        long maxInboundBufferBytes,
        int maxOvercommit,
        int maxGrantsPerPeer,
        int maxIncomingBytes,
        double fifoGrantFraction,
        int priorityLevels,
        int incastThreshold,
        int incastUnscheduledBytes,
        int incastBufferBytes,
        int linkMbps,
        long maxNicQueueNs,
        int rttBytes,
        boolean addressValidation,
        CongestionControl congestionControl,
        long rttProbeIntervalNs) {

    /** A server sends an address it has not validated at most this many times what it received from it. */
    public static final int VALIDATION_AMPLIFICATION = 3;

    /** Highest {@code linkMbps}. */
    public static final int MAX_LINK_MBPS = 1_000_000;
    public static final long DEFAULT_MAX_NIC_QUEUE_NS = 50_000;
    public static final long MIN_MAX_NIC_QUEUE_NS = 1_000;
    public static final long MAX_MAX_NIC_QUEUE_NS = 10_000_000;

    /** IPv4 (20) plus UDP (8) header bytes, subtracted from the MTU. */
    public static final int IP_UDP_HEADER_BYTES = 28;
    /** Hard cap on message length: 64 MiB. */
    public static final int MAX_MESSAGE_BYTES_CAP = 64 * 1024 * 1024;

    public static final int DEFAULT_MTU_BYTES = 1500;
    public static final int DEFAULT_UNSCHEDULED_BYTES = 60_000;
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024;
    public static final long DEFAULT_RESEND_INTERVAL_NS = 10_000_000L;
    public static final long DEFAULT_PEER_SILENCE_TIMEOUT_NS = 5_000_000_000L;
    public static final long MIN_PEER_SILENCE_TIMEOUT_NS = 100_000_000L;
    public static final long MAX_PEER_SILENCE_TIMEOUT_NS = 600_000_000_000L;
    /** Longest interval between RESENDs to a silent peer, whatever the backoff. */
    public static final long MAX_RESEND_BACKOFF_NS = 1_000_000_000L;
    public static final long DEFAULT_PEER_IDLE_TIMEOUT_NS = 60_000_000_000L;
    public static final long DEFAULT_MAX_INBOUND_BUFFER_BYTES = 256L * 1024 * 1024;
    public static final int DEFAULT_MAX_OVERCOMMIT = 8;
    public static final int DEFAULT_MAX_GRANTS_PER_PEER = 4;
    public static final int DEFAULT_MAX_INCOMING_BYTES = 400_000;
    public static final double DEFAULT_FIFO_GRANT_FRACTION = 0.05;
    public static final int DEFAULT_PRIORITY_LEVELS = 8;
    public static final int DEFAULT_INCAST_THRESHOLD = 64;
    public static final int DEFAULT_INCAST_UNSCHEDULED_BYTES = 400;
    public static final int DEFAULT_INCAST_BUFFER_BYTES = 2 * 1024 * 1024;
    public static final long DEFAULT_RTT_PROBE_INTERVAL_NS = 1_000_000L;
    public static final long MIN_RTT_PROBE_INTERVAL_NS = 10_000L;
    public static final long MAX_RTT_PROBE_INTERVAL_NS = 10_000_000_000L;

    /**
     * Validates every setting.
     *
     * @throws InvalidSettingException naming the first setting outside its allowed range
     */
    public EngineConfig {
        check("mtu", mtuBytes, 256, 65535, Unit.NONE);
        check("unscheduled-bytes", unscheduledBytes, 1, MAX_MESSAGE_BYTES_CAP, Unit.BYTES);
        check("max-message-size", maxMessageBytes, 1, MAX_MESSAGE_BYTES_CAP, Unit.BYTES);
        if (resendIntervalNs < 1_000_000L || resendIntervalNs > 60_000_000_000L) {
            throw new InvalidSettingException("resend-interval", resendIntervalNs, 1_000_000L, 60_000_000_000L,
                    Unit.NANOS, "resend-interval must be between 1 ms and 60 s, was " + resendIntervalNs + " ns");
        }
        check("peer-silence-timeout", peerSilenceTimeoutNs, MIN_PEER_SILENCE_TIMEOUT_NS, MAX_PEER_SILENCE_TIMEOUT_NS,
                Unit.NANOS);
        if (peerSilenceTimeoutNs < 2 * resendIntervalNs) {
            throw new InvalidSettingException("peer-silence-timeout", peerSilenceTimeoutNs, null, null, Unit.NANOS,
                    "peer-silence-timeout (" + peerSilenceTimeoutNs / 1_000_000
                    + " ms) must be at least twice resend-interval (" + resendIntervalNs / 1_000_000 + " ms)");
        }
        if (peerIdleTimeoutNs < 1_000_000_000L || peerIdleTimeoutNs > 86_400_000_000_000L) {
            throw new InvalidSettingException("peer-idle-timeout", peerIdleTimeoutNs, 1_000_000_000L,
                    86_400_000_000_000L, Unit.NANOS,
                    "peer-idle-timeout must be between 1 s and 1 day, was " + peerIdleTimeoutNs + " ns");
        }
        if (peerIdleTimeoutNs <= 2 * peerSilenceTimeoutNs) {
            throw new InvalidSettingException("peer-idle-timeout", peerIdleTimeoutNs, null, null, Unit.NANOS,
                    "peer-idle-timeout (" + peerIdleTimeoutNs / 1_000_000
                    + " ms) must exceed 2 x peer-silence-timeout (" + 2 * peerSilenceTimeoutNs / 1_000_000
                    + " ms), the longest an RPC can live on a silent peer");
        }
        check("max-inbound-buffer", maxInboundBufferBytes, 64 * 1024, 1L << 40, Unit.BYTES);
        check("max-overcommit", maxOvercommit, 1, 64, Unit.NONE);
        check("max-grants-per-peer", maxGrantsPerPeer, 1, 64, Unit.NONE);
        check("max-incoming", maxIncomingBytes, mtuBytes - IP_UDP_HEADER_BYTES - io.homa.engine.internal.wire.DataHeader.HEADER_LENGTH,
                1 << 30, Unit.BYTES);
        if (!(fifoGrantFraction >= 0 && fifoGrantFraction <= 0.5)) {
            throw new InvalidSettingException("fifo-grant-fraction", fifoGrantFraction, 0, 0.5, Unit.NONE,
                    "fifo-grant-fraction must be between 0 and 0.5, was " + fifoGrantFraction);
        }
        check("priority-levels", priorityLevels, 1, 8, Unit.NONE);
        check("incast-threshold", incastThreshold, 1, 1_000_000, Unit.NONE);
        check("incast-unscheduled-bytes", incastUnscheduledBytes, 0, MAX_MESSAGE_BYTES_CAP, Unit.BYTES);
        checkIncastBufferBytes(incastBufferBytes);
        checkLinkMbps(linkMbps);
        checkMaxNicQueueNs(maxNicQueueNs);
        check("rtt-bytes", rttBytes, 0, MAX_MESSAGE_BYTES_CAP, Unit.BYTES);
        if (congestionControl == null) {
            throw new InvalidSettingException("congestion-control", null, null, null, Unit.NONE,
                    "congestion-control must be rtt or off, was null");
        }
        checkRttProbeIntervalNs(rttProbeIntervalNs);
    }

    /**
     * @throws InvalidSettingException if {@code rttProbeIntervalNs} is outside
     *     {@value #MIN_RTT_PROBE_INTERVAL_NS}..{@value #MAX_RTT_PROBE_INTERVAL_NS} ns
     */
    public static void checkRttProbeIntervalNs(long rttProbeIntervalNs) {
        check("rtt-probe-interval", rttProbeIntervalNs, MIN_RTT_PROBE_INTERVAL_NS, MAX_RTT_PROBE_INTERVAL_NS,
                Unit.NANOS);
    }

    /** Whether RTT-based congestion control is on ({@link CongestionControl#RTT}). */
    public boolean rttCongestionControl() {
        return congestionControl == CongestionControl.RTT;
    }

    /**
     * @throws InvalidSettingException if {@code incastBufferBytes} is outside 0..1 GiB
     */
    public static void checkIncastBufferBytes(int incastBufferBytes) {
        check("incast-buffer-bytes", incastBufferBytes, 0, 1 << 30, Unit.BYTES);
    }

    /**
     * @throws InvalidSettingException if {@code linkMbps} is outside 0..{@value #MAX_LINK_MBPS}
     */
    public static void checkLinkMbps(int linkMbps) {
        if (linkMbps < 0 || linkMbps > MAX_LINK_MBPS) {
            throw new InvalidSettingException("link-mbps", linkMbps, 0, MAX_LINK_MBPS, Unit.NONE,
                    "link-mbps must be between 0 and " + MAX_LINK_MBPS + " (0 = no pacing), was " + linkMbps);
        }
    }

    /**
     * @throws InvalidSettingException if {@code maxNicQueueNs} is outside
     *     {@value #MIN_MAX_NIC_QUEUE_NS}..{@value #MAX_MAX_NIC_QUEUE_NS}
     */
    public static void checkMaxNicQueueNs(long maxNicQueueNs) {
        check("max-nic-queue", maxNicQueueNs, MIN_MAX_NIC_QUEUE_NS, MAX_MAX_NIC_QUEUE_NS, Unit.NANOS);
    }

    /**
     * Checks a setting against its range, the one rule every config of the project uses.
     *
     * @throws InvalidSettingException "NAME must be between MIN and MAX[ unit], was VALUE[ unit]"
     */
    public static void check(String name, long value, long min, long max, Unit unit) {
        if (value < min || value > max) {
            throw InvalidSettingException.outOfRange(name, value, min, max, unit);
        }
    }

    public static EngineConfig defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder initialised from this config. */
    public Builder toBuilder() {
        return new Builder()
                .mtuBytes(mtuBytes)
                .unscheduledBytes(unscheduledBytes)
                .maxMessageBytes(maxMessageBytes)
                .resendIntervalNs(resendIntervalNs)
                .peerSilenceTimeoutNs(peerSilenceTimeoutNs)
                .peerIdleTimeoutNs(peerIdleTimeoutNs)
                .maxInboundBufferBytes(maxInboundBufferBytes)
                .maxOvercommit(maxOvercommit)
                .maxGrantsPerPeer(maxGrantsPerPeer)
                .maxIncomingBytes(maxIncomingBytes)
                .fifoGrantFraction(fifoGrantFraction)
                .priorityLevels(priorityLevels)
                .incastThreshold(incastThreshold)
                .incastUnscheduledBytes(incastUnscheduledBytes)
                .incastBufferBytes(incastBufferBytes)
                .linkMbps(linkMbps)
                .maxNicQueueNs(maxNicQueueNs)
                .rttBytes(rttBytes)
                .addressValidation(addressValidation)
                .congestionControl(congestionControl)
                .rttProbeIntervalNs(rttProbeIntervalNs);
    }

    /**
     * The cap of the exponential RESEND backoff (draft "Retransmission"; RFC 6298 §5.5): a fifth of
     * {@code peerSilenceTimeoutNs}, at most {@link #MAX_RESEND_BACKOFF_NS} (1 s) and at least
     * {@code resendIntervalNs}, so that a silent peer draws several probes before its RPCs fail.
     */
    public long maxResendIntervalNs() {
        return Math.max(resendIntervalNs, Math.min(MAX_RESEND_BACKOFF_NS, peerSilenceTimeoutNs / 5));
    }

    /** Largest UDP payload this engine sends: {@code mtuBytes - 28}. */
    public int maxDatagramBytes() {
        return mtuBytes - IP_UDP_HEADER_BYTES;
    }

    /** Message bytes per full DATA packet: {@code mtuBytes - 28 - 56}. */
    public int maxDataPayloadBytes() {
        return maxDatagramBytes() - io.homa.engine.internal.wire.DataHeader.HEADER_LENGTH;
    }

    /** Mutable builder; {@link #build()} validates. */
    public static final class Builder {
        private int mtuBytes = DEFAULT_MTU_BYTES;
        private int unscheduledBytes = DEFAULT_UNSCHEDULED_BYTES;
        private int maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES;
        private long resendIntervalNs = DEFAULT_RESEND_INTERVAL_NS;
        private long peerSilenceTimeoutNs = DEFAULT_PEER_SILENCE_TIMEOUT_NS;
        private long peerIdleTimeoutNs = DEFAULT_PEER_IDLE_TIMEOUT_NS;
        private long maxInboundBufferBytes = DEFAULT_MAX_INBOUND_BUFFER_BYTES;
        private int maxOvercommit = DEFAULT_MAX_OVERCOMMIT;
        private int maxGrantsPerPeer = DEFAULT_MAX_GRANTS_PER_PEER;
        private int maxIncomingBytes = DEFAULT_MAX_INCOMING_BYTES;
        private double fifoGrantFraction = DEFAULT_FIFO_GRANT_FRACTION;
        private int priorityLevels = DEFAULT_PRIORITY_LEVELS;
        private int incastThreshold = DEFAULT_INCAST_THRESHOLD;
        private int incastUnscheduledBytes = DEFAULT_INCAST_UNSCHEDULED_BYTES;
        private int incastBufferBytes = DEFAULT_INCAST_BUFFER_BYTES;
        private int linkMbps;
        private long maxNicQueueNs = DEFAULT_MAX_NIC_QUEUE_NS;
        private int rttBytes;
        private boolean addressValidation = true;
        private CongestionControl congestionControl = CongestionControl.OFF;
        private long rttProbeIntervalNs = DEFAULT_RTT_PROBE_INTERVAL_NS;

        private Builder() {}

        /** RTT-based congestion control or none (the default, {@link CongestionControl#OFF}). */
        public Builder congestionControl(CongestionControl value) {
            this.congestionControl = value;
            return this;
        }

        /** Shortest time between two RTT probes to one uncongested peer, ns; default 1 ms. */
        public Builder rttProbeIntervalNs(long value) {
            this.rttProbeIntervalNs = value;
            return this;
        }

        /** Whether unvalidated client addresses get at most 3x the bytes they sent (default true). */
        public Builder addressValidation(boolean value) {
            this.addressValidation = value;
            return this;
        }

        public Builder maxOvercommit(int value) {
            this.maxOvercommit = value;
            return this;
        }

        public Builder maxGrantsPerPeer(int value) {
            this.maxGrantsPerPeer = value;
            return this;
        }

        public Builder maxIncomingBytes(int value) {
            this.maxIncomingBytes = value;
            return this;
        }

        public Builder fifoGrantFraction(double value) {
            this.fifoGrantFraction = value;
            return this;
        }

        public Builder priorityLevels(int value) {
            this.priorityLevels = value;
            return this;
        }

        public Builder incastThreshold(int value) {
            this.incastThreshold = value;
            return this;
        }

        public Builder incastUnscheduledBytes(int value) {
            this.incastUnscheduledBytes = value;
            return this;
        }

        public Builder incastBufferBytes(int value) {
            this.incastBufferBytes = value;
            return this;
        }

        /** The pacer's rate in Mbit/s; 0 (the default) disables pacing. */
        public Builder linkMbps(int value) {
            this.linkMbps = value;
            return this;
        }

        /** How far (ns at link speed) the pacer may run ahead of the link; 1,000..10,000,000. */
        public Builder maxNicQueueNs(long value) {
            this.maxNicQueueNs = value;
            return this;
        }

        /** How far a receiver grants ahead of what arrived, bytes; 0 (the default) = automatic. */
        public Builder rttBytes(int value) {
            this.rttBytes = value;
            return this;
        }

        public Builder peerIdleTimeoutNs(long value) {
            this.peerIdleTimeoutNs = value;
            return this;
        }

        public Builder maxInboundBufferBytes(long value) {
            this.maxInboundBufferBytes = value;
            return this;
        }

        public Builder mtuBytes(int value) {
            this.mtuBytes = value;
            return this;
        }

        public Builder unscheduledBytes(int value) {
            this.unscheduledBytes = value;
            return this;
        }

        public Builder maxMessageBytes(int value) {
            this.maxMessageBytes = value;
            return this;
        }

        public Builder resendIntervalNs(long value) {
            this.resendIntervalNs = value;
            return this;
        }

        public Builder peerSilenceTimeoutNs(long value) {
            this.peerSilenceTimeoutNs = value;
            return this;
        }

        public EngineConfig build() {
            return new EngineConfig(mtuBytes, unscheduledBytes, maxMessageBytes, resendIntervalNs, peerSilenceTimeoutNs,
                    peerIdleTimeoutNs, maxInboundBufferBytes, maxOvercommit, maxGrantsPerPeer, maxIncomingBytes,
                    fifoGrantFraction, priorityLevels, incastThreshold, incastUnscheduledBytes, incastBufferBytes,
                    linkMbps, maxNicQueueNs, rttBytes, addressValidation, congestionControl, rttProbeIntervalNs);
        }
    }
}
