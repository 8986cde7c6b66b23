package io.homa.reactive.internal.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.homa.engine.EngineCounters;
import io.homa.reactive.HomaSecurityConfig;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * An endpoint on four event loops ({@link LoopGroupTransport}): four sockets share the server's
 * port with SO_REUSEPORT and four more carry its calls. Each client's RPCs, and the ACKs that end
 * them, must meet the engine that holds them; the engines share one epoch and one address-token
 * key; and no two sockets seal under one epoch (nonce space).
 */
@EnabledOnOs(OS.LINUX)
class LoopGroupLoopbackTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final int LOOPS = 4;

    private final List<HomaTransport> transports = new ArrayList<>();

    @AfterEach
    void disposeTransports() {
        transports.forEach(HomaTransport::disposeNow);
    }

    private static HomaTransportConfig.Builder loopback(int loops) {
        return HomaTransportConfig.builder().bindAddress("127.0.0.1").loops(loops);
    }

    private HomaTransport bind(HomaTransportConfig config, io.homa.reactive.HomaRequestHandler handler) {
        HomaTransport transport = HomaTransport.bindNow(config, handler, TIMEOUT);
        transports.add(transport);
        return transport;
    }

    private static LoopGroupTransport group(HomaTransport transport) {
        assertThat(transport).isInstanceOf(LoopGroupTransport.class);
        return (LoopGroupTransport) transport;
    }

    @Test
    void shouldBindFourSocketsOnTheServerPortAndFourCallerPortsOnFourLoops() {
        LoopGroupTransport server = group(bind(loopback(LOOPS).build(), request -> Mono.just(request.payload().retain())));

        int port = server.localAddress().getPort();
        assertThat(server.servers()).hasSize(LOOPS)
                .allSatisfy(member -> assertThat(member.localAddress().getPort()).isEqualTo(port));
        assertThat(server.callers()).hasSize(LOOPS);
        Set<Integer> callerPorts = new HashSet<>();
        server.callers().forEach(member -> callerPorts.add(member.localAddress().getPort()));
        assertThat(callerPorts).hasSize(LOOPS).doesNotContain(port);
        Set<Object> loops = new HashSet<>();
        server.servers().forEach(member -> loops.add(member.driver().eventLoop()));
        assertThat(loops).as("distinct event loops").hasSize(LOOPS);
        assertThat(server.dataPath()).contains("4 event loops");
    }

    @Test
    void shouldKeepEveryRpcOfAClientAndItsAckOnTheEngineThatHoldsIt() {
        // The handler runs on the loop that received the request: its thread names the engine.
        Map<InetSocketAddress, Set<String>> loopsPerClient = new ConcurrentHashMap<>();
        HomaTransport server = bind(loopback(LOOPS).build(), request -> {
            loopsPerClient.computeIfAbsent(request.client(), c -> ConcurrentHashMap.newKeySet())
                    .add(Thread.currentThread().getName());
            return Mono.just(request.payload().retain());
        });
        InetSocketAddress address = server.localAddress();
        int clients = 16;
        int callsPerClient = 20;
        Random random = new Random(37);
        List<HomaTransport> callers = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            callers.add(bind(loopback(1).build(), null));
        }
        List<byte[]> requests = new ArrayList<>();
        for (int i = 0; i < callsPerClient; i++) {
            // Mostly one packet; some long enough to be granted, whose GRANTs and RESENDs must
            // reach the same engine as their first DATA.
            byte[] request = new byte[i % 5 == 0 ? 300_000 : 1 + random.nextInt(2_000)];
            random.nextBytes(request);
            requests.add(request);
        }
        List<Boolean> echoed = Flux.fromIterable(callers)
                .flatMap(client -> Flux.fromIterable(requests)
                        .concatMap(request -> client.call(address, request).map(response -> Arrays.equals(request, response))))
                .collectList()
                .block(TIMEOUT);

        assertThat(echoed).hasSize(clients * callsPerClient).containsOnly(true);
        assertThat(loopsPerClient).hasSize(clients);
        loopsPerClient.forEach((client, loops) -> assertThat(loops).as("loops that served %s", client).hasSize(1));
        Set<String> used = new HashSet<>();
        loopsPerClient.values().forEach(used::addAll);
        assertThat(used).as("loops that served some client").hasSizeGreaterThan(1);
        // The ACKs reached the engines that held the RPCs: each let its server RPCs go, none was
        // ignored, and no engine asked a client about an RPC it did not know.
        await().atMost(TIMEOUT).untilAsserted(() ->
                assertThat(TransportProbes.activeServerRpcs(server).block(TIMEOUT)).isZero());
        EngineCounters counters = server.counters().block(TIMEOUT);
        assertThat(counters.requestsDelivered()).isEqualTo((long) clients * callsPerClient);
        assertThat(counters.acksIgnored()).isZero();
        assertThat(counters.timeouts()).isZero();
        assertThat(counters.packetsSent(io.homa.engine.wire.PacketType.RPC_UNKNOWN)).isZero();
    }

    @Test
    void shouldGiveTheLoopsOneEpochAndARestartedEndpointAnother() {
        LoopGroupTransport first = group(bind(loopback(LOOPS).build(), request -> Mono.just(request.payload().retain())));
        Set<Integer> epochs = epochs(first);
        assertThat(epochs).hasSize(1);

        first.disposeNow();
        LoopGroupTransport restarted = group(bind(loopback(LOOPS).port(first.localAddress().getPort()).build(),
                request -> Mono.just(request.payload().retain())));
        Set<Integer> restartedEpochs = epochs(restarted);
        assertThat(restartedEpochs).hasSize(1).doesNotContainAnyElementsOf(epochs);
    }

    private static Set<Integer> epochs(LoopGroupTransport transport) {
        Set<Integer> epochs = new HashSet<>();
        for (NettyHomaTransport member : transport.members()) {
            epochs.add(member.driver().onLoop(() -> member.driver().engine().serverEpoch()).block(TIMEOUT));
        }
        return epochs;
    }

    @Test
    void shouldSealEachLoopUnderItsOwnEpochAndServeSealedCalls() {
        byte[] key = new byte[32];
        new Random(5).nextBytes(key);
        HomaSecurityConfig security = new HomaSecurityConfig(HomaSecurityConfig.Mode.AUTHENTICATE, Map.of(1, key), 1);
        LoopGroupTransport server = group(bind(loopback(LOOPS).security(security).build(),
                request -> Mono.just(request.payload().retain())));
        LoopGroupTransport client = group(bind(loopback(LOOPS).security(security).build(), null));

        Set<String> sealerEpochs = new HashSet<>();
        for (LoopGroupTransport transport : List.of(server, client)) {
            for (NettyHomaTransport member : transport.members()) {
                sealerEpochs.add(Arrays.toString(member.sealerEpoch()));
            }
        }
        int sockets = server.members().size() + client.members().size();
        assertThat(sockets).isEqualTo(LOOPS * 3);
        assertThat(sealerEpochs).as("one sealing epoch, so one nonce space, per socket").hasSize(sockets);

        for (int i = 0; i < 50; i++) {
            byte[] request = new byte[] {(byte) i, 1, 2};
            assertThat(client.call(server.localAddress(), Unpooled.wrappedBuffer(request))
                    .map(response -> {
                        byte[] bytes = new byte[response.readableBytes()];
                        response.readBytes(bytes);
                        response.release();
                        return bytes;
                    }).block(TIMEOUT)).containsExactly(request);
        }
        assertThat(server.unauthenticatedDatagrams() + client.unauthenticatedDatagrams()).isZero();
        assertThat(server.replayedDatagrams() + client.replayedDatagrams()).isZero();
    }

    @Test
    void shouldCallEachServerFromOneCallerSocketAndSpreadServersOverTheLoops() {
        LoopGroupTransport client = group(bind(loopback(LOOPS).build(), null));
        assertThat(client.servers()).as("a client-only endpoint serves nothing").isEmpty();
        List<Set<InetSocketAddress>> callersPerServer = new ArrayList<>();
        List<HomaTransport> servers = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            Set<InetSocketAddress> seen = ConcurrentHashMap.newKeySet();
            callersPerServer.add(seen);
            servers.add(bind(loopback(1).build(), request -> {
                seen.add(request.client());
                return Mono.just(request.payload().retain());
            }));
        }
        for (HomaTransport server : servers) {
            for (int i = 0; i < 5; i++) {
                assertThat(client.call(server.localAddress(), new byte[] {(byte) i}).block(TIMEOUT)).containsExactly(i);
            }
        }
        Set<InetSocketAddress> allCallers = new HashSet<>();
        for (Set<InetSocketAddress> seen : callersPerServer) {
            assertThat(seen).as("client addresses one server saw").hasSize(1);
            allCallers.addAll(seen);
        }
        // Twelve servers hashed onto more than one of the four caller sockets, and no other.
        Set<InetSocketAddress> callerSockets = new HashSet<>();
        client.callers().forEach(member -> callerSockets.add(member.localAddress()));
        assertThat(allCallers).hasSizeGreaterThan(1);
        assertThat(callerSockets).containsAll(allCallers);
    }
}
