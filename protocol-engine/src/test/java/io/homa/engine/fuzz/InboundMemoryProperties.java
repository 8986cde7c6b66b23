package io.homa.engine.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.EngineConfig;
import io.homa.engine.HomaEngine;
import io.homa.engine.HomaEvent;
import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.wire.PacketType;
import java.nio.ByteBuffer;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.statistics.Statistics;

/**
 * (3) Memory stays bounded, measured with {@link HomaEngine#inboundBufferedBytes()}: first DATA
 * packets that announce messages of {@code maxMessageBytes} cost what they carry, not what they
 * announce, and never more than the inbound budget; when the senders go silent the memory comes
 * back, and a real RPC, started before or during the flood, still completes. (3b) Messages once
 * admitted cannot be blown up to their declared length by tiny packets scattered over it.
 */
class InboundMemoryProperties {
    private static final int FLOOD_PACKETS = 10_000;
    private static final int PAYLOAD_BYTES = 1_000;
    /**
     * Allowed overshoot of the budget: the budget is checked before a new message is admitted, so
     * the last admitted packet may take up to its own bytes rounded up to the engine's allocation
     * granularity.
     */
    private static final long BUDGET_SLACK_BYTES = 64 * 1024;
    /**
     * Memory per byte received that a flood of first packets may cost. Reserving the announced
     * length up front would cost {@code maxMessageBytes / PAYLOAD_BYTES} = 1,048 here (10,000 x 1 MiB,
     * about 10 GiB, for 10 MB received).
     */
    private static final long MAX_BUFFER_PER_RECEIVED_BYTE = 64;

    @Provide
    Arbitrary<Long> budgets() {
        return Arbitraries.of(64L * 1024, 1024L * 1024, 8L * 1024 * 1024, EngineConfig.DEFAULT_MAX_INBOUND_BUFFER_BYTES);
    }

    @Provide
    Arbitrary<Integer> incomings() {
        return Arbitraries.frequencyOf(
                Tuple.of(1, Arbitraries.just(EngineConfig.DEFAULT_UNSCHEDULED_BYTES)),
                Tuple.of(1, Arbitraries.of(0, -1, Integer.MAX_VALUE, EngineConfig.DEFAULT_MAX_MESSAGE_BYTES)));
    }

    @Property(tries = 16, edgeCases = EdgeCasesMode.MIXIN)
    void shouldBufferOnlyWhatFloodedFirstPacketsCarry(
            @ForAll("budgets") long budgetBytes,
            @ForAll @IntRange(min = 1, max = 2_000) int peers,
            @ForAll("incomings") int incoming,
            @ForAll boolean randomOffsets,
            @ForAll boolean realRpcFirst,
            @ForAll @IntRange(min = 1, max = 200_000) int realRequestBytes) {
        EngineConfig config = EngineConfig.builder().maxInboundBufferBytes(budgetBytes).build();
        int maxMessageBytes = config.maxMessageBytes();
        FuzzWorld world = new FuzzWorld(config, 1_000_000_000L);
        HomaEngine server = world.b;
        byte[] realRequest = BadInputProperties.request(realRequestBytes, peers);
        long realRpcId = 0;
        if (realRpcFirst) {
            realRpcId = world.call(true, realRequest);
            world.exchange(64, FuzzWorld.Answer.RESPOND);
        }
        long bufferedBefore = server.inboundBufferedBytes();
        int serverRpcsBefore = server.activeServerRpcs();

        ByteBuffer packet = ByteBuffer.allocate(DataHeader.HEADER_LENGTH + PAYLOAD_BYTES);
        DataHeader data = new DataHeader();
        Random random = new Random(peers);
        for (int i = 0; i < FLOOD_PACKETS; i++) {
            int offset = randomOffsets ? random.nextInt(maxMessageBytes - PAYLOAD_BYTES + 1) : 0;
            data.wrap(packet, 0);
            data.writeCommon(PacketType.DATA, 1000 + i % peers, FuzzWorld.B.getPort(), 2L + 2L * i)
                    .messageLength(maxMessageBytes)
                    .incoming(incoming)
                    .dataOffset(offset)
                    .segmentOffset(offset);
            packet.clear();
            server.onPacket(world.nowNs, FuzzWorld.stranger(1 + i % peers), packet);
        }
        long dropped = server.counters().droppedForBufferSpace() + server.counters().droppedForAddressBudget();
        // A first packet beyond what its sender may send unscheduled (its stated incoming, capped
        // at our own unscheduled bytes) is inconsistent: dropped as malformed, no state.
        long malformed = server.counters().malformedPackets();
        long admitted = FLOOD_PACKETS - dropped - malformed;
        long receivedBytes = admitted * PAYLOAD_BYTES;
        long buffered = server.inboundBufferedBytes() - bufferedBefore;

        Statistics.label("budget reached").collect(dropped > 0);
        Statistics.label("memory per received byte").collect(buffered / Math.max(1, receivedBytes));
        int payload = config.maxDataPayloadBytes();
        int unscheduled = (config.unscheduledBytes() + payload - 1) / payload * payload;
        long authorisedEnd = Math.min(maxMessageBytes, Math.min(Math.max(0, incoming), unscheduled));
        Random replay = new Random(peers);
        long beyond = 0;
        for (int i = 0; i < FLOOD_PACKETS; i++) {
            int offset = randomOffsets ? replay.nextInt(maxMessageBytes - PAYLOAD_BYTES + 1) : 0;
            if (offset + PAYLOAD_BYTES > authorisedEnd) {
                beyond++;
            }
        }
        assertThat(malformed).as("flood packets beyond the unscheduled window").isEqualTo(beyond);
        assertThat(server.activeServerRpcs() - serverRpcsBefore).as("one RPC per admitted packet").isEqualTo(admitted);
        assertThat(buffered).as("memory for %d admitted first packets of %d bytes", admitted, PAYLOAD_BYTES)
                .isGreaterThanOrEqualTo(receivedBytes)
                .isLessThanOrEqualTo(MAX_BUFFER_PER_RECEIVED_BYTE * receivedBytes);
        assertThat(server.inboundBufferedBytes()).as("inbound memory against the budget of %d bytes", budgetBytes)
                .isLessThanOrEqualTo(budgetBytes + BUDGET_SLACK_BYTES);
        if ((FLOOD_PACKETS - beyond) * PAYLOAD_BYTES > budgetBytes + BUDGET_SLACK_BYTES) {
            assertThat(dropped).as("first packets dropped once the budget is full").isPositive();
        }

        // The flooders go silent: their RPCs are reclaimed, and their memory with them.
        if (!realRpcFirst) {
            realRpcId = world.call(true, realRequest);
        }
        HomaEvent outcome = world.runUntilOutcome(true, realRpcId, 20_000_000_000L);
        assertThat(outcome).as("real RPC of %d bytes", realRequestBytes).isInstanceOf(HomaEvent.ResponseReceived.class);
        assertThat(((HomaEvent.ResponseReceived) outcome).message()).isEqualTo(FuzzWorld.reversed(realRequest));
        long steps = 2 * config.peerSilenceTimeoutNs() / config.resendIntervalNs();
        for (int i = 0; i < steps && (server.activeServerRpcs() > 0 || server.inboundBufferedBytes() > 0); i++) {
            world.exchange(Integer.MAX_VALUE, FuzzWorld.Answer.RESPOND);
            world.advance(config.resendIntervalNs());
        }
        assertThat(server.inboundBufferedBytes()).as("server inbound memory once everything ended").isZero();
        assertThat(world.a.inboundBufferedBytes()).as("client inbound memory once everything ended").isZero();
    }
    @Provide
    Arbitrary<Long> smallBudgets() {
        return Arbitraries.of(64L * 1024, 1024L * 1024, 4L * 1024 * 1024);
    }

