package io.homa.reactive.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.EngineCounters;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaRequest;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.internal.rpc.EnvelopeCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** HomaClient against an in-memory transport that hands requests straight to a dispatcher. */
class HomaClientTest {
    record Greeting(String to, int times) {}

    private static final InetSocketAddress SERVER = new InetSocketAddress("127.0.0.1", 4000);
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final Scheduler scheduler = Schedulers.newSingle("client-test");
    private final JsonPayloadCodec codec = new JsonPayloadCodec();
    private final RpcDispatcher dispatcher = new RpcDispatcher(codec, scheduler)
            .register(new RpcMethod("greeter", "greet", Greeting.class, arg -> {
                Greeting greeting = (Greeting) arg;
                return Mono.just(("hello " + greeting.to() + " ").repeat(greeting.times()).trim());
            }))
            .register(new RpcMethod("greeter", "names", null, arg -> Mono.just(List.of(new Greeting("a", 1)))))
            .register(new RpcMethod("greeter", "nothing", null, arg -> Mono.empty()))
            .register(new RpcMethod("greeter", "fail", null,
                    arg -> Mono.error(new HomaException(HomaStatus.PERMISSION_DENIED, "not you"))));
    private final InMemoryTransport transport = new InMemoryTransport(bytes -> {
        ByteBuf response = dispatcher.handle(new HomaRequest(SERVER, 2, Unpooled.wrappedBuffer(bytes))).block(TIMEOUT);
        try {
            return Mono.just(ByteBufUtil.getBytes(response));
        } finally {
            response.release();
        }
    });
    private final HomaClient client = new HomaClient(transport, StaticServiceResolver.of("greeter", SERVER), codec);

    @AfterEach
    void disposeScheduler() {
        scheduler.dispose();
    }

    @Test
    void shouldCallAndDecodeRecordArgumentAndResult() {
        StepVerifier.create(client.call("greeter", "greet", new Greeting("homa", 2), String.class))
                .expectNext("hello homa hello homa")
                .expectComplete()
                .verify(TIMEOUT);
        assertThat(transport.lastServer).isEqualTo(SERVER);
    }

    @Test
    void shouldDecodeGenericResultType() {
        Mono<List<Greeting>> names =
                client.call("greeter", "names", null, TestTypes.listOf(Greeting.class));

        assertThat(names.block(TIMEOUT)).containsExactly(new Greeting("a", 1));
    }

    @Test
    void shouldCompleteEmptyForNullResult() {
        StepVerifier.create(client.call("greeter", "nothing", null, String.class)).expectComplete().verify(TIMEOUT);
    }

    @Test
    void shouldDecodeOnTheResultSchedulerWhenGivenOne() {
        Scheduler results = Schedulers.newSingle("homa-results");
        try {
            HomaClient hopping =
                    new HomaClient(transport, StaticServiceResolver.of("greeter", SERVER), codec, results);

            String thread = hopping.call("greeter", "greet", new Greeting("x", 1), String.class)
                    .map(greeting -> Thread.currentThread().getName())
                    .block(TIMEOUT);

            assertThat(thread).startsWith("homa-results");
        } finally {
            results.dispose();
        }
    }

    @Test
    void shouldBeLazyAndSendOneRpcPerSubscription() {
        Mono<String> call = client.call("greeter", "greet", new Greeting("x", 1), String.class);
        assertThat(transport.calls).hasValue(0);

        call.block(TIMEOUT);
        call.block(TIMEOUT);

        assertThat(transport.calls).hasValue(2);
    }

