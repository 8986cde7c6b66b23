package io.homa.engine;

import io.homa.engine.internal.wire.AckHeader;
import io.homa.engine.internal.wire.ControlHeader;
import io.homa.engine.internal.wire.CutoffsHeader;
import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.GrantHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import io.homa.engine.internal.wire.ResendHeader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The engine's components, wired by hand exactly as {@link HomaEngine}'s constructor wires them,
 * and exposed so that a test can drive any one of them directly; plus builders of the packets they
 * take and a recording {@link PacketSink}. The rig plays one endpoint at {@link #LOCAL_PORT}; its
 * peers are {@link #PEER} and {@link #OTHER}.
 */
final class ComponentRig {
    static final int LOCAL_PORT = 4000;
    static final InetSocketAddress PEER = new InetSocketAddress("10.0.0.1", 5000);
    static final InetSocketAddress OTHER = new InetSocketAddress("10.0.0.3", 6000);
    static final long FIRST_RPC_ID = 1000;

    final EngineConfig config;
    final EngineParams params;
    final EngineCounters counters = new EngineCounters();
    final ArrayDeque<HomaEvent> events = new ArrayDeque<>();
    final TimerQueue timerQueue = new TimerQueue();
    final ControlQueue control;
    final UnscheduledCutoffs cutoffs;
    final GrantScheduler grantScheduler;
    final RpcTable rpcs;
    final AtMostOnce atMostOnce;
    final Receiver receiver;
    final Pacer pacer;
    final Sender sender;
    final SenderFeedback feedback;
    final Timers timers;
    private long nextRpcId = FIRST_RPC_ID;

    ComponentRig(EngineConfig config) {
        this.config = config;
        this.params = EngineParams.of(config);
        this.control = new ControlQueue(LOCAL_PORT, params.controlPriority(), params.maxAcksPerPacket());
        this.cutoffs = new UnscheduledCutoffs(config.priorityLevels(), params.unscheduledBytes(),
                UnscheduledCutoffs.initialVersion(FIRST_RPC_ID));
        this.grantScheduler = new GrantScheduler(config, params.unscheduledBytes(), params.payloadBytes(),
                params.grantIncrementBytes());
        this.rpcs = new RpcTable(config, grantScheduler, timerQueue, counters);
        this.atMostOnce = new AtMostOnce(params, rpcs, control, timerQueue, events, counters);
        RttCongestion congestion = new RttCongestion(config, params, rpcs, control, cutoffs, counters);
        this.receiver = new Receiver(config, params, rpcs, grantScheduler, cutoffs, control, atMostOnce, timerQueue,
                events, counters, new EngineTrace(io.homa.engine.trace.Timetrace.off()), congestion);
        this.pacer = new Pacer(config.linkMbps(), Pacer.bucketNs(config));
        // Address validation is off here (a hand-built server holds every client to 3x otherwise):
        // AddressValidationTest tests it through whole engines.
        AddressValidation validation = new AddressValidation(false, params.payloadBytes(), new byte[32], counters);
        this.sender = new Sender(config, params, LOCAL_PORT, rpcs, control, timerQueue, pacer, validation, counters,
                new EngineTrace(io.homa.engine.trace.Timetrace.off()), congestion);
        this.feedback = new SenderFeedback(params, rpcs, control, atMostOnce, validation, receiver, sender, counters,
                congestion);
        this.timers = new Timers(config, params, timerQueue, rpcs, receiver, atMostOnce, control, events, counters);
    }

    ComponentRig() {
        this(EngineConfig.defaults());
    }

    int payload() {
        return params.payloadBytes();
    }

    // ---- as HomaEngine does it

    /** Client: starts an RPC the way {@link HomaEngine#sendRequest} does. */
    ClientRpc startRequest(long nowNs, InetSocketAddress server, byte[] request) {
        long rpcId = nextRpcId;
        nextRpcId += 2;
        ClientRpc rpc = rpcs.startClientRpc(rpcId, server, nowNs);
        sender.request(rpc, new byte[][] {request}, nowNs);
        return rpc;
    }

    /** Server: a server RPC held as if its whole request had arrived and been delivered (IN_SERVICE). */
    ServerRpc serverRpcInService(long nowNs, InetSocketAddress client, long rpcId, int requestBytes) {
        Peer peer = rpcs.peer(client, nowNs);
        ServerRpc rpc = new ServerRpc(rpcId, peer,
                new InboundMessage(requestBytes, requestBytes, peer, rpcId | HomaHeader.FROM_SERVER_BIT));
        rpc.lastHeardNs = nowNs;
        rpcs.addServerRpc(rpc);
        rpc.moveTo(ServerRpc.State.IN_SERVICE);
        return rpc;
    }

    // ---- packets out

    /** One packet handed to the sink, copied. */
    record Sent(InetSocketAddress to, byte[] bytes, int priority) {
        PacketType type() {
            return PacketType.fromCode(Byte.toUnsignedInt(bytes[HomaHeader.TYPE_OFFSET]));
        }

        ByteBuffer buffer() {
            return ByteBuffer.wrap(bytes);
        }

        DataHeader data() {
            return new DataHeader().wrap(buffer(), 0);
        }

        int payloadBytes() {
            return bytes.length - DataHeader.HEADER_LENGTH;
        }

        long wireRpcId() {
            return new ControlHeader().wrap(buffer(), 0).rpcId();
        }
    }

    /** A sink that copies every packet into {@code into}. */
    static PacketSink recorder(List<Sent> into) {
        return (peer, packet, priority) -> {
            byte[] bytes = new byte[packet.remaining()];
            packet.get(packet.position(), bytes);
            into.add(new Sent(peer, bytes, priority));
        };
    }

    /** Everything the sender hands out at {@code nowNs}, until it hands out nothing. */
    List<Sent> drain(long nowNs) {
        List<Sent> sent = new ArrayList<>();
        PacketSink sink = recorder(sent);
        while (sender.pollTransmit(nowNs, sink, 64) > 0) {
            // drain
        }
        return sent;
    }

    /** Takes every queued control packet and encodes it, as the sender would. */
    List<Sent> drainControl() {
        List<Sent> out = new ArrayList<>();
        PendingControl next;
        while ((next = control.poll()) != null) {
            ByteBuffer buffer = ByteBuffer.allocate(config.maxDatagramBytes());
            int length = control.encode(next, buffer);
            byte[] bytes = new byte[length];
            buffer.get(0, bytes);
            out.add(new Sent(next.peer, bytes, next.priority));
            control.recycle(next);
        }
        return out;
    }

    static List<Sent> ofType(List<Sent> packets, PacketType type) {
        return packets.stream().filter(p -> p.type() == type).toList();
    }

    // ---- packets in

    /**
     * A DATA packet carrying {@code message[offset, offset + length)}.
     *
     * @param incoming the DATA header's incoming field (bytes the sender sends unscheduled, or granted)
     */
    static ByteBuffer data(long wireRpcId, byte[] message, int incoming, int offset, int length, int cutoffVersion) {
        ByteBuffer packet = ByteBuffer.allocate(DataHeader.HEADER_LENGTH + length);
        new DataHeader().wrap(packet, 0).writeCommon(PacketType.DATA, PEER.getPort(), LOCAL_PORT, wireRpcId)
                .messageLength(message.length)
                .incoming(incoming)
                .cutoffVersion(cutoffVersion)
                .dataOffset(offset)
                .segmentOffset(offset);
        packet.put(DataHeader.HEADER_LENGTH, message, offset, length);
        return packet;
    }

    /** Feeds a DATA packet to the receiver as {@link HomaEngine#onPacket} does. */
    boolean onData(long nowNs, InetSocketAddress from, ByteBuffer packet) {
        ControlHeader common = new ControlHeader().wrap(packet, 0);
        return receiver.onData(nowNs, from, packet, 0, packet.limit(), common.fromServer(), common.clientRpcId());
    }

    static ByteBuffer grant(long wireRpcId, int offset, int priority) {
        ByteBuffer packet = ByteBuffer.allocate(GrantHeader.HEADER_LENGTH);
        new GrantHeader().wrap(packet, 0).writeCommon(PacketType.GRANT, PEER.getPort(), LOCAL_PORT, wireRpcId);
        new GrantHeader().wrap(packet, 0).grantOffset(offset).priority(priority).resendAll(false);
        return packet;
    }

    static ByteBuffer resend(long wireRpcId, int offset, int length) {
        ByteBuffer packet = ByteBuffer.allocate(ResendHeader.HEADER_LENGTH);
        new ResendHeader().wrap(packet, 0).writeCommon(PacketType.RESEND, PEER.getPort(), LOCAL_PORT, wireRpcId);
        new ResendHeader().wrap(packet, 0).resendOffset(offset).length(length).priority(0);
        return packet;
    }

    static ByteBuffer cutoffsPacket(long wireRpcId, int[] cutoffs, int version) {
        ByteBuffer packet = ByteBuffer.allocate(CutoffsHeader.HEADER_LENGTH);
        CutoffsHeader header = new CutoffsHeader().wrap(packet, 0);
        header.writeCommon(PacketType.CUTOFFS, PEER.getPort(), LOCAL_PORT, wireRpcId);
        for (int i = 0; i < CutoffsHeader.NUM_PRIORITIES; i++) {
            header.cutoff(i, cutoffs[i]);
        }
        header.cutoffVersion(version);
        return packet;
    }

    /** An ACK from a client: {@code rpcId} in the header, {@code listed} after it. */
    static ByteBuffer ack(long rpcId, long... listed) {
        ByteBuffer packet = ByteBuffer.allocate(AckHeader.packetLength(listed.length));
        AckHeader header = new AckHeader().wrap(packet, 0);
        header.writeCommon(PacketType.ACK, PEER.getPort(), LOCAL_PORT, rpcId);
        header.numAcks(listed.length);
        for (int i = 0; i < listed.length; i++) {
            header.ack(i, listed[i], LOCAL_PORT);
        }
        return packet;
    }

    boolean onGrant(long nowNs, InetSocketAddress from, ByteBuffer packet) {
        ControlHeader common = new ControlHeader().wrap(packet, 0);
        return feedback.onGrant(nowNs, from, packet, 0, packet.limit(), common.fromServer(), common.clientRpcId());
    }

    boolean onResend(long nowNs, InetSocketAddress from, ByteBuffer packet) {
        ControlHeader common = new ControlHeader().wrap(packet, 0);
        return feedback.onResend(nowNs, from, packet, 0, packet.limit(), common.fromServer(), common.clientRpcId());
    }

    boolean onAck(InetSocketAddress from, ByteBuffer packet) {
        ControlHeader common = new ControlHeader().wrap(packet, 0);
        return atMostOnce.onAck(from, packet, 0, packet.limit(), common.fromServer(), common.clientRpcId());
    }

    static byte[] pattern(int length, int seed) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (i * 31 + seed * 7 + (i >>> 8));
        }
        return bytes;
    }
}
