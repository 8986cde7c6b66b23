package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.wire.PacketType;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The engine's pacer (draft "Pacing"): what may bypass it, how fast the rest leaves on virtual
 * time, and the large-MTU path.
 */
class UrgentTransmitTest {
    private static PacketSink recordLengths(List<Integer> lengths) {
        return (peer, packet, priority) -> {
            DataHeader data = new DataHeader().wrap(packet, packet.position());
            assertThat(data.typeCode()).isEqualTo(PacketType.DATA.code());
            lengths.add(data.messageLength());
        };
    }

    @Test
    void shouldLetOnlyShortMessagesAndControlPacketsBypassThePacer() {
        // A pacer so slow that its bucket, at most 10 ms (1,250 bytes at 1 Mbit/s), holds less than
        // one full packet after the short message: what bypasses it goes, then one paced packet.
        EngineConfig config = EngineConfig.builder().linkMbps(1).maxNicQueueNs(1_000).build();
        HomaEngine client = new HomaEngine(config, EnginePair.CLIENT.getPort(), 2);
        client.sendRequest(0, EnginePair.SERVER, SendOptions.of(new byte[1_048_576]));
        client.sendRequest(0, EnginePair.SERVER, SendOptions.of(new byte[100]));
        List<Integer> lengths = new ArrayList<>();
        PacketSink sink = recordLengths(lengths);

        assertThat(client.pollTransmit(0, sink, 64)).as("the short message, then one paced packet").isEqualTo(2);
        assertThat(lengths).containsExactly(100, 1_048_576);
        assertThat(client.pollTransmit(0, sink, 64)).as("the long message waits for the pacer").isZero();
        assertThat(client.hasTransmit()).isTrue();
        assertThat(client.canTransmit(0)).isFalse();
        long wakeNs = client.nextTimeoutNs();
        assertThat(wakeNs).as("the engine says when the pacer has credit again").isPositive().isLessThan(Long.MAX_VALUE);
        client.onTimeout(wakeNs);
        assertThat(client.canTransmit(wakeNs)).isTrue();
        assertThat(client.pollTransmit(wakeNs, sink, 64)).isEqualTo(1);
        assertThat(lengths).containsExactly(100, 1_048_576, 1_048_576);
    }

    @Test
    void shouldSendLongMessagesAtTheLinkRateOnVirtualTime() {
        // 1,000 Mbit/s = 125 bytes per µs; 1,500-byte packets (1,416 message bytes each).
        EngineConfig config = EngineConfig.builder().linkMbps(1_000).unscheduledBytes(4_000_000)
                .rttBytes(4_000_000).maxMessageBytes(4_000_000).build();
        HomaEngine client = new HomaEngine(config, EnginePair.CLIENT.getPort(), 2);
        long originNs = -5_000_000_000L; // any clock origin works
        long nowNs = originNs;
        client.sendRequest(nowNs, EnginePair.SERVER, SendOptions.of(new byte[4_000_000]));
        long[] wireBytes = new long[1];
        PacketSink sink = (peer, packet, priority) -> wireBytes[0] += packet.remaining() + EngineConfig.IP_UDP_HEADER_BYTES
                + Pacer.ETHERNET_FRAMING_BYTES;
        int wakeUps = 0;
        while (nowNs - originNs < 10_000_000L) { // 10 ms of virtual time
            client.pollTransmit(nowNs, sink, 64);
            long next = client.nextTimeoutNs();
            assertThat(next - nowNs).as("the pacer calls back later, not at once").isPositive();
            nowNs = next;
            client.onTimeout(nowNs);
            wakeUps++;
        }
        // 10 ms at 125 bytes/µs, plus the bucket it starts with (50 µs).
        assertThat((double) wireBytes[0]).isCloseTo(1_250_000 + 6_250, org.assertj.core.data.Percentage.withPercentage(2));
        assertThat(wakeUps).as("one wake-up per quarter bucket, not per packet").isLessThan(1_000);
    }

    @Test
    void shouldCarryOneMegabyteBothWaysInLoopbackSizedPackets() {
        EngineConfig config = EngineConfig.builder().mtuBytes(65_535).build();
        EnginePair pair = new EnginePair(config);
        Random random = new Random(7);
        byte[] request = EnginePairTest.randomBytes(random, 1_048_576);
        long rpcId = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(request));
        HomaEvent.ResponseReceived done = pair.runToResponse(random, 10_000, received -> {
            assertThat(received.message()).isEqualTo(request);
            pair.server.sendResponse(pair.nowNs, received.client(), received.rpcId(), SendOptions.of(request));
        });
        assertThat(done).as("response arrived").isNotNull();
        assertThat(done.rpcId()).isEqualTo(rpcId);
        assertThat(done.message()).isEqualTo(request);
        long packets = pair.client.counters().packetsSent(PacketType.DATA);
        assertThat(packets).as("~17 packets of up to 65,451 bytes, not 741 of 1,416")
                .isBetween(17L, 40L);
        assertThat(pair.client.counters().resendsSent()).isZero();
    }
}