    @Test
    void shouldSurfaceRemoteErrorsWithStatusAndMessage() {
        StepVerifier.create(client.call("greeter", "fail", null, String.class))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(HomaRemoteException.class).hasMessage("PERMISSION_DENIED: not you");
                    assertThat(((HomaRemoteException) e).status()).isEqualTo(HomaStatus.PERMISSION_DENIED);
                })
                .verify(TIMEOUT);
        StepVerifier.create(client.call("greeter", "unknown", null, String.class))
                .expectErrorSatisfies(e -> assertThat(((HomaRemoteException) e).status())
                        .isEqualTo(HomaStatus.UNIMPLEMENTED))
                .verify(TIMEOUT);
    }

    @Test
    void shouldFailWithUnavailableWhenServiceDoesNotResolve() {
        assertUnavailable(client.call("elsewhere", "greet", null, String.class),
                "no peer for service 'elsewhere' (configured: greeter)");
        assertThat(transport.calls).hasValue(0);
    }

    private static void assertUnavailable(Mono<?> call, String message) {
        StepVerifier.create(call)
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(HomaException.class).hasMessage(message);
                    assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.UNAVAILABLE);
                })
                .verify(TIMEOUT);
    }

    @Test
    void shouldCallThroughAResolverThatAnswersLaterAndFailUnavailableOnAnEmptyOne() {
        AtomicInteger lookups = new AtomicInteger();
        HomaClient later = new HomaClient(transport, service -> Mono.fromCallable(() -> {
            lookups.incrementAndGet();
            return SERVER;
        }).subscribeOn(Schedulers.boundedElastic()), codec);
        HomaClient nowhere = new HomaClient(transport, service -> Mono.empty(), codec);

        assertThat(later.call("greeter", "greet", new Greeting("b", 1), String.class).block(TIMEOUT)).isEqualTo("hello b");
        assertThat(lookups).hasValue(1);
        for (HomaClient client : List.of(nowhere, new HomaClient(transport,
                service -> Mono.<InetSocketAddress>empty().subscribeOn(Schedulers.boundedElastic()), codec))) {
            assertUnavailable(client.call("greeter", "greet", new Greeting("c", 1), String.class),
                    "no peer for service 'greeter' (the resolver found none)");
        }
        assertThat(transport.calls).hasValue(1);
    }

    @Test
    void shouldFailWithInternalOnMalformedResponseOrUndecodableResult() {
        HomaClient garbage = new HomaClient(
                new InMemoryTransport(bytes -> Mono.just(new byte[] {7, 7, 7})), request -> Mono.just(SERVER), codec);
        HomaClient wrongType = new HomaClient(
                new InMemoryTransport(bytes -> Mono.just(EnvelopeCodec.encodeOk("\"text\"".getBytes()))),
                request -> Mono.just(SERVER), codec);

        StepVerifier.create(garbage.call("s", "m", null, String.class))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isNotInstanceOf(HomaRemoteException.class)
                            .hasMessageStartingWith("bad response from s.m: malformed response envelope");
                    assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.INTERNAL);
                })
                .verify(TIMEOUT);
        StepVerifier.create(wrongType.call("s", "m", null, Integer.class))
                .expectErrorSatisfies(e -> {
                    assertThat(e).hasMessageStartingWith("cannot decode the result of s.m");
                    assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.INTERNAL);
                })
                .verify(TIMEOUT);
    }

    /** Bytes in, bytes out, no network. */
    private static final class InMemoryTransport extends HomaTransport {
        @Override
        public void startServing() {
        }

        @Override
        public boolean isServing() {
            return true;
        }

        private final Function<byte[], Mono<byte[]>> server;
        final AtomicInteger calls = new AtomicInteger();
        volatile InetSocketAddress lastServer;

        InMemoryTransport(Function<byte[], Mono<byte[]>> server) {
            this.server = server;
        }

        @Override
        public Mono<ByteBuf> call(InetSocketAddress server, ByteBuf request) {
            byte[] bytes = ByteBufUtil.getBytes(request);
            request.release();
            return call(server, bytes).map(Unpooled::wrappedBuffer);
        }

        @Override
        public Mono<byte[]> call(InetSocketAddress address, byte[] request) {
            return Mono.defer(() -> {
                calls.incrementAndGet();
                lastServer = address;
                return server.apply(request);
            });
        }

        @Override
        public InetSocketAddress localAddress() {
            return new InetSocketAddress("127.0.0.1", 0);
        }

        @Override
        public Mono<EngineCounters> counters() {
            return Mono.empty();
        }

        @Override
        public long droppedDatagrams() {
            return 0;
        }

        @Override
        public void dispose() {}

        @Override
        public void disposeNow(Duration timeout) {}

        @Override
        public Mono<Void> onDispose() {
            return Mono.empty();
        }
    }
}
