package io.homa.reactive.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.homa.engine.EngineConfig;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.internal.rpc.EnvelopeCodec;
import java.lang.reflect.Type;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.util.context.Context;

/**
 * The RPC layer's features over two real transports on loopback UDP: codecs and mixed peers,
 * several arguments, errors, deadlines, streaming with backpressure and cancellation,
 * interceptors, graceful shutdown.
 */
class HomaRpcFeaturesLoopbackTest {
    record Item(String name, int count) {}

    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final Type[] NONE = new Type[0];

    private final Scheduler scheduler = Schedulers.newBoundedElastic(8, 1000, "rpc-features");
    private final AtomicInteger countedInvocations = new AtomicInteger();
    private final AtomicInteger slowInvocations = new AtomicInteger();
    private final CountDownLatch slowCancelled = new CountDownLatch(1);
    private final AtomicLong produced = new AtomicLong();
    private final AtomicLong requestedFromProducer = new AtomicLong();
    private final CountDownLatch producerCancelled = new CountDownLatch(1);
    private final List<ServerCall> serverCalls = new CopyOnWriteArrayList<>();
    private RpcDispatcher dispatcher;
    private HomaTransport serverTransport;
    private HomaTransport clientTransport;
    private InetSocketAddress server;
    private HomaClient client;

    @BeforeEach
    void start() {
        dispatcher = new RpcDispatcher(PayloadCodecs.of(new JsonPayloadCodec(), new SmilePayloadCodec(),
                new CborPayloadCodec()), scheduler)
                .maxResponseBytes(EngineConfig.DEFAULT_MAX_MESSAGE_BYTES) // the transport's limit
                .register(RpcMethod.unary("calc", "add", new Type[] {int.class, int.class},
                        args -> Mono.just((Integer) args[0] + (Integer) args[1])))
                .register(RpcMethod.unary("calc", "describe", new Type[] {Item.class, String.class, long.class},
                        args -> Mono.just(args[0] + "/" + args[1] + "/" + args[2])))
                .register(new RpcMethod("calc", "echo", Item.class, Mono::justOrEmpty))
                .register(new RpcMethod("calc", "fail", String.class, kind -> switch ((String) kind) {
                    case "mapped" -> Mono.error(new IllegalArgumentException("negative amount"));
                    case "unmapped" -> Mono.error(new NoSuchElementException("no such order"));
                    default -> Mono.error(new HomaException(HomaStatus.PERMISSION_DENIED, "not you"));
                }))
                .register(new RpcMethod("calc", "bytes", Integer.class, length -> Mono.just(new byte[(Integer) length])))
                .register(new RpcMethod("calc", "counted", null, arg -> {
                    countedInvocations.incrementAndGet();
                    return Mono.just("ran");
                }))
                .register(new RpcMethod("calc", "slow", null, arg -> {
                    slowInvocations.incrementAndGet();
                    return Mono.never().doOnCancel(slowCancelled::countDown);
                }))
                .register(new RpcMethod("calc", "sleep", Long.class,
                        millis -> Mono.delay(Duration.ofMillis((Long) millis)).thenReturn("done")))
                .register(RpcMethod.stream("numbers", "range", new Type[] {int.class},
                        args -> Flux.range(0, (Integer) args[0])))
                .register(RpcMethod.stream("numbers", "items", new Type[] {int.class, String.class},
                        args -> Flux.range(0, (Integer) args[0]).map(i -> new Item((String) args[1], i))))
                .register(RpcMethod.stream("numbers", "counting", NONE,
                        args -> Flux.range(0, Integer.MAX_VALUE)
                                .doOnRequest(requestedFromProducer::addAndGet)
                                .doOnNext(i -> produced.incrementAndGet())
                                .doOnCancel(producerCancelled::countDown)))
                .register(RpcMethod.stream("numbers", "ticking", NONE,
                        args -> Flux.range(0, 1000).delayElements(Duration.ofMillis(20))
                                .doOnCancel(producerCancelled::countDown)))
                .register(RpcMethod.stream("numbers", "failing", NONE,
                        args -> Flux.range(0, 3).concatWith(Flux.error(new IllegalStateException("late failure")))))
                .addExceptionMapper(error -> error instanceof IllegalArgumentException
                        ? new HomaException(HomaStatus.INVALID_ARGUMENT, error.getMessage())
                        : null)
                .addInterceptor((call, next) -> {
                    serverCalls.add(call);
                    return next.apply(call);
                });
        // Tolerant timeouts: the test machine is shared and may pause threads for a while.
        HomaTransportConfig config = HomaTransportConfig.builder()
                .bindAddress("127.0.0.1")
                .engine(EngineConfig.builder().resendIntervalNs(50_000_000L).build())
                .build();
        serverTransport = HomaTransport.bindNow(config, dispatcher, TIMEOUT);
        clientTransport = HomaTransport.bindNow(config, null, TIMEOUT);
        server = new InetSocketAddress(InetAddress.getLoopbackAddress(), serverTransport.localAddress().getPort());
        client = clientBuilder().build();
    }

