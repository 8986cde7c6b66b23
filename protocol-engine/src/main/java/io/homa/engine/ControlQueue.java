package io.homa.engine;

import io.homa.engine.internal.wire.AckHeader;
import io.homa.engine.internal.wire.ControlHeader;
import io.homa.engine.internal.wire.CutoffsHeader;
import io.homa.engine.internal.wire.GrantHeader;
import io.homa.engine.wire.PacketType;
import io.homa.engine.internal.wire.ResendHeader;
import io.homa.engine.internal.wire.RttProbeHeader;
import io.homa.engine.internal.wire.UnscheduledRatio;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * Control packets waiting to be sent (draft "Packet types": GRANT, RESEND, RPC_UNKNOWN, BUSY,
 * CUTOFFS, NEED_ACK, ACK), oldest first, and their encoding. They go out before any DATA and
 * bypass the pacer (draft "Pacing": control packets are small and urgent), always at the highest
 * priority level in use. Entries are pooled: queuing a control packet allocates nothing once the
 * pool has grown to the largest burst.
 */
final class ControlQueue {
    private final int localPort;
    private final int controlPriority;
    private final int maxAcksPerPacket;
    private final ArrayDeque<PendingControl> queue = new ArrayDeque<>();
    private final ArrayDeque<PendingControl> pool = new ArrayDeque<>();
    /** Entries that carry an rpcid array for ACKs: kept apart, so that their arrays are reused. */
    private final ArrayDeque<PendingControl> ackPool = new ArrayDeque<>();
    private final GrantHeader grantTx = new GrantHeader();
    private final ResendHeader resendTx = new ResendHeader();
    private final AckHeader ackTx = new AckHeader();
    private final CutoffsHeader cutoffsTx = new CutoffsHeader();
    private final ControlHeader controlTx = new ControlHeader();
    private final RttProbeHeader rttTx = new RttProbeHeader();

    /**
     * @param localPort source port written into every packet
     * @param controlPriority priority of every control packet (the highest level in use)
     * @param maxAcksPerPacket how many rpcids one ACK packet lists at most
     */
    ControlQueue(int localPort, int controlPriority, int maxAcksPerPacket) {
        this.localPort = localPort;
        this.controlPriority = controlPriority;
        this.maxAcksPerPacket = maxAcksPerPacket;
    }

    int controlPriority() {
        return controlPriority;
    }

    int maxAcksPerPacket() {
        return maxAcksPerPacket;
    }

    boolean isEmpty() {
        return queue.isEmpty();
    }

    int size() {
        return queue.size();
    }

    /**
     * Queues a control packet with no fields beyond the common header (BUSY, RPC_UNKNOWN,
     * NEED_ACK) and returns it so that the caller can fill the type's fields.
     *
     * @param wireRpcId the rpcid as on the wire (S bit included)
     */
    PendingControl add(PacketType type, InetSocketAddress peer, long wireRpcId) {
        return add(pool, type, peer, wireRpcId);
    }

    private PendingControl add(ArrayDeque<PendingControl> from, PacketType type, InetSocketAddress peer,
            long wireRpcId) {
        PendingControl control = from.poll();
        if (control == null) {
            control = new PendingControl();
        }
        control.type = type;
        control.peer = peer;
        control.wireRpcId = wireRpcId;
        control.offset = 0;
        control.length = 0;
        control.priority = controlPriority;
        control.sendPriority = controlPriority;
        control.timestampNs = 0;
        control.linkMbps = 0;
        control.unscheduledRatioWire = UnscheduledRatio.NONE;
        control.ackCount = 0;
        control.cutoffs = null;
        queue.add(control);
        return control;
    }

    /** Queues a GRANT: bytes below {@code offset} may be sent, scheduled ones at {@code priority}. */
    void grant(InetSocketAddress peer, long wireRpcId, int offset, int priority) {
        grant(peer, wireRpcId, offset, priority, UnscheduledRatio.NONE);
    }

    /**
     * Queues a GRANT carrying our unscheduled ratio in its reserved byte 13
     * ({@link UnscheduledRatio}; {@code NONE} leaves the byte 0, as the draft has it).
     */
    void grant(InetSocketAddress peer, long wireRpcId, int offset, int priority, int unscheduledRatioWire) {
        PendingControl grant = add(PacketType.GRANT, peer, wireRpcId);
        grant.offset = offset;
        grant.priority = priority;
        grant.unscheduledRatioWire = unscheduledRatioWire;
    }

    /**
     * Queues an RTT_PROBE or RTT_RESPS ({@link RttProbeHeader}) sent at {@code sendPriority}.
     *
     * @param timestampNs the prober's timestamp (ours for a probe, the probe's for a response)
     * @param linkMbps our link rate, Mbit/s
     * @param unscheduledRatioWire our unscheduled ratio as {@link UnscheduledRatio} writes it
     */
    void rtt(PacketType type, InetSocketAddress peer, long wireRpcId, long timestampNs, int linkMbps,
            int unscheduledRatioWire, int sendPriority) {
        PendingControl control = add(type, peer, wireRpcId);
        control.timestampNs = timestampNs;
        control.linkMbps = linkMbps;
        control.unscheduledRatioWire = unscheduledRatioWire;
        control.sendPriority = sendPriority;
    }

