package io.homa.spring.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.rpc.HomaCallContext;
import io.homa.reactive.rpc.HomaMetadata;
import io.homa.reactive.rpc.HomaResponse;
import io.homa.reactive.rpc.HomaServerInterceptor;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.ServiceResolver;
import io.homa.spring.HomaAutoConfiguration;
import io.homa.spring.HomaControllerAdvice;
import io.homa.spring.HomaExceptionHandler;
import io.homa.spring.HomaMethod;
import io.homa.spring.HomaService;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Declarative clients calling {@code @HomaService} beans over loopback UDP: server and client in
 * one context, on an ephemeral port.
 */
class HomaDeclarativeClientEndToEndTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HomaAutoConfiguration.class))
            .withPropertyValues("homa.server.port=0", "homa.server.bind-address=127.0.0.1",
                    "homa.client.services.kv.methods.slow.timeout=300ms")
            .withUserConfiguration(SelfConfiguration.class);

    @Test
    void shouldCallMonoFluxPlainVoidAndMultiArgumentMethodsWithRecords() {
        this.contextRunner.run((context) -> {
            assertThat(context).hasNotFailed();
            KvClient kv = context.getBean(KvClient.class);
            KvService service = context.getBean(KvService.class);
            kv.put(new Item("a1", 1));
            assertThat(kv.putLater(new Item("a2", 2)).block(WAIT)).isNull();
            kv.put(new Item("b1", 3));
            assertThat(kv.get("a2").block(WAIT)).isEqualTo(new Item("a2", 2));
            assertThat(kv.scan("a", 10).collectList().block(WAIT)).containsExactly(new Item("a1", 1), new Item("a2", 2));
            assertThat(kv.scan("", 2).collectList().block(WAIT)).containsExactly(new Item("a1", 1), new Item("a2", 2));
            assertThat(kv.add(20, 22)).isEqualTo(42);
            assertThat(service.lastThread).as("a plain method runs on the server scheduler").startsWith("homa-server");
            assertThat(kv.get("a1").block(WAIT)).isEqualTo(new Item("a1", 1));
            assertThat(service.lastMonoThread).as("a Mono method runs on the event loop, no hop")
                    .matches("homa-(epoll|nio).*");
            assertThat(kv.size()).isEqualTo(3L);
            assertThat(kv.getOrNull("zz").block(WAIT)).isNull();
        });
    }

    @Test
    void shouldStreamFromTheClientAndBothWaysThroughTheDeclarativeClient() {
        this.contextRunner.run((context) -> {
            KvClient kv = context.getBean(KvClient.class);
            Flux<Item> items = Flux.range(0, 1_000).map((i) -> new Item("c" + i, i));
            assertThat(kv.putAll(items).block(WAIT)).isEqualTo(1_000);
            List<Item> found = kv.lookup("c", Flux.just("7", "999", "0")).collectList().block(WAIT);
            assertThat(found).containsExactly(new Item("c7", 7), new Item("c999", 999), new Item("c0", 0));
            assertThatThrownBy(() -> kv.lookup("c", Flux.just("1", "x")).collectList().block(WAIT))
                    .isInstanceOfSatisfying(HomaRemoteException.class, (ex) -> {
                        assertThat(ex.status()).isEqualTo(HomaStatus.NOT_FOUND);
                        assertThat(ex.remoteMessage()).isEqualTo("no key 'cx'");
                    });
        });
    }

    @Test
    void shouldCarryTextAndBinaryMetadataBothWays() {
        this.contextRunner.run((context) -> {
            KvClient kv = context.getBean(KvClient.class);
            HomaMetadata request = HomaMetadata.create().put("tenant", "acme")
                    .putBinary("token-bin", new byte[] {1, 2, 3, (byte) 0xFF});
            HomaResponse<String> response = kv.whoAmI("!", request).block(WAIT);
            assertThat(response.value()).isEqualTo("acme!");
            assertThat(response.metadata().get("served-by")).isEqualTo("kv-test");
            assertThat(response.metadata().getBinary("echo-bin")).containsExactly((byte) 0xFF, 3, 2, 1);
            assertThat(response.metadata().asMap()).doesNotContainKeys("tenant", "token-bin");
            assertThat(kv.tenant(HomaMetadata.create().put("tenant", "globex")).block(WAIT)).isEqualTo("globex");
            assertThatThrownBy(kv::refuse).isInstanceOfSatisfying(HomaRemoteException.class,
                    (ex) -> {
                        assertThat(ex.status()).isEqualTo(HomaStatus.FAILED_PRECONDITION);
                        assertThat(ex.metadata()).containsEntry("retry-after-ms", "250");
                    });
        });
    }

    @Test
    void shouldFailWithDeadlineExceededWhenTheYmlTimeoutPasses() {
        this.contextRunner.run((context) -> {
            KvClient kv = context.getBean(KvClient.class);
            long startNs = System.nanoTime();
            assertThatThrownBy(() -> kv.slow(3_000).block(WAIT))
                    .isInstanceOfSatisfying(HomaException.class,
                            (ex) -> assertThat(ex.status()).isEqualTo(HomaStatus.DEADLINE_EXCEEDED));
            assertThat(Duration.ofNanos(System.nanoTime() - startNs)).isLessThan(Duration.ofMillis(2_500));
            assertThat(kv.slow(10).block(WAIT)).isEqualTo("late");
        });
    }

    @Test
    void shouldMapExceptionsThroughTheServiceHandlersFirstThenTheAdvice() {
        this.contextRunner.run((context) -> {
            KvClient kv = context.getBean(KvClient.class);
            assertThatThrownBy(() -> kv.get("nope").block(WAIT)).isInstanceOfSatisfying(HomaRemoteException.class,
                    (ex) -> {
                        assertThat(ex.status()).isEqualTo(HomaStatus.NOT_FOUND);
                        assertThat(ex.remoteMessage()).isEqualTo("no key 'nope'");
                        assertThat(ex.remoteType()).isEqualTo(NoSuchKeyException.class.getName());
                    });
            assertThatThrownBy(() -> kv.check("")).isInstanceOfSatisfying(HomaRemoteException.class, (ex) -> {
                assertThat(ex.status()).isEqualTo(HomaStatus.OUT_OF_RANGE);
                assertThat(ex.remoteType()).isEqualTo(IllegalArgumentException.class.getName());
            });
            assertThatThrownBy(() -> kv.check("x")).isInstanceOfSatisfying(HomaRemoteException.class, (ex) -> {
                assertThat(ex.status()).isEqualTo(HomaStatus.FAILED_PRECONDITION);
                assertThat(ex.remoteMessage()).isEqualTo("try later: locked x");
                assertThat(ex.remoteType()).isEqualTo(IllegalStateException.class.getName());
            });
            assertThatThrownBy(() -> kv.boom()).isInstanceOfSatisfying(HomaRemoteException.class, (ex) -> {
                assertThat(ex.status()).isEqualTo(HomaStatus.INTERNAL);
                assertThat(ex.remoteMessage()).contains("UnsupportedOperationException: boom");
                assertThat(ex.remoteType()).isEqualTo(UnsupportedOperationException.class.getName());
            });
        });
    }

    @Test
    void shouldPassEveryCallThroughTheServerInterceptorBeansInOrder() {
        ServerInterceptors.SEEN.clear();
        this.contextRunner.withUserConfiguration(ServerInterceptors.class).run((context) -> {
            assertThat(context.getBean(KvClient.class).add(1, 2)).isEqualTo(3);
            assertThat(ServerInterceptors.SEEN).containsExactly("outer kv.add", "inner kv.add");
        });
    }

    @Test
    void shouldAnswerUnknownMethodsWithUnimplemented() {
        this.contextRunner.run((context) -> {
            KvClient kv = context.getBean(KvClient.class);
            assertThatThrownBy(() -> kv.missing().block(WAIT)).isInstanceOfSatisfying(HomaRemoteException.class,
                    (ex) -> assertThat(ex.status()).isEqualTo(HomaStatus.UNIMPLEMENTED))
                    .hasMessageContaining("kv.missing");
        });
    }

    @Test
    void shouldAnswerEachClientInItsOwnCodec() {
        this.contextRunner.withPropertyValues("homa.client.services.kv.codec=smile").run((context) -> {
            KvClient kv = context.getBean(KvClient.class);
            kv.put(new Item("k", 7));
            assertThat(context.getBean(CborKvClient.class).get("k").block(WAIT)).isEqualTo(new Item("k", 7));
            assertThat(kv.get("k").block(WAIT)).isEqualTo(new Item("k", 7));
        });
        this.contextRunner.withPropertyValues("homa.server.codecs=json").run((context) -> {
            assertThatThrownBy(() -> context.getBean(CborKvClient.class).get("k").block(WAIT))
                    .isInstanceOfSatisfying(HomaRemoteException.class,
                            (ex) -> assertThat(ex.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT))
                    .hasMessageContaining("cbor");
        });
    }

    @Test
    void shouldLetAnInFlightCallFinishOnShutdownAndRefuseNewOnes() {
        ApplicationContextRunner servers = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HomaAutoConfiguration.class))
                .withPropertyValues("homa.server.port=0", "homa.server.bind-address=127.0.0.1")
                .withUserConfiguration(KvService.class);
        servers.run((server) -> {
            int port = server.getBean(HomaTransport.class).localAddress().getPort();
            RpcDispatcher dispatcher = server.getBean(RpcDispatcher.class);
            this.contextRunner.withPropertyValues("homa.server.enabled=false", "homa.client.peers.kv=127.0.0.1:" + port)
                    .withPropertyValues("homa.client.services.kv.methods.slow.timeout=10s")
                    .run((client) -> {
                        KvClient kv = client.getBean(KvClient.class);
                        CompletableFuture<String> inFlight = kv.slow(800).toFuture();
                        await().atMost(WAIT).until(() -> dispatcher.inFlight() == 1);
                        CompletableFuture<Void> closing = CompletableFuture.runAsync(server::close);
                        await().atMost(WAIT).until(dispatcher::isShuttingDown);
                        assertThatThrownBy(kv::size).isInstanceOfSatisfying(HomaRemoteException.class,
                                (ex) -> assertThat(ex.status()).isEqualTo(HomaStatus.UNAVAILABLE));
                        assertThat(inFlight.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isEqualTo("late");
                        closing.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                    });
        });
    }

    /**
     * The context of a server under load closes (as on SIGTERM): every call started before the
     * close returned ends with its result or with the shutdown UNAVAILABLE, none with a timeout.
     */
    @Test
    void shouldEndEveryCallWithItsResultOrTheShutdownUnavailableWhenALoadedServerStops() {
        ApplicationContextRunner servers = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HomaAutoConfiguration.class))
                .withPropertyValues("homa.server.port=0", "homa.server.bind-address=127.0.0.1",
                        "homa.server.shutdown-grace-period=5s")
                .withUserConfiguration(KvService.class);
        servers.run((server) -> {
            int port = server.getBean(HomaTransport.class).localAddress().getPort();
            this.contextRunner.withPropertyValues("homa.server.enabled=false", "homa.client.peers.kv=127.0.0.1:" + port,
                            "homa.protocol.peer-silence-timeout=1s")
                    .run((client) -> {
                        KvClient kv = client.getBean(KvClient.class);
                        Map<String, Integer> outcomes = new ConcurrentHashMap<>();
                        Map<String, String> examples = new ConcurrentHashMap<>();
                        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
                        java.util.concurrent.atomic.AtomicInteger outstanding = new java.util.concurrent.atomic.AtomicInteger();
                        Runnable[] next = new Runnable[1];
                        next[0] = () -> {
                            if (stop.get()) {
                                return;
                            }
                            outstanding.incrementAndGet();
                            kv.slow(1).subscribe((result) -> {
                                outcomes.merge("OK", 1, Integer::sum);
                                outstanding.decrementAndGet();
                                reactor.core.scheduler.Schedulers.parallel().schedule(next[0]);
                            }, (error) -> {
                                String outcome = outcome(error);
                                outcomes.merge(outcome, 1, Integer::sum);
                                examples.putIfAbsent(outcome, String.valueOf(error));
                                outstanding.decrementAndGet();
                                reactor.core.scheduler.Schedulers.parallel().schedule(next[0], 1, TimeUnit.MILLISECONDS);
                            });
                        };
                        for (int i = 0; i < 16; i++) {
                            next[0].run();
                        }
                        await().atMost(WAIT).until(() -> outcomes.getOrDefault("OK", 0) >= 200);
                        server.close();
                        stop.set(true);
                        await().atMost(WAIT).until(() -> outstanding.get() == 0);
                        assertThat(outcomes.keySet()).as("outcomes %s, e.g. %s", outcomes, examples)
                                .containsOnly("OK", "UNAVAILABLE (shutdown)");
                        System.out.println("Server context closed under load: outcomes " + outcomes);
                        assertThat(outcomes.getOrDefault("OK", 0)).isGreaterThanOrEqualTo(200);
                        assertThat(outcomes.getOrDefault("UNAVAILABLE (shutdown)", 0)).isPositive();
                    });
        });
    }

    private static String outcome(Throwable error) {
        if (error instanceof io.homa.reactive.HomaTimeoutException) {
            return "timeout";
        }
        if (error instanceof HomaException homa) {
            return homa.status() + (String.valueOf(homa.getMessage()).contains("shutting down") ? " (shutdown)" : "");
        }
        return error.getClass().getSimpleName();
    }

    @Test
    void shouldAbandonCallsThatOutlastTheGracePeriod() {
        ApplicationContextRunner servers = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HomaAutoConfiguration.class))
                .withPropertyValues("homa.server.port=0", "homa.server.bind-address=127.0.0.1",
                        "homa.server.shutdown-grace-period=0")
                .withUserConfiguration(KvService.class);
        servers.run((server) -> {
            int port = server.getBean(HomaTransport.class).localAddress().getPort();
            RpcDispatcher dispatcher = server.getBean(RpcDispatcher.class);
            this.contextRunner.withPropertyValues("homa.server.enabled=false", "homa.client.peers.kv=127.0.0.1:" + port)
                    .withPropertyValues("homa.client.services.kv.methods.slow.timeout=10s")
                    .run((client) -> {
                        CompletableFuture<String> inFlight = client.getBean(KvClient.class).slow(5_000).toFuture();
                        await().atMost(WAIT).until(() -> dispatcher.inFlight() == 1);
                        long startNs = System.nanoTime();
                        server.close();
                        assertThat(Duration.ofNanos(System.nanoTime() - startNs)).isLessThan(Duration.ofSeconds(3));
                        assertThatThrownBy(() -> inFlight.get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                                .hasCauseInstanceOf(HomaException.class);
                    });
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class ServerInterceptors {

        static final List<String> SEEN = new CopyOnWriteArrayList<>();

        @Bean
        @Order(2)
        HomaServerInterceptor inner() {
            return (call, next) -> {
                SEEN.add("inner " + call.fullMethodName());
                return next.apply(call);
            };
        }

        @Bean
        @Order(1)
        HomaServerInterceptor outer() {
            return (call, next) -> {
                SEEN.add("outer " + call.fullMethodName());
                return next.apply(call);
            };
        }
    }

    public record Item(String key, int value) {
    }

    static class NoSuchKeyException extends RuntimeException {

        NoSuchKeyException(String key) {
            super("no key '" + key + "'");
        }
    }

    @HomaService("kv")
    static class KvService {

        final Map<String, Item> store = new ConcurrentHashMap<>();

        volatile String lastThread = "";

        volatile String lastMonoThread = "";

        public Mono<Item> get(String key) {
            this.lastMonoThread = Thread.currentThread().getName();
            Item item = this.store.get(key);
            return (item != null) ? Mono.just(item) : Mono.error(new NoSuchKeyException(key));
        }

        public Mono<Item> find(String key) {
            return Mono.justOrEmpty(this.store.get(key));
        }

        public Flux<Item> scan(String prefix, int limit) {
            return Flux.fromStream(() -> this.store.values().stream()
                    .filter((item) -> item.key().startsWith(prefix))
                    .sorted(Comparator.comparing(Item::key)))
                    .take(limit);
        }

        public int add(int left, int right) {
            this.lastThread = Thread.currentThread().getName();
            return left + right;
        }

        public void put(Item item) {
            this.store.put(item.key(), item);
        }

        @HomaMethod(name = "size", idempotent = true)
        public long count() {
            return this.store.size();
        }

        public Mono<String> slow(long millis) {
            return Mono.delay(Duration.ofMillis(millis)).thenReturn("late");
        }

        public String check(String key) {
            if (key.isEmpty()) {
                throw new IllegalArgumentException("empty key");
            }
            throw new IllegalStateException("locked " + key);
        }

        public String boom() {
            throw new UnsupportedOperationException("boom");
        }

        /** Reads request metadata (text and binary) from its call context and sets response metadata. */
        public Mono<String> whoAmI(String suffix, HomaCallContext call) {
            byte[] token = call.requestMetadata().getBinary("token-bin");
            call.responseMetadata().put("served-by", "kv-test");
            call.responseMetadata().putBinary("echo-bin", (token != null) ? reversed(token) : new byte[0]);
            return Mono.just(call.requestMetadata().get("tenant") + suffix);
        }

        /** The same from the Reactor Context, in a plain (blocking) method's sibling: a Mono method. */
        public Mono<String> tenant() {
            return HomaCallContext.current().map((call) -> String.valueOf(call.requestMetadata().get("tenant")));
        }

        /** A plain method sets response metadata too, also on failure. */
        public String refuse(HomaCallContext call) {
            call.responseMetadata().put("retry-after-ms", "250");
            throw new IllegalStateException("busy");
        }

        private static byte[] reversed(byte[] bytes) {
            byte[] result = new byte[bytes.length];
            for (int i = 0; i < bytes.length; i++) {
                result[i] = bytes[bytes.length - 1 - i];
            }
            return result;
        }

        /** Client streaming: stores every item, answers how many. */
        public Mono<Integer> putAll(Flux<Item> items) {
            return items.doOnNext((item) -> this.store.put(item.key(), item)).count().map(Long::intValue);
        }

        /** Bidirectional streaming: each key's item, with a prefix argument beside the stream. */
        public Flux<Item> lookup(String prefix, Flux<String> keys) {
            return keys.map((key) -> {
                Item item = this.store.get(prefix + key);
                if (item == null) {
                    throw new NoSuchKeyException(prefix + key);
                }
                return item;
            });
        }

        @HomaExceptionHandler
        public HomaStatus outOfRange(IllegalArgumentException ex) {
            return HomaStatus.OUT_OF_RANGE;
        }
    }

    @HomaControllerAdvice
    static class KvAdvice {

        @HomaExceptionHandler
        public HomaStatus notFound(NoSuchKeyException ex) {
            return HomaStatus.NOT_FOUND;
        }

        @HomaExceptionHandler
        public HomaStatus invalid(IllegalArgumentException ex) {
            return HomaStatus.INVALID_ARGUMENT;
        }

        @HomaExceptionHandler
        public HomaException locked(IllegalStateException ex) {
            return new HomaException(HomaStatus.FAILED_PRECONDITION, "try later: " + ex.getMessage());
        }
    }

    @HomaExchange(service = "kv", timeout = "5s")
    interface KvClient {

        Mono<Item> get(String key);

        @HomaMethod("find")
        Mono<Item> getOrNull(String key);

        Flux<Item> scan(String prefix, int limit);

        int add(int left, int right);

        void put(Item item);

        @HomaMethod("put")
        Mono<Void> putLater(Item item);

        @HomaMethod(name = "size", idempotent = true)
        long size();

        @HomaMethod(timeout = "20s")
        Mono<String> slow(long millis);

        String check(String key);

        String boom();

        Mono<String> missing();

        Mono<Integer> putAll(Flux<Item> items);

        Mono<HomaResponse<String>> whoAmI(String suffix, HomaMetadata metadata);

        Mono<String> tenant(HomaMetadata metadata);

        HomaResponse<String> refuse();

        Flux<Item> lookup(String prefix, Flux<String> keys);
    }

    @HomaExchange(service = "kv", codec = "cbor")
    interface CborKvClient {

        Mono<Item> get(String key);
    }

    /**
     * The services, the clients, and a resolver that sends every service to this context's own
     * endpoint unless {@code homa.client.peers} names it.
     */
    @Configuration(proxyBeanMethods = false)
    @Import({KvService.class, KvAdvice.class})
    @ImportHomaClients({KvClient.class, CborKvClient.class})
    static class SelfConfiguration {

        @Bean
        ServiceResolver selfResolver(ObjectProvider<HomaTransport> transport,
                org.springframework.core.env.Environment environment) {
            return (service) -> Mono.fromSupplier(() -> {
                String peer = environment.getProperty("homa.client.peers." + service);
                if (peer != null) {
                    return new InetSocketAddress("127.0.0.1", Integer.parseInt(peer.substring(peer.indexOf(':') + 1)));
                }
                return new InetSocketAddress("127.0.0.1", transport.getObject().localAddress().getPort());
            });
        }
    }
}