    private HomaClient.Builder clientBuilder() {
        return HomaClient.builder(clientTransport)
                .resolver(StaticServiceResolver.ofPeers(Map.of("calc", List.of(server), "numbers", List.of(server))))
                .codecs(PayloadCodecs.defaults());
    }

    @AfterEach
    void stop() {
        clientTransport.disposeNow();
        serverTransport.disposeNow();
        scheduler.dispose();
    }

    // ------------------------------------------------------------------ codecs and arguments

    @ParameterizedTest
    @ValueSource(strings = {"json", "smile", "cbor"})
    void shouldRoundTripSeveralArgumentsAndRecordsInEachCodec(String codec) {
        CallOptions options = CallOptions.defaults().withCodec(codec);

        Mono<Integer> sum = client.call("calc", "add", new Object[] {2, 40}, Integer.class, options);
        Mono<String> described = client.call("calc", "describe",
                new Object[] {new Item("ü", 3), "text", 1L << 40}, String.class, options);
        Mono<Item> echoed = client.call("calc", "echo", new Object[] {new Item("x", 7)}, Item.class, options);

        assertThat(sum.block(TIMEOUT)).isEqualTo(42);
        assertThat(described.block(TIMEOUT)).isEqualTo("Item[name=ü, count=3]/text/1099511627776");
        assertThat(echoed.block(TIMEOUT)).isEqualTo(new Item("x", 7));
        assertThat(serverCalls).extracting(ServerCall::service).containsOnly("calc");
    }

    @Test
    void shouldServeMixedPeersEachInItsOwnCodec() {
        RpcDispatcher jsonAndSmile =
                new RpcDispatcher(PayloadCodecs.of(new JsonPayloadCodec(), new SmilePayloadCodec()), scheduler)
                        .register(new RpcMethod("calc", "echo", Item.class, Mono::justOrEmpty));
        HomaTransport mixedServer = HomaTransport.bindNow(
                HomaTransportConfig.builder().bindAddress("127.0.0.1").build(), jsonAndSmile, TIMEOUT);
        try {
            StaticServiceResolver resolver = StaticServiceResolver.of("calc",
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), mixedServer.localAddress().getPort()));
            HomaClient smileOnly = HomaClient.builder(clientTransport).resolver(resolver)
                    .codecs(PayloadCodecs.of(new SmilePayloadCodec())).defaultCodec("smile").build();
            HomaClient jsonOnly = new HomaClient(clientTransport, resolver, new JsonPayloadCodec());
            HomaClient cborOnly = HomaClient.builder(clientTransport).resolver(resolver)
                    .codecs(PayloadCodecs.of(new CborPayloadCodec())).defaultCodec("cbor").build();

