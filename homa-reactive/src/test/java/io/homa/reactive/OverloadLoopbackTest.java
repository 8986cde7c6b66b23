package io.homa.reactive;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.EngineConfig;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.JsonPayloadCodec;
import io.homa.reactive.rpc.PayloadCodecs;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.RpcMethod;
import io.homa.reactive.rpc.StaticServiceResolver;
import io.netty.buffer.ByteBuf;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A server whose handler is full refuses new requests unexecuted, over loopback UDP: the caller
 * fails with UNAVAILABLE "server overloaded: not executed" at once, the handler never sees the
 * request, and once the handler has room again calls to the same server succeed. Outcomes are
 * counted; no test bounds how long anything takes.
 */
class OverloadLoopbackTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final List<HomaTransport> transports = new ArrayList<>();
    private final List<Scheduler> schedulers = new ArrayList<>();

    @AfterEach
    void dispose() {
        transports.forEach(HomaTransport::disposeNow);
        schedulers.forEach(Scheduler::dispose);
    }

    private HomaTransport bind(HomaRequestHandler handler) {
        // Long liveness timers: a refusal must come from the server's answer, never from silence.
        EngineConfig engine = EngineConfig.builder().peerSilenceTimeoutNs(20_000_000_000L).build();
        HomaTransport transport = HomaTransport.bindNow(
                HomaTransportConfig.builder().bindAddress("127.0.0.1").engine(engine).build(), handler, WAIT);
        transports.add(transport);
        return transport;
    }

    private static InetSocketAddress address(HomaTransport transport) {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), transport.localAddress().getPort());
    }

    private static Throwable failure(Mono<?> call) {
        try {
            call.block(WAIT);
        } catch (RuntimeException e) {
            return e;
        }
        throw new AssertionError("the call succeeded");
    }

    /** Holds every request until released; full with {@code capacity} requests held. */
    private static final class HoldingHandler implements HomaRequestHandler {
        final AtomicInteger seen = new AtomicInteger();
        final AtomicInteger inService = new AtomicInteger();
        final Sinks.Empty<Void> release = Sinks.empty();
        final CountDownLatch full;
        private final int capacity;

        HoldingHandler(int capacity) {
            this.capacity = capacity;
            this.full = new CountDownLatch(capacity);
        }

        @Override
        public Mono<ByteBuf> handle(HomaRequest request) {
            seen.incrementAndGet();
            inService.incrementAndGet();
            full.countDown();
            ByteBuf echo = request.payload().retainedSlice();
            return release.asMono()
                    .then(Mono.fromSupplier(() -> {
                        inService.decrementAndGet();
                        return echo;
                    }));
        }

        @Override
        public boolean overloaded() {
            return inService.get() >= capacity;
        }
    }

    @Test
    void shouldRefuseUnexecutedWhileTheHandlerIsFullAndServeOnceItHasRoom() throws InterruptedException {
        HoldingHandler handler = new HoldingHandler(2);
        HomaTransport server = bind(handler);
        HomaTransport client = bind(null);
        InetSocketAddress to = address(server);

        Mono<byte[]> first = client.call(to, new byte[] {1}).cache();
        Mono<byte[]> second = client.call(to, new byte[] {2}).cache();
        first.subscribe(bytes -> {}, error -> {});
        second.subscribe(bytes -> {}, error -> {});
        assertThat(handler.full.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("both requests in service").isTrue();

        Throwable refused = failure(client.call(to, new byte[] {3}));
        assertThat(refused).isInstanceOf(HomaException.class).hasMessageContaining("server overloaded: not executed");
        HomaException homa = (HomaException) refused;
        assertThat(homa.status()).isEqualTo(HomaStatus.UNAVAILABLE);
        assertThat(homa.refusal()).isEqualTo(HomaException.Refusal.OVERLOADED);
        assertThat(homa.notExecuted()).isTrue();
        assertThat(handler.seen).as("the handler never saw the refused request").hasValue(2);
        assertThat(server.refusedOverloadedRequests()).isEqualTo(1);
        assertThat(server.refusedRequests()).as("not a shutdown refusal").isZero();

        // Momentary: the client was not told to stay away, and once the handler has room the
        // calls in service are answered and new calls to the same server run.
        handler.release.tryEmitEmpty();
        assertThat(first.block(WAIT)).containsExactly(1);
        assertThat(second.block(WAIT)).containsExactly(2);
        for (int i = 0; i < 5; i++) {
            assertThat(client.call(to, new byte[] {(byte) (10 + i)}).block(WAIT)).containsExactly(10 + i);
        }
        assertThat(handler.seen).hasValue(7);
        assertThat(server.refusedOverloadedRequests()).isEqualTo(1);
    }

    @Test
    void shouldRefuseTheRpcLayersCallsBeyondMaxCallsInServiceBeforeAnyMethodRuns() throws InterruptedException {
        Scheduler threads = Schedulers.newBoundedElastic(4, 100, "overload-test");
        schedulers.add(threads);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(2);
        AtomicInteger ran = new AtomicInteger();
        RpcDispatcher dispatcher = new RpcDispatcher(PayloadCodecs.of(new JsonPayloadCodec()), threads)
                .maxCallsInService(2)
                .register(RpcMethod.unary("svc", "hold", new java.lang.reflect.Type[0], args -> Mono.fromCallable(() -> {
                    ran.incrementAndGet();
                    running.countDown();
                    release.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                    return "held";
                })).withBlocking(true))
                .register(RpcMethod.unary("svc", "transfer", new java.lang.reflect.Type[] {int.class}, args -> {
                    ran.incrementAndGet();
                    return Mono.just("moved " + args[0]);
                }));
        HomaTransport server = bind(dispatcher);
        dispatcher.clock(server.clock());
        HomaTransport clientTransport = bind(null);
        HomaClient client = HomaClient.builder(clientTransport)
                .resolver(StaticServiceResolver.ofPeers(Map.of("svc", List.of(address(server)))))
                .build();

        List<Mono<String>> held = List.of(client.call("svc", "hold", new Object[0], String.class).cache(),
                client.call("svc", "hold", new Object[0], String.class).cache());
        held.forEach(call -> call.subscribe(value -> {}, error -> {}));
        assertThat(running.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(dispatcher.callsInService()).isEqualTo(2);

        Throwable refused = failure(client.call("svc", "transfer", 5, String.class));
        assertThat(refused).isInstanceOf(HomaException.class).hasMessageContaining("server overloaded: not executed");
        assertThat(((HomaException) refused).status()).isEqualTo(HomaStatus.UNAVAILABLE);
        assertThat(((HomaException) refused).refusal()).isEqualTo(HomaException.Refusal.OVERLOADED);
        assertThat(ran).as("only the two held calls ran").hasValue(2);
        assertThat(server.refusedOverloadedRequests()).isEqualTo(1);

        release.countDown();
        for (Mono<String> call : held) {
            assertThat(call.block(WAIT)).isEqualTo("held");
        }
        assertThat(client.call("svc", "transfer", 6, String.class).block(WAIT)).isEqualTo("moved 6");
        assertThat(ran).hasValue(3);
    }

    @Test
    void shouldRunAsManyCallsOfABurstAsTheHandlerHasRoomForAndRefuseTheRest() throws InterruptedException {
        HoldingHandler handler = new HoldingHandler(4);
        HomaTransport server = bind(handler);
        HomaTransport client = bind(null);
        InetSocketAddress to = address(server);

        int burst = 20;
        CountDownLatch refused = new CountDownLatch(burst - 4);
        List<Mono<String>> calls = new ArrayList<>();
        for (int i = 0; i < burst; i++) {
            Mono<String> call = client.call(to, new byte[] {(byte) i})
                    .doOnError(e -> refused.countDown())
                    .map(bytes -> "OK")
                    .onErrorResume(HomaException.class, e -> Mono.just(e.refusal() == HomaException.Refusal.OVERLOADED
                            ? "overloaded" : e.getMessage()))
                    .cache();
            call.subscribe();
            calls.add(call);
        }
        assertThat(handler.full.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        // Released only once every other call has ended: none of them may run later.
        assertThat(refused.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        handler.release.tryEmitEmpty();
        Map<String, Long> outcomes = new java.util.TreeMap<>();
        for (Mono<String> call : calls) {
            outcomes.merge(call.block(WAIT), 1L, Long::sum);
        }
        assertThat(outcomes).isEqualTo(Map.of("OK", 4L, "overloaded", (long) burst - 4));
        assertThat(handler.seen).as("each call ran at most once, the refused ones never").hasValue(4);
        assertThat(server.refusedOverloadedRequests()).isEqualTo(burst - 4);
    }
}
