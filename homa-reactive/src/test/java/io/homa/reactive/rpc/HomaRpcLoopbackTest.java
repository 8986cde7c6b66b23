package io.homa.reactive.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.internal.rpc.EnvelopeCodec;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** HomaClient to RpcDispatcher over two real transports on loopback UDP. */
class HomaRpcLoopbackTest {
    record Put(String key, String value) {}

    record Entry(String key, String value, int version) {}

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final Scheduler scheduler = Schedulers.newBoundedElastic(4, 1000, "kv-service");
    private final Map<String, Entry> store = new ConcurrentHashMap<>();
    private HomaTransport serverTransport;
    private HomaTransport clientTransport;
    private HomaClient client;

    @BeforeEach
    void start() {
        JsonPayloadCodec codec = new JsonPayloadCodec();
        RpcDispatcher dispatcher = new RpcDispatcher(codec, scheduler)
                .register(new RpcMethod("kv", "put", Put.class, arg -> {
                    Put put = (Put) arg;
                    return Mono.just(store.merge(put.key(), new Entry(put.key(), put.value(), 1),
                            (old, fresh) -> new Entry(put.key(), put.value(), old.version() + 1)));
                }))
                .register(new RpcMethod("kv", "get", String.class, key -> {
                    Entry entry = store.get((String) key);
                    return entry == null
                            ? Mono.error(new HomaException(HomaStatus.NOT_FOUND, "no key '" + key + "'"))
                            : Mono.just(entry);
                }))
                .register(new RpcMethod("kv", "echo", byte[].class, arg -> Mono.just(arg)))
                .register(new RpcMethod("kv", "keys", null, arg -> Mono.just(List.copyOf(store.keySet()))))
                .register(new RpcMethod("kv", "crash", null, arg -> {
                    throw new IllegalStateException("disk on fire");
                }));
        HomaTransportConfig config = HomaTransportConfig.builder().bindAddress("127.0.0.1").build();
        serverTransport = HomaTransport.bindNow(config, dispatcher, TIMEOUT);
        clientTransport = HomaTransport.bindNow(config, null, TIMEOUT);
        InetSocketAddress server =
                new InetSocketAddress(InetAddress.getLoopbackAddress(), serverTransport.localAddress().getPort());
        client = new HomaClient(clientTransport, new StaticServiceResolver(Map.of("kv", server)), codec);
    }

    @AfterEach
    void stop() {
        clientTransport.disposeNow();
        serverTransport.disposeNow();
        scheduler.dispose();
    }

    @Test
    void shouldRoundTripRecordArgumentAndResultThroughJson() {
        StepVerifier.create(client.call("kv", "put", new Put("colour", "blue"), Entry.class))
                .expectNext(new Entry("colour", "blue", 1))
                .expectComplete()
                .verify(TIMEOUT);
        StepVerifier.create(client.call("kv", "put", new Put("colour", "green"), Entry.class)
                        .then(client.call("kv", "get", "colour", Entry.class)))
                .expectNext(new Entry("colour", "green", 2))
                .expectComplete()
                .verify(TIMEOUT);
    }

    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(ints = {1, EnvelopeCodec.SEPARATE_PAYLOAD_BYTES - 2, EnvelopeCodec.SEPARATE_PAYLOAD_BYTES - 1,
            EnvelopeCodec.SEPARATE_PAYLOAD_BYTES, 300_000, 1_000_000})
    void shouldEchoRawBytesWhetherTheirEnvelopeIsJoinedToThemOrSentInFront(int lengthBytes) {
        // Payloads of SEPARATE_PAYLOAD_BYTES and more go behind their envelope as a second array
        // (1 tag byte + the bytes: the threshold falls between the second and third case).
        byte[] bytes = new byte[lengthBytes];
        new Random(lengthBytes).nextBytes(bytes);
        StepVerifier.create(client.call("kv", "echo", bytes, byte[].class))
                .assertNext(echoed -> assertThat(echoed).isEqualTo(bytes))
                .expectComplete()
                .verify(TIMEOUT);
    }

    @Test
    void shouldCarryManyConcurrentCalls() {
        List<Entry> entries = Flux.range(0, 200)
                .flatMap(i -> client.call("kv", "put", new Put("k" + i, "v".repeat(i * 100)), Entry.class), 200)
                .collectList()
                .block(Duration.ofSeconds(30));

        assertThat(entries).hasSize(200).allSatisfy(e -> assertThat(e.value()).hasSize(
                Integer.parseInt(e.key().substring(1)) * 100));
        assertThat(client.call("kv", "keys", null, TestTypes.listOf(String.class))
                .map(keys -> ((List<?>) keys).size())
                .block(TIMEOUT)).isEqualTo(200);
    }

    @Test
    void shouldDeliverRemoteErrorsWithStatusAndMessage() {
        StepVerifier.create(client.call("kv", "get", "missing", Entry.class))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(HomaRemoteException.class).hasMessage("NOT_FOUND: no key 'missing'");
                    assertThat(((HomaRemoteException) e).status()).isEqualTo(HomaStatus.NOT_FOUND);
                })
                .verify(TIMEOUT);
        StepVerifier.create(client.call("kv", "crash", null, Entry.class))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(HomaRemoteException.class)
                            .hasMessage("INTERNAL: IllegalStateException: disk on fire");
                    assertThat(((HomaRemoteException) e).status()).isEqualTo(HomaStatus.INTERNAL);
                })
                .verify(TIMEOUT);
        StepVerifier.create(client.call("kv", "delete", "colour", Entry.class))
                .expectErrorSatisfies(e -> {
                    assertThat(((HomaRemoteException) e).status()).isEqualTo(HomaStatus.UNIMPLEMENTED);
                    assertThat(e).hasMessageContaining("kv.delete");
                })
                .verify(TIMEOUT);
    }

    @Test
    void shouldFailWithUnavailableForUnknownServiceWithoutSending() {
        StepVerifier.create(client.call("billing", "charge", 10, Integer.class))
                .expectErrorSatisfies(e -> {
                    assertThat(e).hasMessage("no peer for service 'billing' (configured: kv)");
                    assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.UNAVAILABLE);
                })
                .verify(TIMEOUT);
        assertThat(clientTransport.counters().block(TIMEOUT).rpcsStarted()).isZero();
    }
}
