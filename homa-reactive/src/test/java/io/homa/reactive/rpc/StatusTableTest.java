package io.homa.reactive.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.engine.EngineConfig;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTimeoutException;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.internal.rpc.EnvelopeCodec;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The status table of docs/errors-and-statuses.md ("Statuses the framework produces"): one test
 * per row, named after the row's id, producing that failure over loopback UDP and checking the
 * status the caller (or the server's method) sees. {@link #shouldHaveOneTestPerRowOfTheDocsTable} keeps the table and
 * these tests in step.
 */
class StatusTableTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int MAX_RESPONSE_BYTES = 10_000;

    /** One thread and one queued task: a third concurrent blocking call finds it full. */
    private final Scheduler tinyScheduler = Schedulers.newBoundedElastic(1, 1, "status-table");
    private final AtomicReference<Throwable> requestStreamError = new AtomicReference<>();
    private final CountDownLatch requestStreamEnded = new CountDownLatch(1);
    /** Holds the blocking method until the test has seen what it waits for. */
    private final CountDownLatch releaseBlocked = new CountDownLatch(1);
    private RpcDispatcher dispatcher;
    private HomaTransportConfig config;
    private HomaTransport serverTransport;
    private HomaTransport clientTransport;
    private InetSocketAddress server;
    private HomaClient client;

    @BeforeEach
    void start() {
        dispatcher = dispatcher();
        config = HomaTransportConfig.builder()
                .bindAddress("127.0.0.1")
                .engine(EngineConfig.builder().resendIntervalNs(20_000_000L).peerSilenceTimeoutNs(1_000_000_000L).build())
                .build();
        serverTransport = HomaTransport.bindNow(config, dispatcher, WAIT);
        clientTransport = HomaTransport.bindNow(config, null, WAIT);
        server = new InetSocketAddress(InetAddress.getLoopbackAddress(), serverTransport.localAddress().getPort());
        client = clientFor(server);
    }

    private RpcDispatcher dispatcher() {
        return new RpcDispatcher(PayloadCodecs.of(new JsonPayloadCodec()), tinyScheduler)
                .maxResponseBytes(MAX_RESPONSE_BYTES)
                .register(new RpcMethod("svc", "echo", String.class, Mono::justOrEmpty))
                .register(new RpcMethod("svc", "big", Integer.class, length -> Mono.just(new byte[(Integer) length])))
                .register(new RpcMethod("svc", "slow", Long.class,
                        millis -> Mono.delay(Duration.ofMillis((Long) millis)).thenReturn("late")))
                .register(new RpcMethod("svc", "fail", null,
                        argument -> Mono.error(new IllegalStateException("broken invariant"))))
                .register(RpcMethod.unary("svc", "block", new Type[] {long.class}, args -> Mono.fromCallable(() -> {
                    releaseBlocked.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                    return "done";
                })).withBlocking(true))
                .register(RpcMethod.stream("svc", "numbers", new Type[0], args -> Flux.range(0, 10)))
                .register(RpcMethod.clientStream("svc", "count", new Type[] {TestTypes.fluxOf(Integer.class)}, args -> ((Flux<?>) args[0])
                        .doOnError(requestStreamError::set)
                        .doFinally(signal -> requestStreamEnded.countDown())
                        .count()));
    }

    private HomaClient clientFor(InetSocketAddress address) {
        return HomaClient.builder(clientTransport)
                .resolver(StaticServiceResolver.ofPeers(Map.of("svc", List.of(address), "nosuch", List.of(address))))
                .build();
    }

    @AfterEach
    void stop() {
        clientTransport.disposeNow();
        serverTransport.disposeNow();
        tinyScheduler.dispose();
    }

    private static HomaException failure(Mono<?> call) {
        AtomicReference<Throwable> error = new AtomicReference<>();
        try {
            call.block(WAIT);
        } catch (RuntimeException e) {
            error.set(e);
        }
        assertThat(error.get()).as("the call fails").isInstanceOf(HomaException.class);
        return (HomaException) error.get();
    }

    private Mono<String> echo(Object argument, CallOptions options) {
        return client.call("svc", "echo", new Object[] {argument}, String.class, options);
    }

    // ------------------------------------------------------------------ one test per row of the table

    @Test
    void requestTooLarge() {
        HomaException error = failure(echo("x".repeat(EngineConfig.DEFAULT_MAX_MESSAGE_BYTES + 1), CallOptions.defaults()));
        assertThat(error.status()).isEqualTo(HomaStatus.RESOURCE_EXHAUSTED);
        assertThat(error).hasMessageContaining("max-message-size").hasMessageContaining(
                Integer.toString(EngineConfig.DEFAULT_MAX_MESSAGE_BYTES));
    }

    @Test
    void responseTooLarge() {
        HomaException error = failure(client.call("svc", "big", 50_000, byte[].class));
        assertThat(error).isInstanceOf(HomaRemoteException.class);
        assertThat(error.status()).isEqualTo(HomaStatus.RESOURCE_EXHAUSTED);
        assertThat(error).hasMessageContaining("50001 bytes").hasMessageContaining(MAX_RESPONSE_BYTES + " bytes");
    }

    @Test
    void unknownService() {
        HomaException error = failure(client.call("nosuch", "echo", "x", String.class));
        assertThat(error.status()).isEqualTo(HomaStatus.UNIMPLEMENTED);
        assertThat(error).hasMessageContaining("unknown service nosuch");
    }

    @Test
    void unknownMethod() {
        HomaException error = failure(client.call("svc", "nosuch", "x", String.class));
        assertThat(error.status()).isEqualTo(HomaStatus.UNIMPLEMENTED);
        assertThat(error).hasMessageContaining("unknown method svc.nosuch");
    }

    @Test
    void badArguments() {
        HomaException error = failure(client.call("svc", "slow", "not a number", String.class));
        assertThat(error.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
        assertThat(error).hasMessageContaining("invalid argument for svc.slow");
    }

    @Test
    void codecNotAccepted() {
        HomaClient cbor = HomaClient.builder(clientTransport)
                .resolver(StaticServiceResolver.ofPeers(Map.of("svc", List.of(server))))
                .codecs(PayloadCodecs.of(new JsonPayloadCodec(), new CborPayloadCodec()))
                .defaultCodec("cbor")
                .build();
        HomaException error = failure(cbor.call("svc", "echo", "x", String.class));
        assertThat(error.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
        assertThat(error).hasMessageContaining("cbor");
    }

    @Test
    void handlerFailed() {
        HomaException error = failure(client.call("svc", "fail", null, String.class));
        assertThat(error.status()).isEqualTo(HomaStatus.INTERNAL);
        assertThat(((HomaRemoteException) error).remoteMessage()).isEqualTo("IllegalStateException: broken invariant");
        assertThat(((HomaRemoteException) error).remoteType()).isEqualTo(IllegalStateException.class.getName());
    }

    @Test
    void schedulerFull() {
        // The first call to run holds the one thread until a call has been refused.
        List<HomaStatus> statuses = Flux.range(0, 4)
                .flatMap(i -> client.call("svc", "block", 0L, String.class)
                        .map(result -> HomaStatus.OK)
                        .onErrorResume(HomaException.class, e -> Mono.just(e.status())))
                .doOnNext(status -> {
                    if (status == HomaStatus.RESOURCE_EXHAUSTED) {
                        releaseBlocked.countDown();
                    }
                })
                .collectList()
                .block(WAIT);
        assertThat(statuses).contains(HomaStatus.RESOURCE_EXHAUSTED, HomaStatus.OK);
    }

    @Test
    void noPeer() {
        HomaClient lost = HomaClient.builder(clientTransport).resolver(service -> Mono.empty()).build();
        HomaException error = failure(lost.call("svc", "echo", "x", String.class));
        assertThat(error.status()).isEqualTo(HomaStatus.UNAVAILABLE);
        assertThat(error).hasMessageContaining("no peer for service 'svc'");
    }

    @Test
    void peerSilent() throws IOException {
        try (DatagramSocket silent = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            HomaClient toSilence = clientFor(new InetSocketAddress(InetAddress.getLoopbackAddress(), silent.getLocalPort()));
            HomaException error = failure(toSilence.call("svc", "echo", "x", String.class));
            assertThat(error).isInstanceOf(HomaTimeoutException.class);
            assertThat(error.status()).isEqualTo(HomaStatus.UNAVAILABLE);
        }
    }

    @Test
    void serverRestarted() throws InterruptedException {
        Mono<String> inFlight = client.call("svc", "slow", 5_000L, String.class).cache();
        inFlight.subscribe(value -> {}, error -> {});
        awaitInFlight(1);
        int port = serverTransport.localAddress().getPort();
        serverTransport.disposeNow();
        serverTransport = HomaTransport.bindNow(HomaTransportConfig.builder()
                .bindAddress("127.0.0.1").port(port).engine(config.engine()).build(), dispatcher(), WAIT);

        HomaException error = failure(inFlight);
        assertThat(error.status()).isEqualTo(HomaStatus.UNAVAILABLE);
        assertThat(error).hasMessageContaining("restarted");
    }

    @Test
    void shuttingDown() {
        dispatcher.shutdown(Duration.ofSeconds(5)).subscribe();
        HomaException error = failure(echo("x", CallOptions.defaults()));
        assertThat(error.status()).isEqualTo(HomaStatus.UNAVAILABLE);
        assertThat(error).hasMessageContaining("server is shutting down");
    }

    @Test
    void overloaded() {
        dispatcher.maxCallsInService(1);
        Mono<String> held = client.call("svc", "block", 0L, String.class).cache();
        held.subscribe(value -> {}, error -> {});
        org.awaitility.Awaitility.await().atMost(WAIT).until(() -> dispatcher.callsInService() == 1);
        HomaException error = failure(echo("x", CallOptions.defaults()));
        assertThat(error.status()).isEqualTo(HomaStatus.UNAVAILABLE);
        assertThat(error).hasMessageContaining("server overloaded: not executed");
        assertThat(error.refusal()).isEqualTo(HomaException.Refusal.OVERLOADED);
        assertThat(serverTransport.refusedOverloadedRequests()).isEqualTo(1);
        releaseBlocked.countDown();
        assertThat(held.block(WAIT)).isEqualTo("done");
    }

    @Test
    void deadlineExceeded() {
        HomaException error = failure(client.call("svc", "slow", new Object[] {5_000L}, String.class,
                CallOptions.defaults().withTimeout(Duration.ofMillis(200))));
        assertThat(error.status()).isEqualTo(HomaStatus.DEADLINE_EXCEEDED);
        assertThat(error).hasMessageContaining("deadline of 200 ms exceeded calling svc.slow");
    }

    @Test
    void wrongCallShape() {
        HomaException error = failure(client.call("svc", "numbers", null, Integer.class));
        assertThat(error.status()).isEqualTo(HomaStatus.FAILED_PRECONDITION);
        assertThat(error).hasMessageContaining("call it with HomaClient.stream");
    }

    @Test
    void streamGone() {
        byte[] next = EnvelopeCodec.encodeRequest("svc", "numbers", "json", Map.of(RpcMetadata.STREAM,
                RpcMetadata.STREAM_NEXT, RpcMetadata.STREAM_ID, "12345", RpcMetadata.STREAM_REQUEST, "1"), new byte[0]);
        RpcEnvelope.Response response = EnvelopeCodec.decodeResponse(clientTransport.call(server, next).block(WAIT));
        assertThat(response.status()).isEqualTo(HomaStatus.NOT_FOUND);
        assertThat(response.message()).contains("no open stream 12345 of svc.numbers");
    }

    @Test
    void requestStreamFailed() throws InterruptedException {
        Flux<Integer> failing = Flux.range(0, 3).concatWith(Flux.error(new IllegalStateException("sensor unplugged")));
        assertThatThrownBy(() -> client.channel("svc", "count", new Object[] {failing}, Long.class,
                CallOptions.defaults()).blockLast(WAIT)).hasMessage("sensor unplugged");
        assertThat(requestStreamEnded.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(requestStreamError.get()).isInstanceOfSatisfying(HomaRemoteException.class, remote -> {
            assertThat(remote.status()).isEqualTo(HomaStatus.CANCELLED);
            assertThat(remote.remoteMessage()).contains("IllegalStateException: sensor unplugged");
        });
    }

    // ------------------------------------------------------------------ the table itself

    /** Every row of the docs' table names a test method here, and every such method is a row. */
    @Test
    void shouldHaveOneTestPerRowOfTheDocsTable() throws IOException {
        String readme = Files.readString(Path.of("..", "docs", "errors-and-statuses.md"), StandardCharsets.UTF_8);
        int start = readme.indexOf("## Statuses the framework produces");
        assertThat(start).as("docs/errors-and-statuses.md's section 'Statuses the framework produces'").isNotNegative();
        int end = readme.indexOf("\n#", start + 10);
        String section = readme.substring(start, end < 0 ? readme.length() : end);
        Matcher row = Pattern.compile("(?m)^\\| `([a-z-]+)` \\| `([A-Z_]+)`").matcher(section);
        Map<String, String> rows = new java.util.LinkedHashMap<>();
        while (row.find()) {
            rows.put(camel(row.group(1)), row.group(2));
        }
        Set<String> tests = Arrays.stream(StatusTableTest.class.getDeclaredMethods())
                .filter(method -> method.isAnnotationPresent(Test.class))
                .map(Method::getName)
                .filter(name -> !name.startsWith("should"))
                .collect(Collectors.toSet());
        assertThat(rows.keySet()).containsExactlyInAnyOrderElementsOf(tests);
        // Each row's status is the one status, besides OK, that its test names.
        String source = Files.readString(Path.of("src", "test", "java",
                StatusTableTest.class.getName().replace('.', '/') + ".java"), StandardCharsets.UTF_8);
        rows.forEach((test, status) -> assertThat(statusesNamedIn(source, test))
                .as("statuses test %s names", test).containsExactly(status));
    }

    /** The statuses other than OK that the body of test method {@code test} names, in {@code source}. */
    private static Set<String> statusesNamedIn(String source, String test) {
        int start = source.indexOf("void " + test + "(");
        assertThat(start).as("test method %s", test).isNotNegative();
        int end = source.indexOf("@Test", start);
        Matcher status = Pattern.compile("HomaStatus\\.([A-Z_]+)")
                .matcher(source.substring(start, end < 0 ? source.length() : end));
        Set<String> named = new java.util.TreeSet<>();
        while (status.find()) {
            named.add(status.group(1));
        }
        named.remove(HomaStatus.OK.name());
        return named;
    }

    private static String camel(String id) {
        StringBuilder name = new StringBuilder();
        boolean upper = false;
        for (char c : id.toCharArray()) {
            if (c == '-') {
                upper = true;
            } else {
                name.append(upper ? Character.toUpperCase(c) : c);
                upper = false;
            }
        }
        return name.toString();
    }

    private void awaitInFlight(int expected) {
        RpcDispatcherTest.awaitInFlight(dispatcher, expected, WAIT);
    }
}