    /** Queues a RESEND for {@code [offset, offset + length)}. */
    void resend(InetSocketAddress peer, long wireRpcId, int offset, int length) {
        PendingControl resend = add(PacketType.RESEND, peer, wireRpcId);
        resend.offset = offset;
        resend.length = length;
    }

    /** Queues CUTOFFS carrying {@code cutoffs} (an immutable snapshot) under {@code version}. */
    void cutoffs(InetSocketAddress peer, long wireRpcId, int[] cutoffs, int version) {
        PendingControl control = add(PacketType.CUTOFFS, peer, wireRpcId);
        control.cutoffs = cutoffs;
        control.offset = version;
    }

    /** Queues an RPC_UNKNOWN whose reason byte says why ({@code HomaHeader.REASON_OFFSET}). */
    void rpcUnknown(InetSocketAddress peer, long wireRpcId, int reason) {
        add(PacketType.RPC_UNKNOWN, peer, wireRpcId).offset = reason;
    }

    /** Queues an ACK for {@code rpcId} plus up to {@link #maxAcksPerPacket} rpcids taken from {@code peer}'s pending acks. */
    void ack(Peer peer, long rpcId) {
        PendingControl ack = add(ackPool, PacketType.ACK, peer.address, rpcId);
        int count = Math.min(peer.pendingAckCount, maxAcksPerPacket);
        if (ack.acks.length < count) {
            ack.acks = new long[maxAcksPerPacket];
        }
        for (int i = 0; i < count; i++) {
            ack.acks[i] = peer.takePendingAck();
        }
        ack.ackCount = count;
    }

    /** The oldest queued control packet, or null; hand it back with {@link #recycle} once written. */
    PendingControl poll() {
        return queue.poll();
    }

    void recycle(PendingControl control) {
        control.peer = null;
        control.cutoffs = null;
        (control.acks.length > 0 ? ackPool : pool).add(control);
    }

    void clear() {
        queue.clear();
    }

    /**
     * Writes {@code control} as a packet at the start of {@code buffer}.
     *
     * @return the packet's length in bytes
     */
    int encode(PendingControl control, ByteBuffer buffer) {
        int port = control.peer.getPort();
        switch (control.type) {
            case GRANT -> {
                grantTx.wrap(buffer, 0).writeCommon(PacketType.GRANT, localPort, port, control.wireRpcId);
                grantTx.grantOffset(control.offset).priority(control.priority).resendAll(false);
                if (control.unscheduledRatioWire != UnscheduledRatio.NONE) {
                    grantTx.reason(control.unscheduledRatioWire);
                }
                return GrantHeader.HEADER_LENGTH;
            }
            case RTT_PROBE, RTT_RESPS -> {
                rttTx.wrap(buffer, 0).writeCommon(control.type, localPort, port, control.wireRpcId);
                rttTx.timestampNs(control.timestampNs).linkMbps(control.linkMbps)
                        .unscheduledRatio(control.unscheduledRatioWire);
                return RttProbeHeader.HEADER_LENGTH;
            }
            case RESEND -> {
                resendTx.wrap(buffer, 0).writeCommon(PacketType.RESEND, localPort, port, control.wireRpcId);
                resendTx.resendOffset(control.offset).length(control.length).priority(control.priority);
                return ResendHeader.HEADER_LENGTH;
            }
            case CUTOFFS -> {
                cutoffsTx.wrap(buffer, 0).writeCommon(PacketType.CUTOFFS, localPort, port, control.wireRpcId);
                for (int i = 0; i < CutoffsHeader.NUM_PRIORITIES; i++) {
                    cutoffsTx.cutoff(i, control.cutoffs[i]);
                }
                cutoffsTx.cutoffVersion(control.offset);
                return CutoffsHeader.HEADER_LENGTH;
            }
            case ACK -> {
                ackTx.wrap(buffer, 0).writeCommon(PacketType.ACK, localPort, port, control.wireRpcId);
                ackTx.numAcks(control.ackCount);
                for (int i = 0; i < control.ackCount; i++) {
                    ackTx.ack(i, control.acks[i], port);
                }
                return AckHeader.packetLength(control.ackCount);
            }
            default -> {
                controlTx.wrap(buffer, 0).writeCommon(control.type, localPort, port, control.wireRpcId);
                if (control.type == PacketType.RPC_UNKNOWN && control.offset != 0) {
                    controlTx.reason(control.offset);
                }
                return ControlHeader.HEADER_LENGTH;
            }
        }
    }
}
