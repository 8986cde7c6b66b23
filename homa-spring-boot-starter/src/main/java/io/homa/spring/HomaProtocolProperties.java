package io.homa.spring;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.DeprecatedConfigurationProperty;
import org.springframework.boot.convert.DataSizeUnit;
import org.springframework.boot.convert.DurationUnit;
import org.springframework.util.unit.DataSize;
import org.springframework.util.unit.DataUnit;

/** Protocol settings of the Homa engine (draft-ousterhout-tsvwg-homa), under {@code homa.protocol.*}. */
public class HomaProtocolProperties {

    /**
     * Largest IP packet, headers included, 256..65535 bytes; a DATA packet carries mtu - 84
     * message bytes.
     */
    private int mtu = 1500;

    /**
     * Bytes of each message sent before any GRANT, at most, 1B..64MB (a plain number means
     * bytes); never more than one round trip of the link carries (rtt-bytes), so on a slow link
     * less: at 100 Mbit/s, three 1,500-byte packets.
     */
    @DataSizeUnit(DataUnit.BYTES)
    private DataSize unscheduledBytes = DataSize.ofBytes(60_000);

    /**
     * Largest request or response sent or accepted, 1B..64MB (a plain number means bytes).
     */
    @DataSizeUnit(DataUnit.BYTES)
    private DataSize maxMessageSize = DataSize.ofMegabytes(1);

    /**
     * Shortest silence after which a receiver asks for missing bytes with RESEND, 1ms..60s (a
     * plain number means milliseconds). The wait is the larger of this and the peer's measured
     * SRTT + 4 x RTTVAR, doubled after each unanswered RESEND up to a fifth of
     * peer-silence-timeout (at most 1s).
     */
    @DurationUnit(ChronoUnit.MILLIS)
    private Duration resendInterval = Duration.ofMillis(10);

    /**
     * How long a peer may stay silent (no packet about any RPC held with it) before its RPCs
     * fail with UNAVAILABLE, 100ms..10m and at least twice resend-interval (a plain number
     * means milliseconds). A JVM pause, a cold start or a busy server fits in it; RESENDs to
     * a silent peer back off up to a fifth of it (at most 1s), one per peer per step.
     */
    @DurationUnit(ChronoUnit.MILLIS)
    private Duration peerSilenceTimeout = Duration.ofSeconds(5);

    /** Replaced by peer-silence-timeout; setting it fails start-up with a message saying so. */
    private @Nullable Integer timeoutResends;

    /**
     * How long a peer with nothing in progress is remembered, with its record of finished
     * rpcids that keeps late duplicates from executing again, 1s..1d; must exceed
     * 2 x peer-silence-timeout (a plain number means seconds).
     */
    @DurationUnit(ChronoUnit.SECONDS)
    private Duration peerIdleTimeout = Duration.ofSeconds(60);

    /**
     * Memory for inbound messages still arriving, 64KB..1TB; beyond it the first packet of a
     * new message is dropped (its sender retries) while messages already arriving complete.
     */
    @DataSizeUnit(DataUnit.BYTES)
    private DataSize maxInboundBuffer = DataSize.ofMegabytes(256);

    /**
     * Inbound messages granted to at once, the shortest remaining first (SRPT), 1..64: more
     * keeps the link busy when senders stall, at the cost of buffer space.
     */
    private int maxOvercommit = 8;

    /**
     * Of the messages granted to at once, at most this many from one sending peer, 1..64: more
     * than one lets several long messages from one peer (e.g. concurrent large uploads) keep
     * the link busy while one of them waits.
     */
    private int maxGrantsPerPeer = 4;

    /**
     * Cap on bytes granted (or sent unscheduled) but not yet received, over all inbound
     * messages, from one DATA packet's payload (mtu - 84 bytes) to 1GB (a plain number means
     * bytes); never more than max-overcommit windows of rtt-bytes, so that grants do not fill a
     * switch port's queue on a slow link.
     */
    @DataSizeUnit(DataUnit.BYTES)
    private DataSize maxIncoming = DataSize.ofBytes(400_000);

    /**
     * Share of granted bytes that go to the oldest inbound message instead of the shortest, so
     * that long messages do not starve, 0..0.5; granted at the highest scheduled priority, a
     * window and two increments ahead of what has arrived at most.
     */
    private double fifoGrantFraction = 0.05;

    /**
     * Network priority levels used, 1..8: the highest carry control packets and unscheduled
     * bytes of short messages, the lowest scheduled bytes.
     */
    private int priorityLevels = 8;

