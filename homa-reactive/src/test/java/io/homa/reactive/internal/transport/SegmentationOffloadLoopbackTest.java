package io.homa.reactive.internal.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.homa.engine.EngineConfig;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * UDP GSO and GRO between real transports over loopback, at a 1500-byte MTU and at loopback's own:
 * messages arrive whole whichever side has the offloads, and a sender with GSO sends many packets
 * per send.
 */
class SegmentationOffloadLoopbackTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final int MIB = 1024 * 1024;

    private final List<HomaTransport> transports = new ArrayList<>();

    @AfterEach
    void disposeTransports() {
        transports.forEach(HomaTransport::disposeNow);
    }

    private HomaTransport bind(boolean offload, boolean serve) {
        HomaTransportConfig config = HomaTransportConfig.builder()
                .bindAddress("127.0.0.1")
                .deviceMtu(false)
                .engine(EngineConfig.builder().mtuBytes(1_500).build())
                .segmentationOffload(offload)
                .build();
        HomaTransport transport = HomaTransport.bindNow(config,
                serve ? request -> Mono.just(request.payload().retain()) : null, TIMEOUT);
        transports.add(transport);
        return transport;
    }

    private static InetSocketAddress address(HomaTransport transport) {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), transport.localAddress().getPort());
    }

    private static boolean gsoAvailable(HomaTransport transport) {
        return transport.dataPath().contains("GSO on");
    }

    /** Echoes {@code count} messages of random lengths up to 1 MiB, 8 at a time, and checks every byte. */
    private static void echo(HomaTransport client, HomaTransport server, int count, long seed) {
        Random random = new Random(seed);
        List<byte[]> requests = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            byte[] bytes = new byte[i % 2 == 0 ? MIB : 1 + random.nextInt(MIB)];
            random.nextBytes(bytes);
            requests.add(bytes);
        }
        List<Boolean> same = Flux.fromIterable(requests)
                .flatMapSequential(request -> client.call(address(server), request).map(response -> java.util.Arrays.equals(request, response)), 8)
                .collectList()
                .block(TIMEOUT.multipliedBy(2));
        assertThat(same).hasSize(count).containsOnly(true);
    }

    @Test
    void shouldSayWhichPathIsOnAndSendManyPacketsPerSendWithGso() {
        HomaTransport server = bind(true, true);
        HomaTransport client = bind(true, false);
        assertThat(client.dataPath()).contains("MTU 1500");
        assumeTrue(TransportProbes.gsoSupported(client),
                "UDP GSO needs Linux and Netty's native epoll transport: " + client.dataPath());
        assertThat(client.dataPath()).contains("GSO on", "GRO on");

        echo(client, server, 16, 1);

        long[] clientGso = TransportProbes.gsoCounters(client).block(TIMEOUT);
        long[] serverGso = TransportProbes.gsoCounters(server).block(TIMEOUT);
        // 16 requests and 16 responses of ~0.75 MiB on average, 1,416 message bytes per packet.
        assertThat(clientGso[1]).as("packets in the client's GSO sends").isGreaterThan(4_000);
        assertThat(serverGso[1]).as("packets in the server's GSO sends").isGreaterThan(4_000);
        assertThat(clientGso[1] / (double) clientGso[0]).as("packets per GSO send").isGreaterThan(4);
    }

    @Test
    void shouldJoinABurstOfShortPacketsAtLoopbacksMtuAndReadThemWithGro() {
        HomaTransport server = HomaTransport.bindNow(HomaTransportConfig.builder().bindAddress("127.0.0.1").build(),
                request -> Mono.just(request.payload().retain()), TIMEOUT);
        transports.add(server);
        HomaTransport client = HomaTransport.bindNow(HomaTransportConfig.builder().bindAddress("127.0.0.1").build(),
                null, TIMEOUT);
        transports.add(client);
        assumeTrue(TransportProbes.gsoSupported(client),
                "UDP GSO needs Linux and Netty's native epoll transport: " + client.dataPath());
        assertThat(client.dataPath()).contains("MTU 65535", "GSO on", "GRO on");

        // Bursts of 64 concurrent 100-byte echoes: their packets (one each way per call, all of one
        // length) leave joined wherever a side flushes several at once, and arrive whole.
        int bursts = 0;
        long joined = 0;
        while (bursts < 50 && joined == 0) {
            bursts++;
            byte[] request = new byte[100];
            java.util.Arrays.fill(request, (byte) bursts);
            List<byte[]> responses = Flux.range(0, 64)
                    .flatMap(i -> client.call(address(server), request), 64)
                    .collectList()
                    .block(TIMEOUT);
            assertThat(responses).hasSize(64).allSatisfy(response -> assertThat(response).isEqualTo(request));
            joined = TransportProbes.gsoCounters(client).block(TIMEOUT)[1]
                    + TransportProbes.gsoCounters(server).block(TIMEOUT)[1];
        }
        assertThat(joined).as("packets in GSO sends after %d bursts", bursts).isGreaterThan(0);
    }

    @Test
    void shouldInteroperateWhenOnlyOneSideHasTheOffloads() {
        HomaTransport plainServer = bind(false, true);
        HomaTransport offloadClient = bind(true, false);
        assertThat(plainServer.dataPath()).contains("GSO off", "GRO off");
        echo(offloadClient, plainServer, 6, 2);

        HomaTransport offloadServer = bind(true, true);
        HomaTransport plainClient = bind(false, false);
        echo(plainClient, offloadServer, 6, 3);
        assertThat(TransportProbes.gsoCounters(plainClient).block(TIMEOUT)[0]).isZero();
    }
}
