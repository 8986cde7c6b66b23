package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A response that waits for the client's grants is not a dead client: one client, two servers,
 * a slow link, and a client that grants one response at a time (max-overcommit 1, no FIFO share),
 * so the second server hears nothing from the client for longer than a server's reclaim time
 * (2 x peer-silence-timeout, 200 ms with the 100 ms budget used here) and the client receives nothing for
 * longer than its silence timeout. Both RPCs must complete: the draft ("Retransmission") has no
 * RESEND, hence no timeout, for bytes not yet granted, and a server may reclaim an RPC only
 * after the client would have timed it out ("At-most-once").
 */
class GrantStarvedResponseTest {
    private static final InetSocketAddress CLIENT = new InetSocketAddress("10.0.0.1", 5000);
    private static final InetSocketAddress SERVER_A = new InetSocketAddress("10.0.0.2", 4000);
    private static final InetSocketAddress SERVER_B = new InetSocketAddress("10.0.0.3", 4000);
    private static final int RESPONSE_BYTES = 1 << 20;
    /** Packets the link carries per millisecond: a 1 MiB response takes about 250 ms. */
    private static final int PACKETS_PER_MS = 3;

    private record Packet(InetSocketAddress from, InetSocketAddress to, byte[] bytes) {}

    @Test
    void aResponseStarvedOfGrantsShouldCompleteOnceTheClientGetsToIt() {
        EngineConfig config = EngineConfig.builder().maxOvercommit(1).fifoGrantFraction(0)
                .peerSilenceTimeoutNs(EngineConfig.MIN_PEER_SILENCE_TIMEOUT_NS).build();
        Map<InetSocketAddress, HomaEngine> engines = new LinkedHashMap<>();
        engines.put(CLIENT, new HomaEngine(config, CLIENT.getPort(), 1_000));
        engines.put(SERVER_A, new HomaEngine(config, SERVER_A.getPort(), 2_000));
        engines.put(SERVER_B, new HomaEngine(config, SERVER_B.getPort(), 3_000));
        HomaEngine client = engines.get(CLIENT);
        ArrayDeque<Packet> link = new ArrayDeque<>();
        long nowNs = 1_000_000_000L;
        client.sendRequest(nowNs, SERVER_A, SendOptions.of(new byte[100]));
        client.sendRequest(nowNs, SERVER_B, SendOptions.of(new byte[100]));

        List<HomaEvent> clientEvents = new ArrayList<>();
        long longestSilenceAtBNs = 0;
        long lastHeardAtBNs = nowNs;
        for (int ms = 0; ms < 5_000 && countResponses(clientEvents) < 2 && !hasFailure(clientEvents); ms++) {
            for (Map.Entry<InetSocketAddress, HomaEngine> entry : engines.entrySet()) {
                InetSocketAddress from = entry.getKey();
                while (entry.getValue().pollTransmit(nowNs, (to, packet, priority) -> {
                    byte[] bytes = new byte[packet.remaining()];
                    packet.get(packet.position(), bytes);
                    link.add(new Packet(from, to, bytes));
                }, 64) > 0) {
                    // drain
                }
            }
            for (int i = 0; i < PACKETS_PER_MS && !link.isEmpty(); i++) {
                Packet packet = link.poll();
                if (packet.to().equals(SERVER_B)) {
                    longestSilenceAtBNs = Math.max(longestSilenceAtBNs, nowNs - lastHeardAtBNs);
                    lastHeardAtBNs = nowNs;
                }
                engines.get(packet.to()).onPacket(nowNs, packet.from(), ByteBuffer.wrap(packet.bytes()));
            }
            nowNs += 1_000_000L;
            for (HomaEngine engine : engines.values()) {
                engine.onTimeout(nowNs);
            }
            for (InetSocketAddress server : Arrays.asList(SERVER_A, SERVER_B)) {
                HomaEngine engine = engines.get(server);
                HomaEvent event;
                while ((event = engine.pollEvent()) != null) {
                    HomaEvent.RequestReceived request = (HomaEvent.RequestReceived) event;
                    engine.sendResponse(nowNs, request.client(), request.rpcId(), SendOptions.of(new byte[RESPONSE_BYTES]));
                }
            }
            HomaEvent event;
            while ((event = client.pollEvent()) != null) {
                clientEvents.add(event);
            }
        }

        assertThat(clientEvents).as("no RPC failed").noneMatch(e -> e instanceof HomaEvent.RpcFailed);
        assertThat(longestSilenceAtBNs).as("server B heard nothing from the client for longer than its reclaim time")
                .isGreaterThan(2 * config.peerSilenceTimeoutNs());
        assertThat(countResponses(clientEvents)).isEqualTo(2);
        assertThat(engines.get(SERVER_B).counters().timeouts()).isZero();
        assertThat(client.counters().timeouts()).isZero();
    }

    private static long countResponses(List<HomaEvent> events) {
        return events.stream().filter(e -> e instanceof HomaEvent.ResponseReceived).count();
    }

    private static boolean hasFailure(List<HomaEvent> events) {
        return events.stream().anyMatch(e -> e instanceof HomaEvent.RpcFailed);
    }
}