    /**
     * Outstanding client RPCs above which new requests are marked INCAST, so that their
     * responses are mostly sent only when granted, 1..1000000.
     */
    private int incastThreshold = 64;

    /**
     * Bytes of the response to an INCAST-marked request sent before any GRANT, 0B..64MB (a
     * plain number means bytes); never more than unscheduled-bytes.
     */
    @DataSizeUnit(DataUnit.BYTES)
    private DataSize incastUnscheduledBytes = DataSize.ofBytes(400);

    /**
     * The buffer a client's fan-out may fill with the unscheduled heads of its responses,
     * 0B..1GB (a plain number means bytes): a request leaving with k RPCs outstanding (past
     * incast-threshold) lets its response start with this / k bytes, at least
     * incast-unscheduled-bytes. Set it to the port buffer of the switch in front of the
     * clients. Unset (the default): 4 x receive-buffer-size when bound to a loopback address,
     * 2MB otherwise; 0: every marked response starts with incast-unscheduled-bytes.
     */
    @DataSizeUnit(DataUnit.BYTES)
    private DataSize incastBufferBytes;

    /**
     * Whether a server sends a client address at most 3x the bytes it received from it until
     * the client echoes the server's address token (QUIC's anti-amplification rule): forged
     * requests or RESENDs from a spoofed address cannot aim responses at it. Clients of this
     * framework pass in their first round trip; turn it off only for clients that know only
     * the draft, which never echo and would be held to 3x.
     */
    private boolean addressValidation = true;

    /**
     * Congestion control: rtt measures each peer's round trip with RTT_PROBE / RTT_RESPS packets
     * and sizes the unscheduled bytes toward it and the grant window for its messages from it
     * (Lu and Zhang, "Leveraging Homa"); off (the default, until measurements on the rack
     * decide) sends the draft's packets only, with one unscheduled-bytes and rtt-bytes for every
     * peer. A peer that knows only the draft drops the probes; it is no longer probed after 4.
     */
    private String congestionControl = "off";

    /**
     * With congestion-control rtt, the shortest time between two RTT probes to a peer that is not
     * congested, 10us..10s (a plain number means milliseconds): a probe goes when a message is
     * queued for the peer and the last one is older than this; every 8 x its minimum round trip
     * while it is congested.
     */
    @DurationUnit(ChronoUnit.MILLIS)
    private Duration rttProbeInterval = Duration.ofMillis(1);

    /**
     * Pacer rate (Homa's link_mbps) in megabits per second, 0..1000000 (0 = no pacing), or
     * auto: the endpoint hands packets to the kernel no faster than this, so that its own
     * queue, not the socket's, holds the backlog, in SRPT order, and loopback receivers are not
     * overrun. auto (the default): the speed the bound device reports (Linux
     * /sys/class/net/DEVICE/speed), else 10000 (loopback, the wildcard address, devices that
     * report none) and 25000 bound to a loopback address (no wire there: what two JVMs carry);
     * the start-up log's data path says which. An explicit value always wins.
     */
    private LinkSpeed linkMbps = LinkSpeed.AUTO;

    /**
     * How far a receiver grants each inbound message ahead of what has arrived (Homa's
     * rtt_bytes), 0B..64MB (a plain number means bytes); never less than unscheduled-bytes or
     * two full packets. Granted bytes wait in the receiver's queues ahead of short messages
     * that arrive later. Unset (the default): 125000B bound to a loopback address, else what
     * link-mbps carries in 100us (the round trip between two JVM endpoints); 0 the same.
     */
    @DataSizeUnit(DataUnit.BYTES)
    private DataSize rttBytes;

    /**
     * How far the pacer may run ahead of the link (Homa's max_nic_queue_ns), as time at
     * link-mbps, 1us..10ms (a plain number means nanoseconds): bytes handed to the kernel but
     * not yet sent, behind which a new short message would wait. Control packets and
     * one-packet messages bypass the pacer.
     */
    @DurationUnit(ChronoUnit.NANOS)
    private Duration maxNicQueue = Duration.ofNanos(50_000);

    public LinkSpeed getLinkMbps() {
        return this.linkMbps;
    }

    public void setLinkMbps(LinkSpeed linkMbps) {
        this.linkMbps = linkMbps;
    }

    public Duration getMaxNicQueue() {
        return this.maxNicQueue;
    }

    public void setMaxNicQueue(Duration maxNicQueue) {
        this.maxNicQueue = maxNicQueue;
    }

    public int getMaxOvercommit() {
        return this.maxOvercommit;
    }

