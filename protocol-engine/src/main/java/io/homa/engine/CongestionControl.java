package io.homa.engine;

/**
 * Which congestion control an engine runs ({@code homa.protocol.congestion-control}).
 */
public enum CongestionControl {
    /**
     * None beyond the draft's: every peer gets the same unscheduled bytes and grant window
     * ({@link EngineConfig#unscheduledBytes()}, {@link EngineConfig#rttBytes()}), and nothing on
     * the wire differs from an engine without congestion control.
     */
    OFF,
    /**
     * RTT-based, after Lu and Zhang, "Leveraging Homa" (sections "per-peer RTT detection",
     * "congestion detection", "Unscheduled window", "Scheduled window"): RTT_PROBE and RTT_RESPS
     * measure each peer's minimum and recent round trip, and the unscheduled bytes toward a peer
     * and the grant window for its messages follow from them and the link rates.
     */
    RTT
}