    /**
     * (3b) Messages admitted while memory was below the budget cannot then be grown, by tiny DATA
     * packets scattered over their declared length, to hold memory for bytes nobody authorised:
     * inbound memory stays within the budget plus, per admitted message, the unscheduled bytes the
     * receiver allows before granting (with allocation slack).
     */
    @Property(tries = 20, edgeCases = EdgeCasesMode.MIXIN)
    void shouldNotLetAdmittedMessagesGrowPastWhatWasAuthorised(
            @ForAll("smallBudgets") long budgetBytes,
            @ForAll @IntRange(min = 1, max = 50) int peers,
            @ForAll @IntRange(min = 1, max = 100) int bytesPerPacket,
            @ForAll("incomings") int incoming,
            @ForAll @IntRange(min = 4 * 1024, max = 64 * 1024) int strideBytes) {
        EngineConfig config = EngineConfig.builder().maxInboundBufferBytes(budgetBytes).build();
        int maxMessageBytes = config.maxMessageBytes();
        HomaEngine server = new HomaEngine(config, FuzzWorld.B.getPort(), FuzzWorld.B_FIRST_RPC_ID);
        long nowNs = 1_000_000_000L;
        ByteBuffer packet = ByteBuffer.allocate(DataHeader.HEADER_LENGTH + bytesPerPacket);
        DataHeader data = new DataHeader();

        // First packets until the budget turns new messages away.
        int admitted = 0;
        for (int i = 0; i < 5_000 && server.counters().droppedForBufferSpace() == 0; i++) {
            sendData(server, nowNs, packet, data, peers, i, maxMessageBytes, incoming, 0);
            admitted = server.activeServerRpcs();
        }
        // Then tiny packets all over the admitted messages.
        long receivedBytes = (long) admitted * bytesPerPacket;
        for (int i = 0; i < admitted; i++) {
            for (int offset = strideBytes; offset <= maxMessageBytes - bytesPerPacket; offset += strideBytes) {
                sendData(server, nowNs, packet, data, peers, i, maxMessageBytes, incoming, offset);
                receivedBytes += bytesPerPacket;
            }
        }
        long allowedPerMessage = config.unscheduledBytes() + BUDGET_SLACK_BYTES;
        Statistics.label("memory per admitted message, KiB")
                .collect(server.inboundBufferedBytes() / Math.max(1, admitted) / 1024);
        assertThat(server.activeServerRpcs()).as("admitted messages").isEqualTo(admitted);
        assertThat(server.inboundBufferedBytes())
                .as("inbound memory after %d bytes in tiny packets to %d admitted messages of %d bytes, budget %d",
                        receivedBytes, admitted, maxMessageBytes, budgetBytes)
                .isLessThanOrEqualTo(budgetBytes + BUDGET_SLACK_BYTES + admitted * allowedPerMessage);
    }

    private static void sendData(HomaEngine server, long nowNs, ByteBuffer packet, DataHeader data, int peers,
            int message, int messageLength, int incoming, int offset) {
        data.wrap(packet, 0);
        data.writeCommon(PacketType.DATA, 1000 + message % peers, FuzzWorld.B.getPort(), 2L + 2L * message)
                .messageLength(messageLength)
                .incoming(incoming)
                .dataOffset(offset)
                .segmentOffset(offset);
        packet.clear();
        server.onPacket(nowNs, FuzzWorld.stranger(1 + message % peers), packet);
    }
}
