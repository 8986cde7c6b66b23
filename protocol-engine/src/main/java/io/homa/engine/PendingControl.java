package io.homa.engine;

import io.homa.engine.wire.PacketType;
import java.net.InetSocketAddress;

/** A control packet waiting for {@link HomaEngine#pollTransmit}; pooled by the engine. */
final class PendingControl {
    PacketType type;
    InetSocketAddress peer;
    /** Rpcid as on the wire, S bit included. */
    long wireRpcId;
    /** GRANT: offset; RESEND: offset; RPC_UNKNOWN: the reason byte ({@code HomaHeader.REASON_OFFSET}). */
    int offset;
    /** RESEND: length. */
    int length;
    /** GRANT and RESEND: priority field. */
    int priority;
    /** The level the packet itself goes at (the highest in use, but for RTT probes). */
    int sendPriority;
    /** RTT_PROBE, RTT_RESPS: the prober's timestamp. */
    long timestampNs;
    /** RTT_PROBE, RTT_RESPS: our link rate, Mbit/s. */
    int linkMbps;
    /** GRANT, RTT_PROBE, RTT_RESPS: our unscheduled ratio's wire byte ({@code UnscheduledRatio}). */
    int unscheduledRatioWire;
    /** ACK: listed acks (the header's rpcid is acknowledged too). */
    long[] acks = new long[0];
    int ackCount;
    /** CUTOFFS: the cutoffs (an immutable snapshot); {@link #offset} holds the version. */
    int[] cutoffs;
}
