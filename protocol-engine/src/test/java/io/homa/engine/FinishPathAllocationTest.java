package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.wire.PacketType;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * Finishing and acknowledging RPCs allocates nothing per RPC (draft "At-most-once semantics"):
 * a client that owes acks for completed responses flushes them in explicit ACK packets when its
 * timer is due, and the server, receiving them, releases every RPC and remembers its rpcid as
 * finished ({@link FinishedRpcIds}, primitive, no boxing). Over 2,000 RPCs per round after
 * warm-up rounds that grow every pool and table to size, the thread's allocated bytes (HotSpot's
 * exact counter) for the flush, the ACK packets and their processing stay under 1 byte per RPC.
 */
class FinishPathAllocationTest {
    private static final int RPCS_PER_ROUND = 2_000;
    private static final int WARM_UP_ROUNDS = 4;
    /** Captured packets, copied into preallocated buffers so that the capture allocates nothing. */
    private static final int MAX_CAPTURED = RPCS_PER_ROUND;
    private final ByteBuffer[] captured = new ByteBuffer[MAX_CAPTURED];
    private int capturedCount;

    private final PacketSink capture = (peer, packet, priority) -> {
        ByteBuffer into = captured[capturedCount++];
        into.clear();
        into.put(0, packet, packet.position(), packet.remaining());
        into.limit(packet.remaining());
    };

    @Test
    void shouldNotAllocatePerRpcWhenAcksAreFlushedAndProcessed() {
        com.sun.management.ThreadMXBean threads = ThreadAllocation.threadBean();
        for (int i = 0; i < MAX_CAPTURED; i++) {
            captured[i] = ByteBuffer.allocate(EngineConfig.DEFAULT_MTU_BYTES);
        }
        EnginePair pair = new EnginePair(EngineConfig.defaults());
        for (int round = 0; round < WARM_UP_ROUNDS; round++) {
            completeRound(pair);
            flushAndAcknowledge(pair);
        }
        completeRound(pair);
        assertThat(pair.server.activeServerRpcs()).as("awaiting ACK").isEqualTo(RPCS_PER_ROUND);
        long acksBefore = pair.server.counters().packetsReceived(PacketType.ACK);
        long threadId = Thread.currentThread().getId();
        long calibrate = threads.getThreadAllocatedBytes(threadId);
        long start = threads.getThreadAllocatedBytes(threadId);
        long counterCost = start - calibrate;

        flushAndAcknowledge(pair);

        long allocated = threads.getThreadAllocatedBytes(threadId) - start - counterCost;
        assertThat(pair.server.activeServerRpcs()).as("every RPC released by the ACKs").isZero();
        assertThat(pair.server.counters().packetsReceived(PacketType.ACK) - acksBefore)
                .as("ACK packets of up to 64 rpcids").isBetween((long) RPCS_PER_ROUND / 64, (long) RPCS_PER_ROUND / 32 + 1);
        assertThat(pair.server.counters().malformedPackets()).isZero();
        assertThat(allocated).as("bytes allocated to flush and process the acks of %d RPCs", RPCS_PER_ROUND)
                .isLessThan(RPCS_PER_ROUND);
    }

    /** Runs RPCS_PER_ROUND small RPCs until the client owes every ack and the server awaits them. */
    private void completeRound(EnginePair pair) {
        for (int i = 0; i < RPCS_PER_ROUND; i++) {
            pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {(byte) i}));
        }
        pair.exchange(new java.util.Random(1)); // the first round also makes first contact
        HomaEvent event;
        while ((event = pair.server.pollEvent()) != null) {
            HomaEvent.RequestReceived request = (HomaEvent.RequestReceived) event;
            pair.server.sendResponse(pair.nowNs, request.client(), request.rpcId(), SendOptions.of(request.message()));
        }
        pair.collect();
        pair.deliverShuffled(new java.util.Random(2));
        int completed = 0;
        while ((event = pair.client.pollEvent()) != null) {
            assertThat(event).isInstanceOf(HomaEvent.ResponseReceived.class);
            completed++;
        }
        assertThat(completed).isEqualTo(RPCS_PER_ROUND);
        pair.collect(); // CUTOFFS and the like
        pair.deliverShuffled(new java.util.Random(3));
    }

    /** Advances to the client's ack-flush deadline, sends its ACKs and delivers them to the server. */
    private void flushAndAcknowledge(EnginePair pair) {
        pair.nowNs = pair.client.nextTimeoutNs();
        pair.client.onTimeout(pair.nowNs);
        capturedCount = 0;
        while (pair.client.pollTransmit(pair.nowNs, capture, 64) > 0) {
            // drain
        }
        for (int i = 0; i < capturedCount; i++) {
            pair.server.onPacket(pair.nowNs, EnginePair.CLIENT, captured[i]);
        }
    }
}
