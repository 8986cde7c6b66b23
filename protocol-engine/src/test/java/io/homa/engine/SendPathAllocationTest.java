package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.GrantHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * The steady-state send path allocates nothing per packet: the engine sends a long request one
 * full DATA packet per step, through its pacer, to a scripted server that grants 44 packets ahead
 * of what arrived, one GRANT every 5 packets; more than one message is queued, so the FIFO share
 * (the oldest message, every 20th packet at the default fifo-grant-fraction) runs as well. Over
 * 20,000 packets after warm-up the thread allocates under 1 byte per packet (HotSpot's exact
 * per-thread counter; what remains are the compiler's deoptimizations, a few KB now and then, not
 * packets). A PriorityQueue iterator in the FIFO search cost 40 B every 20 packets, 2 B per packet.
 */
class SendPathAllocationTest {
    private static final InetSocketAddress ENGINE = new InetSocketAddress("10.0.0.2", 4000);
    private static final InetSocketAddress PEER = new InetSocketAddress("10.0.0.1", 5000);

    private final HomaEngine engine = new HomaEngine(EngineConfig.builder()
            .maxMessageBytes(EngineConfig.MAX_MESSAGE_BYTES_CAP).linkMbps(20_000).build(), ENGINE.getPort(), 2);
    private final int payloadBytes = engine.config().maxDataPayloadBytes();
    private final ByteBuffer grant = ByteBuffer.allocate(GrantHeader.HEADER_LENGTH);
    private final GrantHeader grantTx = new GrantHeader();
    private final DataHeader dataRx = new DataHeader();
    private long nowNs = 1_000_000_000L;
    private final long[] rpcIds = new long[2];
    private final int[] sentEnds = new int[2];
    private final int[] packetsOf = new int[2];
    private long dataPackets;

    private final PacketSink sink = (peer, packet, priority) -> {
        if (packet.get(packet.position() + HomaHeader.TYPE_OFFSET) == PacketType.DATA.code()) {
            dataRx.wrap(packet, packet.position());
            int which = dataRx.clientRpcId() == rpcIds[0] ? 0 : 1;
            sentEnds[which] = Math.max(sentEnds[which], dataRx.dataOffset() + packet.remaining() - DataHeader.HEADER_LENGTH);
            packetsOf[which]++;
            dataPackets++;
        }
    };

    private void steps(int count) {
        for (int i = 0; i < count; i++) {
            long before = dataPackets;
            engine.pollTransmit(nowNs, sink, 1);
            if (dataPackets != before + 1) {
                throw new AssertionError("no DATA sent at step " + i); // no AssertJ here: it allocates
            }
            nowNs += 1_000;
            if (dataPackets % 5 == 0) {
                for (int which = 0; which < 2; which++) {
                    grantTx.wrap(grant, 0);
                    grantTx.writeCommon(PacketType.GRANT, PEER.getPort(), ENGINE.getPort(),
                            rpcIds[which] | HomaHeader.FROM_SERVER_BIT);
                    grantTx.grantOffset(sentEnds[which] + 44 * payloadBytes).priority(0);
                    grant.clear();
                    engine.onPacket(nowNs, PEER, grant);
                }
            }
            if (nowNs - engine.nextTimeoutNs() >= 0) {
                engine.onTimeout(nowNs);
            }
        }
    }

    @Test
    void shouldNotAllocatePerPacketAtSteadyState() {
        // Two long requests granted as they go: the newer, shorter one is the SRPT head throughout,
        // the older one gets the FIFO share, found by searching the queue.
        rpcIds[0] = engine.sendRequest(nowNs, PEER, SendOptions.of(new byte[EngineConfig.MAX_MESSAGE_BYTES_CAP]));
        rpcIds[1] = engine.sendRequest(nowNs, PEER, SendOptions.of(new byte[48 * 1024 * 1024]));
        steps(10_000);
        com.sun.management.ThreadMXBean threads = ThreadAllocation.threadBean();
        long threadId = Thread.currentThread().getId();
        long calibrate = threads.getThreadAllocatedBytes(threadId);
        long start = threads.getThreadAllocatedBytes(threadId);
        long counterCost = start - calibrate;
        start = threads.getThreadAllocatedBytes(threadId);

        steps(20_000);

        long allocated = threads.getThreadAllocatedBytes(threadId) - start - counterCost;
        assertThat(engine.counters().malformedPackets()).isZero();
        assertThat(packetsOf[1]).as("SRPT: the shorter request sent most").isGreaterThan(25_000);
        assertThat(packetsOf[0]).as("FIFO share: the older request sent some").isGreaterThan(500);
        assertThat(allocated / 20_000.0).as("bytes allocated per packet sent").isLessThan(1.0);
    }
}