    public void setMaxOvercommit(int maxOvercommit) {
        this.maxOvercommit = maxOvercommit;
    }

    public int getMaxGrantsPerPeer() {
        return this.maxGrantsPerPeer;
    }

    public void setMaxGrantsPerPeer(int maxGrantsPerPeer) {
        this.maxGrantsPerPeer = maxGrantsPerPeer;
    }

    public DataSize getMaxIncoming() {
        return this.maxIncoming;
    }

    public void setMaxIncoming(DataSize maxIncoming) {
        this.maxIncoming = maxIncoming;
    }

    public double getFifoGrantFraction() {
        return this.fifoGrantFraction;
    }

    public void setFifoGrantFraction(double fifoGrantFraction) {
        this.fifoGrantFraction = fifoGrantFraction;
    }

    public int getPriorityLevels() {
        return this.priorityLevels;
    }

    public void setPriorityLevels(int priorityLevels) {
        this.priorityLevels = priorityLevels;
    }

    public int getIncastThreshold() {
        return this.incastThreshold;
    }

    public void setIncastThreshold(int incastThreshold) {
        this.incastThreshold = incastThreshold;
    }

    public DataSize getIncastUnscheduledBytes() {
        return this.incastUnscheduledBytes;
    }

    public void setIncastUnscheduledBytes(DataSize incastUnscheduledBytes) {
        this.incastUnscheduledBytes = incastUnscheduledBytes;
    }

    public DataSize getRttBytes() {
        return this.rttBytes;
    }

    public void setRttBytes(DataSize rttBytes) {
        this.rttBytes = rttBytes;
    }

    public DataSize getIncastBufferBytes() {
        return this.incastBufferBytes;
    }

    public void setIncastBufferBytes(DataSize incastBufferBytes) {
        this.incastBufferBytes = incastBufferBytes;
    }

    public boolean isAddressValidation() {
        return this.addressValidation;
    }

    public void setAddressValidation(boolean addressValidation) {
        this.addressValidation = addressValidation;
    }

    public String getCongestionControl() {
        return this.congestionControl;
    }

    public void setCongestionControl(String congestionControl) {
        this.congestionControl = congestionControl;
    }

    public Duration getRttProbeInterval() {
        return this.rttProbeInterval;
    }

    public void setRttProbeInterval(Duration rttProbeInterval) {
        this.rttProbeInterval = rttProbeInterval;
    }

    public Duration getPeerIdleTimeout() {
        return this.peerIdleTimeout;
    }

    public void setPeerIdleTimeout(Duration peerIdleTimeout) {
        this.peerIdleTimeout = peerIdleTimeout;
    }

    public DataSize getMaxInboundBuffer() {
        return this.maxInboundBuffer;
    }

    public void setMaxInboundBuffer(DataSize maxInboundBuffer) {
        this.maxInboundBuffer = maxInboundBuffer;
    }

    public int getMtu() {
        return this.mtu;
    }

    public void setMtu(int mtu) {
        this.mtu = mtu;
    }

    public DataSize getUnscheduledBytes() {
        return this.unscheduledBytes;
    }

    public void setUnscheduledBytes(DataSize unscheduledBytes) {
        this.unscheduledBytes = unscheduledBytes;
    }

    public DataSize getMaxMessageSize() {
        return this.maxMessageSize;
    }

    public void setMaxMessageSize(DataSize maxMessageSize) {
        this.maxMessageSize = maxMessageSize;
    }

    public Duration getResendInterval() {
        return this.resendInterval;
    }

    public void setResendInterval(Duration resendInterval) {
        this.resendInterval = resendInterval;
    }

    public Duration getPeerSilenceTimeout() {
        return this.peerSilenceTimeout;
    }

    public void setPeerSilenceTimeout(Duration peerSilenceTimeout) {
        this.peerSilenceTimeout = peerSilenceTimeout;
    }

    /**
     * Replaced by peer-silence-timeout.
     *
     * @return the value set under the old name, or null
     */
    @Deprecated(since = "0.1.0")
    @DeprecatedConfigurationProperty(replacement = "homa.protocol.peer-silence-timeout",
            reason = "Failure on silence is a wall-clock budget, not a count of 10 ms RESENDs.")
    public @Nullable Integer getTimeoutResends() {
        return this.timeoutResends;
    }

    @Deprecated(since = "0.1.0")
    public void setTimeoutResends(@Nullable Integer timeoutResends) {
        this.timeoutResends = timeoutResends;
    }
}
