package io.homa.engine;

import io.homa.engine.internal.wire.AckHeader;
import io.homa.engine.internal.wire.DataHeader;

/**
 * Values every component derives from an {@link EngineConfig} the same way, computed once.
 *
 * @param payloadBytes message bytes per full DATA packet
 * @param unscheduledBytes {@code config.unscheduledBytes()} rounded up to whole DATA packets, so
 *     that packets stay full
 * @param rttBytes how far a receiver grants ahead of what has arrived (Homa's {@code rtt_bytes},
 *     draft "Flow control"): the largest of {@code unscheduledBytes}, two full packets (with 64 KB
 *     packets on loopback, one packet per round trip leaves the link idle while it is acknowledged)
 *     and {@link EngineConfig#rttBytes()}, or when that is 0 the
 *     bandwidth-delay product: what the link carries at {@code linkMbps} (10 Gbit/s without pacing)
 *     in {@value #ENDPOINT_ROUND_TRIP_NS} ns, the round trip between two JVM endpoints: the wire's
 *     few microseconds plus a pass through each event loop. A window shorter than that product
 *     leaves the link idle for part of each round trip (figures in {@code benchmarks/results/})
 * @param incastUnscheduledBytes unscheduled bytes of a response to an INCAST request: at least 1,
 *     so that it can start (paper §3.6)
 * @param incastBufferBytes {@link EngineConfig#incastBufferBytes()}, see {@link #incastHeadBytes}
 * @param grantIncrementBytes smallest increase of a message's granted offset worth a GRANT packet
 * @param controlPriority priority of control packets: the highest level in use
 * @param maxAcksPerPacket rpcids one ACK packet lists at most
 * @param ackDelayNs how long acks we owe wait for a DATA packet to carry them before an explicit
 *     ACK goes out
 * @param maxUnscheduledBytes the most unscheduled bytes a receiver accepts of a message and a
 *     sender sends toward a peer: {@code unscheduledBytes}, or with RTT congestion control
 *     {@code config.unscheduledBytes()} in whole packets without the cap of the automatic
 *     {@code rttBytes} (the window then comes from each peer's measured round trip)
 * @param gsoBatchBytes the longest burst the transport hands the NIC at once (a GSO batch): what
 *     the pacer lets run ahead of the link ({@code maxNicQueueNs} at {@code linkMbps}), at most
 *     {@value #MAX_GSO_BATCH_BYTES} bytes and at least one full datagram; the paper's
 *     {@code gso_pkt_data_size}
 * @param reclaimAfterNs silence after which a server reclaims an RPC: twice the silence that makes
 *     a client give up ({@code peerSilenceTimeoutNs}, and a client checks at most one backoff step,
 *     a fifth of it, late), so that the client has aborted by then (draft "At-most-once semantics")
 */
record EngineParams(
        int payloadBytes,
        int unscheduledBytes,
        int rttBytes,
        int incastUnscheduledBytes,
        int incastBufferBytes,
        int grantIncrementBytes,
        int controlPriority,
        int maxAcksPerPacket,
        long ackDelayNs,
        int maxUnscheduledBytes,
        int gsoBatchBytes,
        long reclaimAfterNs) {

    /** Longest GSO batch: what one UDP GSO send carries at most. */
    static final int MAX_GSO_BATCH_BYTES = 65_000;

    /** The round trip a window covers between two JVM endpoints, ns (see {@code rttBytes}). */
    static final long ENDPOINT_ROUND_TRIP_NS = 100_000;
    /** The link rate a window is sized for when the pacer is off, Mbit/s. */
    static final int UNPACED_LINK_MBPS = 10_000;

    /**
     * The unscheduled head a client asks for the response to a request sent while
     * {@code outstandingRpcs} RPCs are outstanding (SIGCOMM 2018 §3.6, sized by
     * {@link EngineConfig#incastBufferBytes()}): {@code incastBufferBytes / outstandingRpcs}, in
     * whole packets where it is longer than one, at least {@code incastUnscheduledBytes}, at most
     * {@code unscheduledBytes} and what the DATA header's field holds
     * ({@link DataHeader#MAX_INCAST_HEAD_BYTES}), in bytes.
     */
    int incastHeadBytes(int outstandingRpcs) {
        int head = incastBufferBytes / Math.max(1, outstandingRpcs);
        if (head > payloadBytes) {
            head = head / payloadBytes * payloadBytes; // whole packets
        }
        int most = Math.min(unscheduledBytes, DataHeader.MAX_INCAST_HEAD_BYTES);
        return Math.max(incastUnscheduledBytes, Math.min(head, most));
    }

    static EngineParams of(EngineConfig config) {
        int payloadBytes = config.maxDataPayloadBytes();
        int rttBytes = rttBytes(config, payloadBytes);
        int unscheduledBytes = (int) Math.min(EngineConfig.MAX_MESSAGE_BYTES_CAP,
                wholePackets(Math.min(config.unscheduledBytes(), rttBytes), payloadBytes));
        return new EngineParams(
                payloadBytes,
                unscheduledBytes,
                Math.max(rttBytes, unscheduledBytes),
                Math.max(1, Math.min(unscheduledBytes, config.incastUnscheduledBytes())),
                config.incastBufferBytes(),
                Math.max(payloadBytes, unscheduledBytes / 8 / payloadBytes * payloadBytes),
                config.priorityLevels() - 1,
                Math.min(AtMostOnce.MAX_ACKS_PER_PACKET, (config.maxDatagramBytes() - AckHeader.HEADER_LENGTH) / AckHeader.ACK_LENGTH),
                Math.max(250_000L, config.resendIntervalNs() / 4),
                config.rttCongestionControl()
                        ? (int) Math.min(EngineConfig.MAX_MESSAGE_BYTES_CAP,
                                Math.max(unscheduledBytes, wholePackets(config.unscheduledBytes(), payloadBytes)))
                        : unscheduledBytes,
                gsoBatchBytes(config),
                2 * config.peerSilenceTimeoutNs());
    }

    private static int rttBytes(EngineConfig config, int payloadBytes) {
        long linkMbps = config.linkMbps() > 0 ? config.linkMbps() : UNPACED_LINK_MBPS;
        long window = config.rttBytes() > 0 ? config.rttBytes()
                : linkMbps * ENDPOINT_ROUND_TRIP_NS / 8_000 + 2L * payloadBytes;
        return (int) Math.min(EngineConfig.MAX_MESSAGE_BYTES_CAP, Math.max(2L * payloadBytes, window));
    }

    /**
     * The transport's GSO batch at the link rate, as it sizes it: {@code maxNicQueueNs} of
     * transmission, at most {@value #MAX_GSO_BATCH_BYTES} bytes, in whole datagrams and at least
     * one (at 100 Mbit/s, 625 bytes: no batching, one 1,500-byte packet per send).
     */
    static int gsoBatchBytes(EngineConfig config) {
        int datagram = config.maxDatagramBytes();
        long linkMbps = config.linkMbps() > 0 ? config.linkMbps() : UNPACED_LINK_MBPS;
        long bytes = Math.min(MAX_GSO_BATCH_BYTES, linkMbps * config.maxNicQueueNs() / 8_000L);
        return (int) Math.max(datagram, bytes / datagram * datagram);
    }

    private static long wholePackets(long bytes, int payloadBytes) {
        return (bytes + payloadBytes - 1) / payloadBytes * payloadBytes;
    }
}
