package io.homa.engine;

import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.internal.wire.RttProbeHeader;
import io.homa.engine.internal.wire.UnscheduledRatio;
import io.homa.engine.wire.PacketType;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * RTT-based congestion control (Lu and Zhang, "Leveraging Homa"): per-peer RTT detection with
 * RTT_PROBE / RTT_RESPS, the per-peer unscheduled window that shrinks as the peer's recent round
 * trip rises above {@code rtt_mid} ({@link CongestionWindow}), the grant window for a peer's
 * messages from its {@code rtt_mid} at our link rate, and the unscheduled ratio receivers report.
 * With {@link CongestionControl#OFF} it sends nothing, answers no probe and leaves every window
 * at the engine's global one, so that nothing on the wire changes.
 *
 * <p>A probe goes when a message is queued for a peer we have heard from (it then holds our
 * address token, so it can tell the probe is ours) and our last probe is older than
 * {@code rttProbeIntervalNs}, or than {@code 8 rtt_min} while the peer is congested. Probes are
 * control packets (never paced) at the priority of the peer's shortest unscheduled messages. A
 * probe is answered only for an address that has shown it receives our packets (a client that
 * echoed our address token, {@link AddressValidation}; a server we are calling), so a forged
 * probe reflects nothing toward a victim. A response counts only if it echoes the one probe we
 * have outstanding to its sender, once. A peer that never answers (one that knows only the draft
 * drops unknown packet types) is given up after {@value #MAX_UNANSWERED_PROBES} probes.
 */
final class RttCongestion {
    /** Probes in a row a peer that never answered may leave unanswered before it is no longer probed. */
    static final int MAX_UNANSWERED_PROBES = 4;
    /** A round trip longer than this is not taken (a response that took it measures a pause, not a path). */
    static final long MAX_RTT_NS = 1_000_000_000L;
    /** While congested, a peer is probed every this many {@code rtt_min} (paper: 8). */
    static final int CONGESTED_PROBE_RTTS = 8;
    /** Below this unscheduled ratio, percent, the extra unscheduled bytes are halved (paper: 40%). */
    static final int LOW_UNSCHEDULED_PERCENT = 40;

    private final boolean enabled;
    private final boolean addressValidation;
    private final long probeIntervalNs;
    /** The link rate we advertise and size grant windows with, Mbit/s. */
    private final int linkMbps;
    private final int priorityLevels;
    private final int maxIncomingBytes;
    private final EngineParams params;
    private final RpcTable rpcs;
    private final ControlQueue control;
    private final UnscheduledCutoffs cutoffs;
    private final EngineCounters counters;
    private final RttProbeHeader rx = new RttProbeHeader();
    /** Probe timestamps are ns since just before our first probe: positive, so 0 can mean "none". */
    private long originNs;
    private boolean originSet;

    RttCongestion(EngineConfig config, EngineParams params, RpcTable rpcs, ControlQueue control,
            UnscheduledCutoffs cutoffs, EngineCounters counters) {
        this.enabled = config.rttCongestionControl();
        this.addressValidation = config.addressValidation();
        this.probeIntervalNs = config.rttProbeIntervalNs();
        this.linkMbps = config.linkMbps() > 0 ? config.linkMbps() : EngineParams.UNPACED_LINK_MBPS;
        this.priorityLevels = config.priorityLevels();
        this.maxIncomingBytes = config.maxIncomingBytes();
        this.params = params;
        this.rpcs = rpcs;
        this.control = control;
        this.cutoffs = cutoffs;
        this.counters = counters;
    }

    boolean enabled() {
        return enabled;
    }

    /**
     * A message for {@code peer} is being queued: probes the peer if due, and sizes the message's
     * unscheduled bytes.
     *
     * @param asServer whether the message is a response (we are the peer's server)
     * @param throttleEmpty whether no other message waits to be sent (the paper's empty throttle list)
     * @return the message's unscheduled bytes, at most {@link EngineParams#maxUnscheduledBytes()}
     */
    int newMessage(Peer peer, long nowNs, boolean asServer, boolean throttleEmpty) {
        if (!enabled) {
            return params.unscheduledBytes();
        }
        maybeProbe(peer, nowNs, asServer);
        return unscheduledBytes(peer, throttleEmpty);
    }

    private void maybeProbe(Peer peer, long nowNs, boolean asServer) {
        PeerCongestion cc = peer.congestion;
        if (cc.probingStopped || !peer.heardFrom) {
            return;
        }
        if (cc.outstandingTimestampNs != 0) {
            if (nowNs - cc.outstandingSentNs < Math.max(probeIntervalNs, 2 * cc.rttRecentNs)) {
                return; // its answer may still come: one probe in flight per peer
            }
            cc.outstandingTimestampNs = 0;
            counters.rttProbesLost++;
            if (++cc.unanswered >= MAX_UNANSWERED_PROBES && cc.samples == 0) {
                cc.probingStopped = true; // it never answered: it does not know the type
                return;
            }
        }
        if (cc.probed) {
            long intervalNs = cc.samples > 0 && window(cc).congested(cc.rttRecentNs)
                    ? CONGESTED_PROBE_RTTS * cc.rttMinNs : probeIntervalNs;
            if (nowNs - cc.lastProbeNs < intervalNs) {
                return;
            }
        }
        if (!originSet) {
            originNs = nowNs - 1;
            originSet = true;
        }
        long timestampNs = nowNs - originNs;
        cc.outstandingTimestampNs = timestampNs;
        cc.outstandingSentNs = nowNs;
        cc.lastProbeNs = nowNs;
        cc.probed = true;
        control.rtt(PacketType.RTT_PROBE, peer.address, asServer ? HomaHeader.FROM_SERVER_BIT : 0, timestampNs,
                linkMbps, ratioWire(), peer.unscheduledPriority(1, priorityLevels));
        counters.rttProbesSent++;
    }

    /**
     * The paper's unscheduled window toward {@code peer} ("Unscheduled window"): before any sample
     * the engine's global unscheduled bytes; above {@code rtt_high} one GSO batch; else
     * {@code rtt_unscheduled} at the peer's link rate, plus {@code rtt_mid} more (half of it when
     * the peer's unscheduled ratio is below 40%) when no other message waits to be sent. In whole
     * packets, at least one, at most {@link EngineParams#maxUnscheduledBytes()} (a receiver drops
     * unscheduled bytes beyond it).
     */
    int unscheduledBytes(Peer peer, boolean throttleEmpty) {
        PeerCongestion cc = peer.congestion;
        if (!enabled || cc.samples == 0 || cc.linkMbps == 0) {
            return params.unscheduledBytes();
        }
        CongestionWindow window = window(cc);
        long bytes;
        if (window.congested(cc.rttRecentNs)) {
            bytes = gsoBatchMessageBytes();
        } else {
            long ns = window.unscheduledNs(cc.rttRecentNs);
            if (throttleEmpty) {
                long extraNs = window.rttMidNs();
                if (cc.unscheduledPercent >= 0 && cc.unscheduledPercent < LOW_UNSCHEDULED_PERCENT) {
                    extraNs /= 2;
                }
                ns += extraNs;
            }
            bytes = CongestionWindow.bytes(ns, cc.linkMbps);
        }
        return (int) Math.min(params.maxUnscheduledBytes(), wholePackets(bytes));
    }

    /** Message bytes one GSO batch carries: its full DATA packets, at least one. */
    private long gsoBatchMessageBytes() {
        int packets = Math.max(1, params.gsoBatchBytes() / (params.payloadBytes() + DataHeader.HEADER_LENGTH));
        return (long) packets * params.payloadBytes();
    }

    private long wholePackets(long bytes) {
        int payload = params.payloadBytes();
        return Math.max(payload, (bytes + payload - 1) / payload * payload);
    }

    private CongestionWindow window(PeerCongestion cc) {
        return CongestionWindow.of(cc.rttMinNs, cc.linkMbps, params.gsoBatchBytes());
    }

    /**
     * The grant window for a peer's messages (the paper's "Scheduled window":
     * {@code rtt_mid * local_link_mbps / 8}), from {@code rtt_mid} rather than the recent round
     * trip, which the two directions need not share; in whole packets, at least two, at most
     * {@code maxIncomingBytes}.
     */
    private int grantWindowBytes(PeerCongestion cc) {
        long bytes = CongestionWindow.bytes(window(cc).rttMidNs(), linkMbps);
        int payload = params.payloadBytes();
        return (int) Math.max(2L * payload, Math.min(maxIncomingBytes, wholePackets(bytes)));
    }

    /** Our unscheduled ratio as it travels ({@link UnscheduledRatio}); none with congestion control off. */
    int ratioWire() {
        return enabled ? UnscheduledRatio.toWire(cutoffs.unscheduledPercent()) : UnscheduledRatio.NONE;
    }

    /** A GRANT about a message of ours to {@code peer} carried {@code ratioWire}: the peer's ratio, if valid. */
    void onGrantRatio(Peer peer, int ratioWire) {
        if (enabled && ratioWire != UnscheduledRatio.NONE && UnscheduledRatio.valid(ratioWire)) {
            peer.congestion.unscheduledPercent = UnscheduledRatio.percent(ratioWire);
        }
    }

    /**
     * RTT_PROBE: answered at once with an RTT_RESPS echoing its timestamp, if the sender's address
     * has validated.
     *
     * @return false for a malformed packet (short, a timestamp that is not positive, a link rate
     *     of 0 or above {@link EngineConfig#MAX_LINK_MBPS}, a ratio above 100%): the caller drops
     *     and counts it
     */
    boolean onProbe(InetSocketAddress from, ByteBuffer packet, int offset, int length, boolean fromServer) {
        if (!wellFormed(packet, offset, length)) {
            return false;
        }
        Peer peer = rpcs.knownPeer(from);
        if (!enabled || peer == null || !answerable(peer, fromServer)) {
            counters.rttProbesIgnored++;
            return true;
        }
        takeReport(peer.congestion, rx.unscheduledRatio());
        control.rtt(PacketType.RTT_RESPS, from, fromServer ? 0 : HomaHeader.FROM_SERVER_BIT, rx.timestampNs(),
                linkMbps, ratioWire(), peer.unscheduledPriority(1, priorityLevels));
        return true;
    }

    /**
     * Whether a probe from {@code peer} is answered: as its server, once its address validated
     * (it echoed our token; with address validation off, once we hold state for it); as its
     * client, while we call it or have heard from it as a server.
     */
    private boolean answerable(Peer peer, boolean fromServer) {
        if (fromServer) {
            return peer.clientRpcCount > 0 || peer.serverEpoch != 0 || peer.echoToken != 0;
        }
        return addressValidation ? peer.addressValidated : peer.heardFrom;
    }

    /**
     * RTT_RESPS: one sample if it echoes the probe we have outstanding to its sender; anything
     * else is ignored and counted.
     *
     * @return false for a malformed packet, as {@link #onProbe}
     */
    boolean onResponse(long nowNs, InetSocketAddress from, ByteBuffer packet, int offset, int length) {
        if (!wellFormed(packet, offset, length)) {
            return false;
        }
        Peer peer = rpcs.knownPeer(from);
        PeerCongestion cc = peer == null ? null : peer.congestion;
        long echoed = rx.timestampNs();
        if (!enabled || cc == null || cc.outstandingTimestampNs == 0 || echoed != cc.outstandingTimestampNs) {
            counters.rttProbesIgnored++;
            return true;
        }
        cc.outstandingTimestampNs = 0;
        long rttNs = nowNs - cc.outstandingSentNs;
        if (rttNs <= 0 || rttNs > MAX_RTT_NS) {
            counters.rttProbesIgnored++;
            return true;
        }
        cc.sample(rttNs);
        cc.linkMbps = (int) rx.linkMbps();
        takeReport(cc, rx.unscheduledRatio());
        cc.grantWindowBytes = grantWindowBytes(cc);
        counters.rttProbesAnswered++;
        return true;
    }

    private static void takeReport(PeerCongestion cc, int ratioWire) {
        if (ratioWire != UnscheduledRatio.NONE) {
            cc.unscheduledPercent = UnscheduledRatio.percent(ratioWire);
        }
    }

    private boolean wellFormed(ByteBuffer packet, int offset, int length) {
        if (length < RttProbeHeader.HEADER_LENGTH) {
            return false;
        }
        rx.wrap(packet, offset);
        long linkMbps = rx.linkMbps();
        return rx.timestampNs() > 0 && linkMbps > 0 && linkMbps <= EngineConfig.MAX_LINK_MBPS
                && UnscheduledRatio.valid(rx.unscheduledRatio());
    }
}
