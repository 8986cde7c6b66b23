package io.homa.bench.jmh;

import io.homa.engine.EngineConfig;
import io.homa.engine.HomaEngine;
import io.homa.engine.PacketSink;
import io.homa.engine.SendOptions;
import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.GrantHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * Drives one {@link HomaEngine} as the sender of a long request, one full DATA packet out per
 * {@link #step()}, with a scripted server in place of the peer engine: it reads the DATA and
 * grants {@link #WINDOW_PACKETS} packets ahead of what arrived, one GRANT every
 * {@link #GRANT_EVERY_PACKETS} packets, as a receiving engine does at the default settings.
 *
 * <p>The request is as long as the engine allows ({@link EngineConfig#MAX_MESSAGE_BYTES_CAP},
 * one byte array reused for every request); before its last packet the call is cancelled and
 * the next starts, so that the per-message cost is spread over 47,393 packets. The virtual clock
 * advances {@link #NS_PER_PACKET} per step, under the pacer's rate, and the engine's timers run
 * when due. Not thread-safe; allocation-free per step once constructed.
 */
final class SteadyStateSender {
    static final InetSocketAddress ENGINE_ADDRESS = new InetSocketAddress("10.0.0.2", 4000);
    static final InetSocketAddress PEER_ADDRESS = new InetSocketAddress("10.0.0.1", 5000);
    /** Virtual time per packet: 1 µs, about 11 Gbit/s of 1416-byte payloads (the pacer is set to 20). */
    static final long NS_PER_PACKET = 1_000;
    /** How far the scripted receiver grants ahead of what arrived, in packets. */
    static final int WINDOW_PACKETS = 44;
    /** One GRANT per this many DATA packets. */
    static final int GRANT_EVERY_PACKETS = 5;

    private final HomaEngine engine;
    private final int payloadBytes;
    private final byte[] request = new byte[EngineConfig.MAX_MESSAGE_BYTES_CAP];
    private final ByteBuffer grant = ByteBuffer.allocate(GrantHeader.HEADER_LENGTH);
    private final GrantHeader grantTx = new GrantHeader();
    private final Sink sink = new Sink();

    private long nowNs = 1_000_000_000L;
    private long rpcId;
    private long steps;
    private long messages;

    /** Reads what the engine transmits: the DATA packets' ends, the rest ignored. */
    private final class Sink implements PacketSink {
        private final DataHeader dataRx = new DataHeader();
        int dataPackets;
        int receivedEnd;

        @Override
        public void send(InetSocketAddress peer, ByteBuffer packet, int priority) {
            int at = packet.position();
            if (Byte.toUnsignedInt(packet.get(at + HomaHeader.TYPE_OFFSET)) == PacketType.DATA.code()) {
                dataRx.wrap(packet, at);
                receivedEnd = Math.max(receivedEnd, dataRx.dataOffset() + packet.remaining() - DataHeader.HEADER_LENGTH);
                dataPackets++;
            }
        }
    }

    SteadyStateSender() {
        EngineConfig config = EngineConfig.builder()
                .maxMessageBytes(EngineConfig.MAX_MESSAGE_BYTES_CAP)
                .linkMbps(20_000)
                .build();
        this.engine = new HomaEngine(config, ENGINE_ADDRESS.getPort(), 2);
        this.payloadBytes = config.maxDataPayloadBytes();
        for (int i = 0; i < request.length; i += 4096) {
            request[i] = (byte) i;
        }
        startMessage();
    }

    /** Takes one DATA packet from the engine, grants when due, and runs due timers. */
    int step() {
        if (sink.receivedEnd + payloadBytes >= request.length) {
            engine.cancel(nowNs, rpcId);
            startMessage();
        }
        int before = sink.dataPackets;
        engine.pollTransmit(nowNs, sink, 1);
        if (sink.dataPackets != before + 1) {
            throw new IllegalStateException("the engine sent no DATA at step " + steps + ", " + sink.receivedEnd
                    + " bytes sent of request " + messages);
        }
        steps++;
        nowNs += NS_PER_PACKET;
        if (sink.dataPackets % GRANT_EVERY_PACKETS == 0) {
            grantTx.wrap(grant, 0);
            grantTx.writeCommon(PacketType.GRANT, PEER_ADDRESS.getPort(), ENGINE_ADDRESS.getPort(),
                    rpcId | HomaHeader.FROM_SERVER_BIT);
            grantTx.grantOffset(Math.min(request.length, sink.receivedEnd + WINDOW_PACKETS * payloadBytes))
                    .priority(0);
            grant.limit(GrantHeader.HEADER_LENGTH).position(0);
            engine.onPacket(nowNs, PEER_ADDRESS, grant);
        }
        if (nowNs - engine.nextTimeoutNs() >= 0) {
            engine.onTimeout(nowNs);
        }
        return sink.receivedEnd;
    }

    private void startMessage() {
        rpcId = engine.sendRequest(nowNs, PEER_ADDRESS, SendOptions.of(request));
        sink.receivedEnd = 0;
        // The unscheduled packets leave before the first GRANT; a step takes one packet at a time.
        messages++;
    }

    /** DATA packets taken so far. */
    long steps() {
        return steps;
    }

    /** Requests started so far. */
    long messages() {
        return messages;
    }

    /** Packets of one request sent before it is cancelled and the next starts. */
    int packetsPerMessage() {
        return request.length / payloadBytes;
    }

    /** Fails unless the engine took every GRANT. */
    void verify() {
        long malformed = engine.counters().malformedPackets();
        if (malformed != 0) {
            throw new IllegalStateException("the engine rejected " + malformed + " GRANTs in " + steps + " packets");
        }
    }
}
