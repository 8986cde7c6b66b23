package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.GrantHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The steady-state receive path allocates nothing per packet: a long message arrives one full
 * DATA packet at a time from a scripted sender that sends as soon as it is granted, and the
 * engine's answers (GRANTs) are read back. Over 10,000 packets after warm-up, the thread's
 * allocated bytes (HotSpot's exact per-thread counter) beyond the payload the engine must store
 * (the message's 16 KiB chunks, each with an array header) stay under 1 byte per packet. Timers
 * run when due, as in an event loop. Works the same interpreted or compiled: the engine must not
 * rely on escape analysis.
 */
class ReceivePathAllocationTest {
    private static final InetSocketAddress ENGINE = new InetSocketAddress("10.0.0.2", 4000);
    private static final InetSocketAddress PEER = new InetSocketAddress("10.0.0.1", 5000);
    private static final int WARM_UP_PACKETS = 5_000;
    private static final int MEASURED_PACKETS = 10_000;
    /** Keeps the calibration chunk reachable, so that no compiler can drop its allocation. */
    static volatile byte[] calibrationChunk;

    /** A scripted sender of one long message to the engine, one DATA packet per step. */
    private static final class Receiver implements PacketSink {
        final HomaEngine engine;
        final boolean engineIsServer;
        final int payloadBytes;
        final ByteBuffer packet;
        final DataHeader dataTx = new DataHeader();
        final GrantHeader grantRx = new GrantHeader();
        long nowNs = 1_000_000_000L;
        long rpcId = 1_000_000L;
        int nextOffset;
        int grantedOffset;
        long grants;

        Receiver(boolean engineIsServer, int unscheduledBytes) {
            EngineConfig config = EngineConfig.builder()
                    .maxMessageBytes(EngineConfig.MAX_MESSAGE_BYTES_CAP)
                    .unscheduledBytes(unscheduledBytes)
                    .build();
            this.engine = new HomaEngine(config, ENGINE.getPort(), 2);
            this.engineIsServer = engineIsServer;
            this.payloadBytes = config.maxDataPayloadBytes();
            this.packet = ByteBuffer.allocate(DataHeader.HEADER_LENGTH + payloadBytes);
            long wireRpcId = rpcId;
            if (!engineIsServer) {
                rpcId = engine.sendRequest(nowNs, PEER, SendOptions.of(new byte[100]));
                drain();
                wireRpcId = rpcId | HomaHeader.FROM_SERVER_BIT;
            }
            grantedOffset = (unscheduledBytes + payloadBytes - 1) / payloadBytes * payloadBytes;
            dataTx.wrap(packet, 0);
            dataTx.writeCommon(PacketType.DATA, PEER.getPort(), ENGINE.getPort(), wireRpcId)
                    .messageLength(EngineConfig.MAX_MESSAGE_BYTES_CAP);
        }

        void steps(int count) {
            for (int i = 0; i < count; i++) {
                dataTx.wrap(packet, 0);
                dataTx.incoming(grantedOffset).dataOffset(nextOffset).segmentOffset(nextOffset);
                packet.clear();
                engine.onPacket(nowNs, PEER, packet);
                nextOffset += payloadBytes;
                nowNs += 1_000;
                if (nowNs - engine.nextTimeoutNs() >= 0) {
                    engine.onTimeout(nowNs);
                }
                drain();
            }
        }

        void drain() {
            while (engine.pollTransmit(nowNs, this, 16) > 0) {
                // read in send()
            }
        }

        @Override
        public void send(InetSocketAddress peer, ByteBuffer sent, int priority) {
            grantRx.wrap(sent, sent.position());
            if (grantRx.type() == PacketType.GRANT) {
                grantedOffset = Math.max(grantedOffset, grantRx.grantOffset());
                grants++;
            }
        }
    }

    @ParameterizedTest(name = "engine as {0}, unscheduledBytes {1}")
    @CsvSource({"server, 14160", "client, 14160", "server, 60000", "client, 60000"})
    void shouldNotAllocatePerPacketAtSteadyState(String role, int unscheduledBytes) {
        com.sun.management.ThreadMXBean threads = ThreadAllocation.threadBean();
        Receiver receiver = new Receiver(role.equals("server"), unscheduledBytes);
        receiver.steps(WARM_UP_PACKETS);
        long threadId = Thread.currentThread().getId();
        long grantsBefore = receiver.grants;
        long bufferedBefore = receiver.engine.inboundBufferedBytes();
        long calibrate = threads.getThreadAllocatedBytes(threadId);
        long start = threads.getThreadAllocatedBytes(threadId);
        long counterCost = start - calibrate;
        calibrationChunk = new byte[InboundMessage.CHUNK_BYTES];
        long chunkBytes = threads.getThreadAllocatedBytes(threadId) - start - counterCost;
        start = threads.getThreadAllocatedBytes(threadId);

        receiver.steps(MEASURED_PACKETS);

        long allocated = threads.getThreadAllocatedBytes(threadId) - start - counterCost;
        long payload = receiver.engine.inboundBufferedBytes() - bufferedBefore;
        long chunks = payload / InboundMessage.CHUNK_BYTES;
        long overhead = allocated - chunks * chunkBytes;
        assertThat(receiver.engine.counters().malformedPackets()).isZero();
        assertThat(receiver.engine.counters().duplicatePackets()).isZero();
        assertThat(chunkBytes).as("a chunk's allocation").isBetween((long) InboundMessage.CHUNK_BYTES,
                InboundMessage.CHUNK_BYTES + 64L);
        assertThat(payload % InboundMessage.CHUNK_BYTES).as("whole chunks").isZero();
        assertThat(payload).as("payload stored in chunks")
                .isCloseTo((long) MEASURED_PACKETS * receiver.payloadBytes, within((long) InboundMessage.CHUNK_BYTES));
        long grants = receiver.grants - grantsBefore;
        if (unscheduledBytes == 14160) {
            assertThat(grants).as("one GRANT per DATA").isEqualTo(MEASURED_PACKETS);
        } else {
            assertThat(grants).as("GRANTs keep coming").isGreaterThan(MEASURED_PACKETS / 10);
        }
        assertThat(overhead)
                .as("bytes allocated beyond the payload over %d packets (%d allocated, %d payload in %d chunks of %d)",
                        MEASURED_PACKETS, allocated, payload, chunks, chunkBytes)
                .isLessThan(MEASURED_PACKETS);
    }
}
