package io.homa.bench.jmh;

import io.homa.engine.EngineConfig;
import io.homa.engine.HomaEngine;
import io.homa.engine.PacketSink;
import io.homa.engine.SendOptions;
import io.homa.engine.internal.wire.CutoffsHeader;
import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.GrantHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * Drives one {@link HomaEngine} as the receiver of a long message, one full DATA packet per
 * {@link #step()}, with a scripted sender in place of the peer engine: it sends the next packet
 * of the message as soon as it is granted, and reads the engine's GRANTs. At steady state every
 * step is one DATA in and (when the grant increment is one packet) one GRANT out.
 *
 * <p>The message is as long as the engine allows ({@link EngineConfig#MAX_MESSAGE_BYTES_CAP});
 * before its last packet the RPC is dropped (the server aborts the request, the client cancels
 * its call) and a new one starts, so that no step pays for assembling a 64 MiB message. The
 * virtual clock advances {@link #NS_PER_PACKET} per step and the engine's timers run when due,
 * as in an event loop. Not thread-safe; allocation-free per step once constructed (the engine's
 * own allocations are what a benchmark of it measures).
 */
final class SteadyStateReceiver {
    /** Which role the engine receives the long message in. */
    enum Side {
        /** The engine is the server: the message is a request. */
        REQUEST,
        /** The engine is the client: the message is the response to its small request. */
        RESPONSE
    }

    static final InetSocketAddress ENGINE_ADDRESS = new InetSocketAddress("10.0.0.2", 4000);
    static final InetSocketAddress PEER_ADDRESS = new InetSocketAddress("10.0.0.1", 5000);
    /** Virtual time per packet: 1 µs, about 11 Gbit/s of 1416-byte payloads. */
    static final long NS_PER_PACKET = 1_000;

    private final Side side;
    private final HomaEngine engine;
    private final int payloadBytes;
    private final int messageLengthBytes;
    /** What the sender may send without a GRANT, as its own engine would compute it. */
    private final int initialGrantedBytes;
    private final ByteBuffer packet;
    private final DataHeader dataTx = new DataHeader();
    private final byte[] smallRequest = new byte[100];
    private final Sink sink = new Sink();

    private long nowNs = 1_000_000_000L;
    /** The client rpcid of the current message (even). */
    private long rpcId;
    private int nextOffset;
    private int grantedOffset;
    private int cutoffVersion;
    private long grants;
    private long steps;
    private long messages;

    /** Reads what the engine transmits: GRANTs and CUTOFFS for the sender, the rest ignored. */
    private final class Sink implements PacketSink {
        private final GrantHeader grantRx = new GrantHeader();
        private final CutoffsHeader cutoffsRx = new CutoffsHeader();

        @Override
        public void send(InetSocketAddress peer, ByteBuffer packet, int priority) {
            int at = packet.position();
            int code = Byte.toUnsignedInt(packet.get(at + HomaHeader.TYPE_OFFSET));
            if (code == PacketType.GRANT.code()) {
                grantRx.wrap(packet, at);
                if ((grantRx.rpcId() & ~HomaHeader.FROM_SERVER_BIT) == rpcId) {
                    grantedOffset = Math.max(grantedOffset, grantRx.grantOffset());
                    grants++;
                }
            } else if (code == PacketType.CUTOFFS.code()) {
                cutoffVersion = cutoffsRx.wrap(packet, at).cutoffVersion();
            }
        }
    }

    /**
     * @param side the engine's role
     * @param unscheduledBytes the engine's {@code unscheduledBytes}; at most 8 full packets' worth
     *     plus one makes the grant increment one packet, so each DATA is answered by a GRANT
     */
    SteadyStateReceiver(Side side, int unscheduledBytes) {
        this.side = side;
        EngineConfig config = EngineConfig.builder()
                .maxMessageBytes(EngineConfig.MAX_MESSAGE_BYTES_CAP)
                .unscheduledBytes(unscheduledBytes)
                .build();
        this.engine = new HomaEngine(config, ENGINE_ADDRESS.getPort(), 2);
        this.payloadBytes = config.maxDataPayloadBytes();
        this.messageLengthBytes = EngineConfig.MAX_MESSAGE_BYTES_CAP;
        this.initialGrantedBytes = (unscheduledBytes + payloadBytes - 1) / payloadBytes * payloadBytes;
        this.packet = ByteBuffer.allocate(DataHeader.HEADER_LENGTH + payloadBytes);
        for (int i = DataHeader.HEADER_LENGTH; i < packet.capacity(); i++) {
            packet.put(i, (byte) i);
        }
        this.rpcId = 1_000_000L;
        startMessage();
    }

    HomaEngine engine() {
        return engine;
    }

    /** Delivers the next DATA packet, runs due timers, and takes what the engine transmits. */
    int step() {
        if (nextOffset + payloadBytes > messageLengthBytes) {
            endMessage();
            startMessage();
        }
        if (nextOffset + payloadBytes > grantedOffset) {
            throw new IllegalStateException("the engine stopped granting: offset " + nextOffset
                    + ", granted " + grantedOffset + " after " + steps + " packets");
        }
        dataTx.wrap(packet, 0);
        dataTx.incoming(grantedOffset).cutoffVersion(cutoffVersion).dataOffset(nextOffset).segmentOffset(nextOffset);
        packet.limit(packet.capacity()).position(0);
        engine.onPacket(nowNs, PEER_ADDRESS, packet);
        nextOffset += payloadBytes;
        steps++;
        nowNs += NS_PER_PACKET;
        if (nowNs - engine.nextTimeoutNs() >= 0) {
            engine.onTimeout(nowNs);
        }
        while (engine.pollTransmit(nowNs, sink, 16) > 0) {
            // drain
        }
        return grantedOffset;
    }

    private void startMessage() {
        long wireRpcId;
        if (side == Side.REQUEST) {
            rpcId += 2;
            wireRpcId = rpcId;
        } else {
            rpcId = engine.sendRequest(nowNs, PEER_ADDRESS, SendOptions.of(smallRequest));
            while (engine.pollTransmit(nowNs, sink, 16) > 0) {
                // the request leaves; the scripted server does not need it
            }
            wireRpcId = rpcId | HomaHeader.FROM_SERVER_BIT;
        }
        nextOffset = 0;
        grantedOffset = Math.min(messageLengthBytes, initialGrantedBytes);
        dataTx.wrap(packet, 0);
        dataTx.writeCommon(PacketType.DATA, PEER_ADDRESS.getPort(), ENGINE_ADDRESS.getPort(), wireRpcId)
                .messageLength(messageLengthBytes)
                .retransmitted(false)
                .flags(0);
        dataTx.doff(DataHeader.DOFF);
        messages++;
    }

    private void endMessage() {
        if (side == Side.REQUEST) {
            engine.abortRequest(nowNs, PEER_ADDRESS, rpcId);
        } else {
            engine.cancel(nowNs, rpcId);
        }
    }

    /** GRANTs read for the messages so far. */
    long grants() {
        return grants;
    }

    /** DATA packets delivered so far. */
    long steps() {
        return steps;
    }

    /** Messages started so far. */
    long messages() {
        return messages;
    }

    /** Payload bytes per DATA packet. */
    int payloadBytes() {
        return payloadBytes;
    }

    /** Packets of one message delivered before it is dropped and the next starts. */
    int packetsPerMessage() {
        return messageLengthBytes / payloadBytes;
    }

    /** Fails unless the engine accepted every packet and granted as the benchmark assumes. */
    void verify(double minGrantsPerPacket) {
        long malformed = engine.counters().malformedPackets();
        long duplicates = engine.counters().duplicatePackets();
        long dropped = engine.counters().droppedForBufferSpace();
        if (malformed != 0 || duplicates != 0 || dropped != 0) {
            throw new IllegalStateException("the engine rejected packets: " + malformed + " malformed, "
                    + duplicates + " duplicates, " + dropped + " dropped for buffer space in " + steps + " packets");
        }
        double ratio = (double) grants / Math.max(1, steps);
        if (ratio < minGrantsPerPacket) {
            throw new IllegalStateException("expected at least " + minGrantsPerPacket + " GRANT per DATA, saw "
                    + grants + " GRANTs for " + steps + " DATA packets");
        }
    }
}
