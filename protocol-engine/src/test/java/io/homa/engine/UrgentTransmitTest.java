package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.wire.DataHeader;
import io.homa.engine.wire.PacketType;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link HomaEngine#pollUrgentTransmit}: what may bypass the pacer, and the large-MTU path. */
class UrgentTransmitTest {
    private static final int URGENT_BYTES = 1_416;

    @Test
    void shouldLetOnlyShortMessagesAndControlPacketsBypassThePacer() {
        HomaEngine client = new HomaEngine(EngineConfig.defaults(), EnginePair.CLIENT.getPort(), 2);
        client.sendRequest(0, EnginePair.SERVER, new byte[1_048_576]);
        client.sendRequest(0, EnginePair.SERVER, new byte[100]);
        List<Integer> lengths = new ArrayList<>();
        PacketSink sink = (peer, packet, priority) -> {
            DataHeader data = new DataHeader().wrap(packet, packet.position());
            assertThat(data.typeCode()).isEqualTo(PacketType.DATA.code());
            lengths.add(data.messageLength());
        };

        assertThat(client.pollUrgentTransmit(0, sink, URGENT_BYTES, 64)).isEqualTo(1);
        assertThat(lengths).containsExactly(100);
        assertThat(client.pollUrgentTransmit(0, sink, URGENT_BYTES, 64))
                .as("the long message waits for the pacer").isZero();
        assertThat(client.hasTransmit()).isTrue();
        assertThat(client.pollTransmit(0, sink, 3)).isEqualTo(3);
        assertThat(lengths).containsExactly(100, 1_048_576, 1_048_576, 1_048_576);
    }

    @Test
    void shouldCarryOneMegabyteBothWaysInLoopbackSizedPackets() {
        EngineConfig config = EngineConfig.builder().mtuBytes(65_535).build();
        EnginePair pair = new EnginePair(config);
        Random random = new Random(7);
        byte[] request = EnginePairTest.randomBytes(random, 1_048_576);
        long rpcId = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, request);
        HomaEvent.ResponseReceived done = null;
        for (int step = 0; step < 10_000 && done == null; step++) {
            pair.collect();
            pair.deliverShuffled(random);
            pair.nowNs += 1_000;
            HomaEvent event;
            while ((event = pair.server.pollEvent()) != null) {
                HomaEvent.RequestReceived received = (HomaEvent.RequestReceived) event;
                assertThat(received.message()).isEqualTo(request);
                pair.server.sendResponse(pair.nowNs, received.client(), received.rpcId(), request);
            }
            while ((event = pair.client.pollEvent()) != null) {
                done = (HomaEvent.ResponseReceived) event;
            }
        }
        assertThat(done).as("response arrived").isNotNull();
        assertThat(done.rpcId()).isEqualTo(rpcId);
        assertThat(done.message()).isEqualTo(request);
        long packets = pair.client.counters().packetsSent(PacketType.DATA);
        assertThat(packets).as("~17 packets of up to 65,451 bytes, not 741 of 1,416")
                .isBetween(17L, 40L);
        assertThat(pair.client.counters().resendsSent()).isZero();
    }
}
