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
    /** ACK: listed acks (the header's rpcid is acknowledged too). */
    long[] acks = new long[0];
    int ackCount;
    /** CUTOFFS: the cutoffs (an immutable snapshot); {@link #offset} holds the version. */
    int[] cutoffs;
}