            assertThat(smileOnly.call("calc", "echo", new Item("s", 1), Item.class).block(TIMEOUT))
                    .isEqualTo(new Item("s", 1));
            assertThat(jsonOnly.call("calc", "echo", new Item("j", 2), Item.class).block(TIMEOUT))
                    .isEqualTo(new Item("j", 2));
            StepVerifier.create(cborOnly.call("calc", "echo", new Item("c", 3), Item.class))
                    .expectErrorSatisfies(e -> assertRemote(e, HomaStatus.INVALID_ARGUMENT,
                            "codec 'cbor' is not supported; supported: json, smile", HomaException.class))
                    .verify(TIMEOUT);
        } finally {
            mixedServer.disposeNow();
        }
    }

    // ------------------------------------------------------------------ errors

    @Test
    void shouldAnswerResourceExhaustedWithTheSizesForAResponseOverTheMessageLimit() {
        // A byte[] result travels raw (one tag byte): 1 MiB of it plus the envelope is over the 1 MiB limit.
        StepVerifier.create(client.call("calc", "bytes", new Object[] {1024 * 1024}, byte[].class, CallOptions.defaults()))
                .expectErrorSatisfies(e -> {
                    assertThat(((HomaRemoteException) e).status()).isEqualTo(HomaStatus.RESOURCE_EXHAUSTED);
                    assertThat(((HomaRemoteException) e).remoteMessage()).contains("calc.bytes")
                            .contains("more than the 1048576 bytes a message may have (max-message-size)");
                })
                .verify(TIMEOUT);
        assertThat(client.call("calc", "bytes", new Object[] {1_000_000}, byte[].class, CallOptions.defaults()).block(TIMEOUT))
                .as("under the limit").hasSize(1_000_000);
    }

    @Test
    void shouldAnswerUnimplementedAndInvalidArgument() {
        StepVerifier.create(client.call("calc", "divide", new Object[] {1, 2}, Integer.class, CallOptions.defaults()))
                .expectErrorSatisfies(e -> assertRemote(e, HomaStatus.UNIMPLEMENTED,
                        "unknown method calc.divide: service calc has no such method", HomaException.class))
                .verify(TIMEOUT);
        HomaClient anyService = HomaClient.builder(clientTransport).resolver(service -> Mono.just(server)).build();
        StepVerifier.create(anyService.call("nosuchservice", "foo", new Object[0], Integer.class, CallOptions.defaults()))
                .expectErrorSatisfies(e -> assertRemote(e, HomaStatus.UNIMPLEMENTED,
                        "unknown service nosuchservice (called nosuchservice.foo)", HomaException.class))
                .verify(TIMEOUT);
        StepVerifier.create(client.call("calc", "add", new Object[] {"two", 1}, Integer.class, CallOptions.defaults()))
                .expectErrorSatisfies(e -> {
                    assertThat(((HomaRemoteException) e).status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
                    assertThat(((HomaRemoteException) e).remoteMessage()).startsWith("invalid argument for calc.add");
                })
                .verify(TIMEOUT);
        StepVerifier.create(client.call("calc", "add", new Object[] {1}, Integer.class, CallOptions.defaults()))
                .expectErrorSatisfies(e -> assertThat(((HomaRemoteException) e).remoteMessage())
                        .isEqualTo("invalid argument for calc.add: expected a JSON array of 2 arguments"))
                .verify(TIMEOUT);
    }

    @Test
    void shouldCarryMappedStatusMessageAndRemoteExceptionType() {
        StepVerifier.create(client.call("calc", "fail", "mapped", String.class))
                .expectErrorSatisfies(e -> assertRemote(e, HomaStatus.INVALID_ARGUMENT, "negative amount",
                        IllegalArgumentException.class))
                .verify(TIMEOUT);
        StepVerifier.create(client.call("calc", "fail", "unmapped", String.class))
                .expectErrorSatisfies(e -> assertRemote(e, HomaStatus.INTERNAL,
                        "NoSuchElementException: no such order", NoSuchElementException.class))
                .verify(TIMEOUT);
        StepVerifier.create(client.call("calc", "fail", "homa", String.class))
                .expectErrorSatisfies(e -> {
                    assertRemote(e, HomaStatus.PERMISSION_DENIED, "not you", HomaException.class);
                    assertThat(e).hasMessage("PERMISSION_DENIED: not you");
                })
                .verify(TIMEOUT);
    }

    // ------------------------------------------------------------------ deadlines

    @Test
    void shouldNotInvokeAHandlerWhoseDeadlinePassedBeforeArrival() {
        byte[] expired = EnvelopeCodec.encodeRequest("calc", "counted", "json", Map.of(RpcMetadata.TIMEOUT_MS, "0"),
                new byte[0]);
        byte[] valid = EnvelopeCodec.encodeRequest("calc", "counted", "json", Map.of(RpcMetadata.TIMEOUT_MS, "5000"),
                new byte[0]);

        RpcEnvelope.Response expiredResponse =
                EnvelopeCodec.decodeResponse(clientTransport.call(server, expired).block(TIMEOUT));
        assertThat(countedInvocations).hasValue(0);
        RpcEnvelope.Response validResponse =
                EnvelopeCodec.decodeResponse(clientTransport.call(server, valid).block(TIMEOUT));

        assertThat(expiredResponse.status()).isEqualTo(HomaStatus.DEADLINE_EXCEEDED);
        assertThat(expiredResponse.message()).contains("calc.counted");
        assertThat(validResponse.status()).isEqualTo(HomaStatus.OK);
        assertThat(countedInvocations).hasValue(1);
    }

    @Test
    void shouldCancelARunningHandlerWhenItsDeadlinePassesAndFailTheCaller() throws InterruptedException {
        long startNs = System.nanoTime();

        StepVerifier.create(client.call("calc", "slow", new Object[0], String.class,
                        CallOptions.defaults().withTimeout(Duration.ofMillis(300))))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(HomaException.class);
                    assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.DEADLINE_EXCEEDED);
                })
                .verify(TIMEOUT);

        assertThat(System.nanoTime() - startNs).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(290));
        assertThat(slowCancelled.await(2, TimeUnit.SECONDS)).as("server handler cancelled").isTrue();
        assertThat(slowInvocations).hasValue(1);
        String sentTimeoutMs = serverCalls.get(0).metadata().get(RpcMetadata.TIMEOUT_MS);
        assertThat(Long.parseLong(sentTimeoutMs)).isBetween(1L, 300L);
    }

    @Test
    void shouldApplyTheClientsDefaultTimeout() {
        HomaClient impatient = clientBuilder().defaultTimeout(Duration.ofMillis(200)).build();

        StepVerifier.create(impatient.call("calc", "slow", null, String.class))
                .expectErrorSatisfies(e -> assertThat(((HomaException) e).status())
                        .isEqualTo(HomaStatus.DEADLINE_EXCEEDED))
                .verify(TIMEOUT);
        assertThat(impatient.call("calc", "sleep", new Object[] {10L}, String.class,
                CallOptions.defaults().withTimeout(Duration.ZERO)).block(TIMEOUT)).isEqualTo("done");
        assertThat(serverCalls.get(1).metadata()).doesNotContainKey(RpcMetadata.TIMEOUT_MS);
    }

    @Test
    void shouldReportTheServersDeadlineErrorAsTheCallersOwnOnceTheCallersDeadlineHasPassed() {
        AtomicLong clientNowNs = new AtomicLong();
        HomaClient timed = clientBuilder().clock(clientNowNs::get).build();
        // The server's timer may notice a deadline before the client's does: the error must not depend on which.
        dispatcher.register(new RpcMethod("calc", "late", Long.class, advanceNs -> {
            clientNowNs.addAndGet((Long) advanceNs);
            return Mono.error(new HomaException(HomaStatus.DEADLINE_EXCEEDED, "deadline passed downstream"));
        }));
        CallOptions fiveSeconds = CallOptions.defaults().withTimeout(Duration.ofSeconds(5));

        assertThatThrownBy(() -> timed.call("calc", "late", new Object[] {TimeUnit.SECONDS.toNanos(5)}, String.class,
                fiveSeconds).block(TIMEOUT))
                .isExactlyInstanceOf(HomaException.class)
                .hasMessage("deadline of 5000 ms exceeded calling calc.late")
                .hasCauseInstanceOf(HomaRemoteException.class)
                .satisfies(e -> assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.DEADLINE_EXCEEDED));
        // Before the caller's deadline the server's error is its own: a deadline of a call it made, say.
        assertThatThrownBy(() -> timed.call("calc", "late", new Object[] {TimeUnit.SECONDS.toNanos(4)}, String.class,
                fiveSeconds).block(TIMEOUT))
                .isInstanceOfSatisfying(HomaRemoteException.class, remote -> {
                    assertThat(remote.status()).isEqualTo(HomaStatus.DEADLINE_EXCEEDED);
                    assertThat(remote.remoteMessage()).isEqualTo("deadline passed downstream");
                });
    }

    // ------------------------------------------------------------------ streams

    @Test
    void shouldCarryTheSubscribersContextToTheResolverOfEveryStreamBatch() {
        List<String> seen = Collections.synchronizedList(new ArrayList<>());
        HomaClient routed = clientBuilder()
                .streamBatchSize(4)
                .resolver(service -> Mono.deferContextual(context -> {
                    seen.add(context.getOrDefault("route", "none"));
                    return Mono.just(server);
                }))
                .build();

        List<Integer> items = routed.stream("numbers", "range", new Object[] {10}, Integer.class, CallOptions.defaults())
                .contextWrite(Context.of("route", "shard-1"))
                .collectList()
                .block(TIMEOUT);

        assertThat(items).hasSize(10);
        assertThat(seen).isNotEmpty().containsOnly("shard-1");
    }

    @Test
    void shouldStreamAThousandItemsInOrder() {
        Flux<Integer> numbers =
                client.stream("numbers", "range", new Object[] {1000}, Integer.class, CallOptions.defaults());

        assertThat(numbers.collectList().block(TIMEOUT)).containsExactlyElementsOf(
                IntStream.range(0, 1000).boxed().toList());
        // 1,000 items in batches of at most 256: at least 4 batch RPCs, and not one per item
        assertThat(serverCalls).hasSizeBetween(4, 20);
        assertThat(serverCalls.get(0).streamPhase()).isEqualTo(RpcMetadata.STREAM_OPEN);
        assertThat(serverCalls.get(1).streamPhase()).isEqualTo(RpcMetadata.STREAM_NEXT);
        RpcDispatcherTest.awaitInFlight(dispatcher, 0);
    }

    @Test
    void shouldStreamRecordsWithSeveralArgumentsInBinaryCodecs() {
        for (String codec : List.of("smile", "cbor")) {
            Flux<Item> items = client.stream("numbers", "items", new Object[] {3, "i"}, Item.class,
                    CallOptions.defaults().withCodec(codec));

            assertThat(items.collectList().block(TIMEOUT))
                    .containsExactly(new Item("i", 0), new Item("i", 1), new Item("i", 2));
        }
    }

    @Test
    void shouldLetASlowConsumerSlowTheProducer() throws InterruptedException {
        int wanted = 10;
        CountDownLatch received = new CountDownLatch(wanted);
        BaseSubscriber<Integer> slow = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription subscription) {
                request(1);
            }

            @Override
            protected void hookOnNext(Integer value) {
                received.countDown();
                if (received.getCount() > 0) {
                    Mono.delay(Duration.ofMillis(20)).subscribe(tick -> request(1));
                }
            }
        };

        client.stream("numbers", "counting", new Object[0], Integer.class, CallOptions.defaults()).subscribe(slow);

        assertThat(received.await(10, TimeUnit.SECONDS)).isTrue();
        slow.dispose();
        assertThat(producerCancelled.await(10, TimeUnit.SECONDS)).as("server Flux cancelled").isTrue();
        // A subscription's requests and its cancel are serial: once the producer is cancelled, every
        // request it was ever given has been counted, and the range emits what is requested at once.
        // What was asked for and at most one request(1) ahead of it, fetched before it is asked:
        assertThat(produced.get()).isLessThanOrEqualTo(wanted + 1);
        assertThat(requestedFromProducer.get()).isLessThanOrEqualTo(wanted + 1);
    }

    @Test
    void shouldCancelTheServerFluxWhenTheClientCancels() throws InterruptedException {
        List<Integer> firstFive = client.stream("numbers", "counting", new Object[0], Integer.class,
                        CallOptions.defaults())
                .take(5)
                .collectList()
                .block(TIMEOUT);

        assertThat(firstFive).containsExactly(0, 1, 2, 3, 4);
        assertThat(producerCancelled.await(1, TimeUnit.SECONDS)).as("server Flux cancelled").isTrue();
        assertThat(produced.get()).isLessThanOrEqualTo(5 + HomaClient.DEFAULT_STREAM_BATCH_SIZE);
        RpcDispatcherTest.awaitInFlight(dispatcher, 0);
    }

    @Test
    void shouldDeliverItemsThenTheRemoteErrorOfAFailingStream() {
        StepVerifier.create(client.stream("numbers", "failing", new Object[0], Integer.class, CallOptions.defaults()))
                .expectNext(0, 1, 2)
                .expectErrorSatisfies(e -> assertRemote(e, HomaStatus.INTERNAL,
                        "IllegalStateException: late failure", IllegalStateException.class))
                .verify(TIMEOUT);
    }

    @Test
    void shouldEndAStreamAtItsDeadlineOnBothSides() throws InterruptedException {
        StepVerifier.create(client.stream("numbers", "ticking", new Object[0], Integer.class,
                        CallOptions.defaults().withTimeout(Duration.ofMillis(300))))
                .thenConsumeWhile(tick -> true)
                .expectErrorSatisfies(e -> assertThat(((HomaException) e).status())
                        .isEqualTo(HomaStatus.DEADLINE_EXCEEDED))
                .verify(TIMEOUT);

        assertThat(producerCancelled.await(2, TimeUnit.SECONDS)).as("server Flux cancelled").isTrue();
    }

    @Test
    void shouldAnswerUnimplementedForUnknownStreamsAndRefuseUnaryCallsOfStreams() {
        StepVerifier.create(client.stream("numbers", "nope", new Object[0], Integer.class, CallOptions.defaults()))
                .expectErrorSatisfies(e -> assertThat(((HomaRemoteException) e).status())
                        .isEqualTo(HomaStatus.UNIMPLEMENTED))
                .verify(TIMEOUT);
        StepVerifier.create(client.call("numbers", "range", 3, Integer.class))
                .expectErrorSatisfies(e -> assertThat(((HomaRemoteException) e).status())
                        .isEqualTo(HomaStatus.FAILED_PRECONDITION))
                .verify(TIMEOUT);
        // a unary method streams as 0..1 items
        assertThat(client.stream("calc", "add", new Object[] {1, 2}, Integer.class, CallOptions.defaults())
                .collectList().block(TIMEOUT)).containsExactly(3);
    }

    // ------------------------------------------------------------------ interceptors

    @Test
    void shouldRunClientInterceptorsOutermostFirstAndCarryTheirMetadataToTheServer() {
        List<String> seen = new CopyOnWriteArrayList<>();
        HomaClientInterceptor outer = new HomaClientInterceptor() {
            @Override
            public <T> Mono<T> interceptUnary(RpcCall call, Mono<T> next) {
                return Mono.defer(() -> {
                    seen.add("outer " + call.fullMethodName());
                    call.metadata().put("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
                    return next;
                });
            }

            @Override
            public <T> Flux<T> interceptStream(RpcCall call, Flux<T> next) {
                return Flux.defer(() -> {
                    seen.add("outer stream " + call.fullMethodName() + " " + call.streaming());
                    call.metadata().put("b3", "stream");
                    return next;
                });
            }
        };
        HomaClientInterceptor inner = new HomaClientInterceptor() {
            @Override
            public <T> Mono<T> interceptUnary(RpcCall call, Mono<T> next) {
                return Mono.defer(() -> {
                    seen.add("inner " + call.metadata().containsKey("traceparent"));
                    return next;
                }).doOnSuccess(value -> seen.add("inner result " + value));
            }
        };
        HomaClient intercepted = clientBuilder().interceptors(List.of(outer, inner)).build();

        Integer sum = intercepted.call("calc", "add", new Object[] {1, 2}, Integer.class,
                CallOptions.defaults().withMetadata("tenant", "blue")).block(TIMEOUT);
        List<Integer> streamed = intercepted.stream("numbers", "range", new Object[] {2}, Integer.class,
                CallOptions.defaults()).collectList().block(TIMEOUT);

        assertThat(sum).isEqualTo(3);
        assertThat(streamed).containsExactly(0, 1);
        assertThat(seen).containsExactly("outer calc.add", "inner true", "inner result 3",
                "outer stream numbers.range true");
        assertThat(serverCalls.get(0).metadata())
                .containsEntry("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
                .containsEntry("tenant", "blue");
        // A client of several loops calls each server from one of its sockets, whichever the hash of
        // the server's address picks: the peer is one of them.
        assertThat(io.homa.reactive.internal.transport.TransportProbes.localPorts(clientTransport))
                .contains(serverCalls.get(0).peer().getPort());
        assertThat(serverCalls.get(1).metadata()).containsEntry("b3", "stream");
    }

    @Test
    void shouldResolveAgainOnEachRetry() {
        AtomicInteger resolutions = new AtomicInteger();
        HomaClient retrying = clientBuilder()
                .resolver(service -> Mono.fromCallable(() -> {
                    // the first attempt goes to a port nobody listens on
                    return resolutions.incrementAndGet() == 1
                            ? new InetSocketAddress(InetAddress.getLoopbackAddress(), 9)
                            : server;
                }))
                .interceptors(List.of(new HomaClientInterceptor() {
                    @Override
                    public <T> Mono<T> interceptUnary(RpcCall call, Mono<T> next) {
                        return next.timeout(Duration.ofMillis(300)).retry(1);
                    }
                }))
                .build();

        assertThat(retrying.call("calc", "add", new Object[] {20, 22}, Integer.class, CallOptions.defaults())
                .block(TIMEOUT)).isEqualTo(42);
        assertThat(resolutions).hasValue(2);
    }

    @Test
    void shouldRejectReservedMetadataKeys() {
        assertThatThrownBy(() -> CallOptions.defaults().withMetadata(RpcMetadata.TIMEOUT_MS, "1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reserved");
        HomaClient sneaky = clientBuilder().interceptors(List.of(new HomaClientInterceptor() {
            @Override
            public <T> Mono<T> interceptUnary(RpcCall call, Mono<T> next) {
                call.metadata().put("homa-stream", "open");
                return next;
            }
        })).build();

        StepVerifier.create(sneaky.call("calc", "counted", null, String.class))
                .expectErrorSatisfies(e -> assertThat(((HomaException) e).status())
                        .isEqualTo(HomaStatus.INVALID_ARGUMENT))
                .verify(TIMEOUT);
        assertThat(countedInvocations).hasValue(0);
    }

    // ------------------------------------------------------------------ shutdown

    @Test
    void shouldFinishInFlightCallsAndRefuseNewOnesWhileShuttingDown() throws InterruptedException {
        Mono<String> inFlight = client.call("calc", "sleep", 400L, String.class).cache();
        inFlight.subscribe(value -> {}, error -> {});
        await().atMost(TIMEOUT).until(() -> dispatcher.inFlight() > 0);
        assertThat(dispatcher.inFlight()).isEqualTo(1);

        Mono<Void> shutdown = dispatcher.shutdown(Duration.ofSeconds(5)).cache();
        shutdown.subscribe();

        StepVerifier.create(client.call("calc", "counted", null, String.class))
                .expectErrorSatisfies(e -> assertRemote(e, HomaStatus.UNAVAILABLE, "server is shutting down",
                        HomaException.class))
                .verify(TIMEOUT);
        assertThat(inFlight.block(TIMEOUT)).isEqualTo("done");
        StepVerifier.create(shutdown).expectComplete().verify(TIMEOUT);
        assertThat(countedInvocations).hasValue(0);
        assertThat(dispatcher.inFlight()).isZero();
    }

    @Test
    void shouldCancelWhatIsLeftWhenTheGracePeriodEnds() throws InterruptedException {
        Mono<String> stuck = client.call("calc", "slow", null, String.class).cache();
        stuck.subscribe(value -> {}, error -> {});
        await().atMost(TIMEOUT).until(() -> dispatcher.inFlight() > 0);

        StepVerifier.create(dispatcher.shutdown(Duration.ofMillis(200))).expectComplete().verify(TIMEOUT);

        StepVerifier.create(stuck)
                .expectErrorSatisfies(e -> assertRemote(e, HomaStatus.UNAVAILABLE, "server is shutting down",
                        HomaException.class))
                .verify(TIMEOUT);
        assertThat(slowCancelled.await(1, TimeUnit.SECONDS)).isTrue();
    }

    private static void assertRemote(Throwable error, HomaStatus status, String message, Class<?> remoteType) {
        assertThat(error).isInstanceOf(HomaRemoteException.class);
        HomaRemoteException remote = (HomaRemoteException) error;
        assertThat(remote.status()).isEqualTo(status);
        assertThat(remote.remoteMessage()).isEqualTo(message);
        assertThat(remote.remoteType()).isEqualTo(remoteType.getName());
    }
}
