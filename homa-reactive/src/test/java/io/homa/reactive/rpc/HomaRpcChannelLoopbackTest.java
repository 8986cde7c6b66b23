package io.homa.reactive.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.engine.EngineConfig;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import java.lang.reflect.Type;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Client streaming and bidirectional streaming (channels) over two real transports on loopback
 * UDP: 100,000 items each way with a slow consumer on each side, flow control in both directions,
 * cancellation and errors from each side, the deadline over the whole exchange.
 */
class HomaRpcChannelLoopbackTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final int ITEMS = 100_000;
    private static final int BATCH = HomaClient.DEFAULT_STREAM_BATCH_SIZE;
    /** What the server's methods ask of their request stream at once. */
    private static final int SERVER_PREFETCH = 64;
    private static final Type INTEGERS = TestTypes.fluxOf(Integer.class);
    private static final Type STRINGS = TestTypes.fluxOf(String.class);

    private final Scheduler scheduler = Schedulers.newBoundedElastic(8, 1000, "rpc-channel");
    private final Scheduler slowServer = Schedulers.newSingle("slow-server-consumer");
    private final Scheduler slowClient = Schedulers.newSingle("slow-client-consumer");

    /** Items the server's method asked of its request stream (before its own buffer). */
    private final AtomicLong serverRequested = new AtomicLong();
    /** Results the server's method produced. */
    private final AtomicLong serverProduced = new AtomicLong();
    private final AtomicReference<Throwable> serverSawError = new AtomicReference<>();
    private final CountDownLatch serverInputEnded = new CountDownLatch(1);
    private final CountDownLatch serverResultCancelled = new CountDownLatch(1);

    private RpcDispatcher dispatcher;
    private HomaTransport serverTransport;
    private HomaTransport clientTransport;
    private HomaClient client;

    @SuppressWarnings("unchecked")
    private static Flux<Integer> integers(Object argument) {
        return (Flux<Integer>) argument;
    }

    /** The server's method reading its request stream slowly: a bounded buffer, a pause every 5,000 items. */
    private Flux<Integer> slowlyRead(Flux<Integer> items) {
        return items.doOnRequest(n -> serverRequested.addAndGet(n))
                .publishOn(slowServer, SERVER_PREFETCH)
                .doOnNext(i -> {
                    if (i % 5_000 == 0) {
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
                    }
                });
    }

    @BeforeEach
    void start() {
        dispatcher = new RpcDispatcher(PayloadCodecs.of(new JsonPayloadCodec()), scheduler)
                .register(RpcMethod.clientStream("channel", "sum", new Type[] {INTEGERS},
                        args -> slowlyRead(integers(args[0])).reduce(0L, Long::sum)))
                .register(RpcMethod.bidiStream("channel", "doubled", new Type[] {INTEGERS},
                        args -> slowlyRead(integers(args[0])).map(i -> 2 * i)
                                .doOnNext(i -> serverProduced.incrementAndGet())
                                .doOnCancel(serverResultCancelled::countDown)))
                .register(RpcMethod.clientStream("channel", "firstTen", new Type[] {INTEGERS},
                        args -> integers(args[0]).take(10).collectList()))
                .register(RpcMethod.bidiStream("channel", "labelled", new Type[] {String.class, STRINGS, int.class},
                        args -> ((Flux<?>) args[1]).map(s -> args[0] + ":" + s + ":" + args[2])))
                .register(RpcMethod.clientStream("channel", "watched", new Type[] {INTEGERS},
                        args -> integers(args[0])
                                .doOnError(serverSawError::set)
                                .doFinally(signal -> serverInputEnded.countDown())
                                .count()))
                .register(RpcMethod.bidiStream("channel", "failsAt50", new Type[] {INTEGERS},
                        args -> integers(args[0]).map(i -> {
                            if (i == 50) {
                                throw new HomaException(HomaStatus.FAILED_PRECONDITION, "no item 50, please");
                            }
                            return i;
                        })));
        // Tolerant timeouts: the test machine is shared and may pause threads for a while.
        HomaTransportConfig config = HomaTransportConfig.builder()
                .bindAddress("127.0.0.1")
                .engine(EngineConfig.builder().resendIntervalNs(50_000_000L).build())
                .build();
        serverTransport = HomaTransport.bindNow(config, dispatcher, Duration.ofSeconds(10));
        clientTransport = HomaTransport.bindNow(config, null, Duration.ofSeconds(10));
        InetSocketAddress server = new InetSocketAddress(InetAddress.getLoopbackAddress(),
                serverTransport.localAddress().getPort());
        client = HomaClient.builder(clientTransport)
                .resolver(StaticServiceResolver.ofPeers(Map.of("channel", List.of(server))))
                .build();
    }

    @AfterEach
    void stop() {
        clientTransport.disposeNow();
        serverTransport.disposeNow();
        scheduler.dispose();
        slowServer.dispose();
        slowClient.dispose();
    }

    @Test
    void shouldStreamClientItemsAtMostOneRequestAheadOfTheServerMethod() {
        AtomicLong emitted = new AtomicLong();
        AtomicLong mostAhead = new AtomicLong(Long.MIN_VALUE);
        Flux<Integer> source = Flux.range(0, ITEMS).doOnNext(i -> {
            long ahead = emitted.incrementAndGet() - serverRequested.get();
            mostAhead.accumulateAndGet(ahead, Math::max);
        });

        Long sum = client.channel("channel", "sum", new Object[] {source}, Long.class, CallOptions.defaults())
                .singleOrEmpty()
                .block(TIMEOUT);

        assertThat(sum).isEqualTo((long) ITEMS * (ITEMS - 1) / 2);
        assertThat(emitted.get()).isEqualTo(ITEMS);
        // The source is requested only within the credit the server granted: what the method asked
        // for and one of its requests (publishOn's 64) beyond, which it did use, so that the method
        // finds its next items at the server when it asks.
        assertThat(mostAhead.get()).isBetween(1L, (long) SERVER_PREFETCH);
        assertThat(serverRequested.get()).isLessThan(ITEMS + 1_000L);
    }

    @Test
    void shouldStreamBothWaysWithASlowConsumerOnEachSide() {
        AtomicLong emitted = new AtomicLong();
        AtomicLong sourceAhead = new AtomicLong(Long.MIN_VALUE);
        AtomicLong clientRequested = new AtomicLong();
        AtomicLong resultsAhead = new AtomicLong(Long.MIN_VALUE);
        AtomicLong received = new AtomicLong();
        AtomicLong outOfOrder = new AtomicLong();
        Flux<Integer> source = Flux.range(0, ITEMS).doOnNext(i -> {
            long ahead = emitted.incrementAndGet() - serverRequested.get();
            sourceAhead.accumulateAndGet(ahead, Math::max);
        });

        Long count = client.channel("channel", "doubled", new Object[] {source}, Integer.class, CallOptions.defaults())
                .doOnNext(i -> resultsAhead.accumulateAndGet(serverProduced.get() - clientRequested.get(), Math::max))
                .doOnRequest(n -> clientRequested.addAndGet(n))
                .publishOn(slowClient, 32)
                .doOnNext(i -> {
                    long index = received.getAndIncrement();
                    if (i != 2 * index) {
                        outOfOrder.incrementAndGet();
                    }
                    if (index % 5_000 == 0) {
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
                    }
                })
                .count()
                .block(TIMEOUT);

        assertThat(count).isEqualTo(ITEMS);
        assertThat(outOfOrder.get()).isZero();
        // Upstream: the client's source runs at most one of the method's requests ahead of it.
        assertThat(sourceAhead.get()).isLessThanOrEqualTo(SERVER_PREFETCH);
        // Downstream: the server's method produces at most one batch and one of the subscriber's
        // requests beyond what it asked for (the publishOn's 32, replenished 24 at a time).
        assertThat(resultsAhead.get()).isLessThanOrEqualTo(BATCH + 32);
    }

    @Test
    void shouldPassTheOtherArgumentsAroundTheRequestStream() {
        List<String> results = client.channel("channel", "labelled", new Object[] {"x", Flux.just("a", "b"), 7},
                        String.class, CallOptions.defaults())
                .collectList()
                .block(TIMEOUT);

        assertThat(results).containsExactly("x:a:7", "x:b:7");
    }

    @Test
    void shouldCancelTheServerMethodAndTheSourceWhenTheCallerCancels() throws InterruptedException {
        CountDownLatch sourceCancelled = new CountDownLatch(1);
        Flux<Integer> endless = Flux.range(0, Integer.MAX_VALUE).doOnCancel(sourceCancelled::countDown);

        List<Integer> first = client.channel("channel", "doubled", new Object[] {endless}, Integer.class,
                        CallOptions.defaults())
                .take(1_000)
                .collectList()
                .block(TIMEOUT);

        assertThat(first).hasSize(1_000).startsWith(0, 2, 4);
        assertThat(sourceCancelled.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(serverResultCancelled.await(10, TimeUnit.SECONDS)).isTrue();
        awaitInFlight(0);
    }

    @Test
    void shouldCancelTheSourceWhenTheServerMethodCancelsItsRequestStream() throws InterruptedException {
        CountDownLatch sourceCancelled = new CountDownLatch(1);
        AtomicLong emitted = new AtomicLong();
        Flux<Integer> endless = Flux.range(0, Integer.MAX_VALUE)
                .doOnNext(i -> emitted.incrementAndGet())
                .doOnCancel(sourceCancelled::countDown);

        List<Object> firstTen = client.<List<Object>>channel("channel", "firstTen", new Object[] {endless}, (Type) List.class,
                        CallOptions.defaults())
                .singleOrEmpty()
                .block(TIMEOUT);

        assertThat(firstTen).containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
        assertThat(sourceCancelled.await(10, TimeUnit.SECONDS)).isTrue();
        // take(10) asks for 10; the client had credit for at most one such request more.
        assertThat(emitted.get()).isLessThanOrEqualTo(20);
        awaitInFlight(0);
    }

    @Test
    void shouldTellTheServerMethodWhenTheSourceFailsAndFailTheCallWithTheSourceError() throws InterruptedException {
        HomaException sourceError = new HomaException(HomaStatus.INVALID_ARGUMENT, "item 5 is malformed");
        Flux<Integer> failing = Flux.range(0, 5).concatWith(Flux.error(sourceError));

        assertThatThrownBy(() -> client.channel("channel", "watched", new Object[] {failing}, Long.class,
                        CallOptions.defaults())
                .singleOrEmpty()
                .block(TIMEOUT))
                .isSameAs(sourceError);

        assertThat(serverInputEnded.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(serverSawError.get()).isInstanceOfSatisfying(HomaRemoteException.class, remote -> {
            assertThat(remote.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
            assertThat(remote.remoteMessage()).contains("item 5 is malformed");
            assertThat(remote.remoteType()).isEqualTo(HomaException.class.getName());
        });
        awaitInFlight(0);
    }

    @Test
    void shouldFailTheCallWithTheServerErrorAndCancelTheSource() throws InterruptedException {
        CountDownLatch sourceCancelled = new CountDownLatch(1);
        Flux<Integer> endless = Flux.range(0, Integer.MAX_VALUE).doOnCancel(sourceCancelled::countDown);
        List<Integer> received = new java.util.concurrent.CopyOnWriteArrayList<>();

        assertThatThrownBy(() -> client.channel("channel", "failsAt50", new Object[] {endless}, Integer.class,
                        CallOptions.defaults())
                .doOnNext(received::add)
                .blockLast(TIMEOUT))
                .isInstanceOfSatisfying(HomaRemoteException.class, remote -> {
                    assertThat(remote.status()).isEqualTo(HomaStatus.FAILED_PRECONDITION);
                    assertThat(remote.remoteMessage()).isEqualTo("no item 50, please");
                });

        assertThat(received).hasSize(50);
        assertThat(sourceCancelled.await(10, TimeUnit.SECONDS)).isTrue();
        awaitInFlight(0);
    }

    @Test
    void shouldBoundTheWholeExchangeByTheDeadline() throws InterruptedException {
        CountDownLatch sourceCancelled = new CountDownLatch(1);
        Flux<Integer> slow = Flux.range(0, 3).concatWith(Flux.<Integer>never()).doOnCancel(sourceCancelled::countDown);

        assertThatThrownBy(() -> client.channel("channel", "watched", new Object[] {slow}, Long.class,
                        CallOptions.defaults().withTimeout(Duration.ofMillis(500)))
                .singleOrEmpty()
                .block(TIMEOUT))
                .isInstanceOfSatisfying(HomaException.class,
                        e -> assertThat(e.status()).isEqualTo(HomaStatus.DEADLINE_EXCEEDED));

        assertThat(sourceCancelled.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(serverInputEnded.await(10, TimeUnit.SECONDS)).isTrue();
        awaitInFlight(0);
    }

    @Test
    void shouldRefuseTheWrongCallShapeWithFailedPrecondition() {
        assertThatThrownBy(() -> client.call("channel", "sum", new Object[0], Long.class, CallOptions.defaults())
                .block(TIMEOUT))
                .isInstanceOfSatisfying(HomaRemoteException.class, remote -> {
                    assertThat(remote.status()).isEqualTo(HomaStatus.FAILED_PRECONDITION);
                    assertThat(remote.remoteMessage()).contains("call it with HomaClient.channel");
                });
        assertThatThrownBy(() -> client.stream("channel", "doubled", new Object[0], Integer.class,
                        CallOptions.defaults())
                .blockLast(TIMEOUT))
                .isInstanceOfSatisfying(HomaRemoteException.class,
                        remote -> assertThat(remote.status()).isEqualTo(HomaStatus.FAILED_PRECONDITION));
        assertThatThrownBy(() -> client.channel("channel", "sum", new Object[] {1}, Long.class, CallOptions.defaults()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("needs one Publisher argument");
    }

    private void awaitInFlight(int expected) {
        RpcDispatcherTest.awaitInFlight(dispatcher, expected, Duration.ofSeconds(10));
    }
}
