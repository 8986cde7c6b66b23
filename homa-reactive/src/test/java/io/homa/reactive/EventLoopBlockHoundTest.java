package io.homa.reactive;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.EngineConfig;
import io.homa.reactive.rpc.CallOptions;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.JsonPayloadCodec;
import io.homa.reactive.rpc.PayloadCodecs;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.RpcMethod;
import io.homa.reactive.rpc.StaticServiceResolver;
import io.homa.reactive.rpc.TestTypes;
import java.lang.reflect.Type;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockHound;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The framework never blocks an event loop: BlockHound (with its Netty and
 * Reactor integrations, which mark event-loop and parallel threads non-blocking) watches a
 * loopback workload of unary calls, plain (blocking) methods, server streams, channels and 1 MiB
 * messages, and every blocking call on a non-blocking thread is recorded with the code that made
 * it. A blocking call whose nearest {@code io.homa} frame is the framework's fails the test (one
 * inside Netty or Reactor with no {@code io.homa} frame is printed); the test's own deliberate one
 * (a handler that sleeps on the loop) proves that the watch is on. Runs in a JVM of
 * its own (the surefire execution {@code blockhound}): the agent instruments the whole JVM. Run it
 * alone with {@code ./mvnw -pl homa-reactive test-compile surefire:test@blockhound} ({@code -Dtest}
 * would run it in the default JVM, without the flag the agent needs).
 */
class EventLoopBlockHoundTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final List<String> violations = new CopyOnWriteArrayList<>();
    private static final String NETTY_ALLOCATOR = "io.netty.buffer.AdaptivePoolingAllocator";
    private static final String IN_NETTY_ALLOCATOR = "(in Netty's allocator)";

    @BeforeAll
    static void install() {
        // BlockHound loads HomaBlockHoundIntegration (the busy poll's deliberate Thread.yield) itself.
        BlockHound.install(builder -> builder.blockingMethodCallback(method -> violations.add(
                method + " on " + Thread.currentThread().getName() + " by " + nearestHomaFrame(new Throwable()))));
    }

    @AfterAll
    static void report() {
        System.out.println("BlockHound violations: " + violations);
    }

    /**
     * The nearest {@code io.homa} frame: who made the blocking call; or, for a wait inside Netty's
     * pooled allocator, that (its lock, contended when another thread frees into the magazine the
     * loop allocates from, is Netty's own, whoever asked for the buffer).
     */
    private static String nearestHomaFrame(Throwable trace) {
        if (Arrays.stream(trace.getStackTrace())
                .anyMatch(frame -> frame.getClassName().startsWith(NETTY_ALLOCATOR))) {
            return IN_NETTY_ALLOCATOR + " at " + Arrays.stream(trace.getStackTrace()).skip(2).limit(30)
                    .map(StackTraceElement::toString).collect(Collectors.joining(" < "));
        }
        return Arrays.stream(trace.getStackTrace())
                .filter(frame -> frame.getClassName().startsWith("io.homa."))
                // not the callback itself (a lambda of install)
                .filter(frame -> !frame.getClassName().equals(EventLoopBlockHoundTest.class.getName())
                        || !frame.getMethodName().startsWith("lambda$install"))
                .findFirst()
                .map(StackTraceElement::toString)
                .orElseGet(() -> "(no io.homa frame) at " + Arrays.stream(trace.getStackTrace()).skip(2).limit(30)
                        .map(StackTraceElement::toString).collect(Collectors.joining(" < ")));
    }

    @Test
    void shouldNeverBlockAnEventLoopInTheFramework() {
        Scheduler scheduler = Schedulers.newBoundedElastic(4, 1000, "blockhound-server");
        RpcDispatcher dispatcher = new RpcDispatcher(PayloadCodecs.of(new JsonPayloadCodec()), scheduler)
                .register(RpcMethod.unary("svc", "echo", new Type[] {String.class}, args -> Mono.just(args[0])))
                .register(RpcMethod.unary("svc", "plain", new Type[] {int.class},
                        args -> Mono.fromCallable(() -> (Integer) args[0] + 1)).withBlocking(true))
                .register(RpcMethod.unary("svc", "bytes", new Type[] {byte[].class}, args -> Mono.just(args[0])))
                .register(RpcMethod.stream("svc", "range", new Type[] {int.class},
                        args -> Flux.range(0, (Integer) args[0])))
                .register(RpcMethod.bidiStream("svc", "doubled", new Type[] {TestTypes.fluxOf(Integer.class)},
                        args -> ((Flux<?>) args[0]).map(i -> 2 * (Integer) i)))
                .register(RpcMethod.unary("svc", "sleepOnTheLoop", new Type[0], args -> Mono.fromCallable(() -> {
                    Thread.sleep(1); // the test's own blocking call, on the event loop: proves the watch is on
                    return "slept";
                })));
        HomaTransportConfig config = HomaTransportConfig.builder()
                .bindAddress("127.0.0.1")
                .engine(EngineConfig.builder().resendIntervalNs(50_000_000L).build())
                .build();
        HomaTransport server = HomaTransport.bindNow(config, dispatcher, Duration.ofSeconds(10));
        HomaTransport clientTransport = HomaTransport.bindNow(config, null, Duration.ofSeconds(10));
        try {
            InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(),
                    server.localAddress().getPort());
            HomaClient client = HomaClient.builder(clientTransport)
                    .resolver(StaticServiceResolver.ofPeers(Map.of("svc", List.of(address))))
                    .defaultTimeout(Duration.ofSeconds(30))
                    .build();
            CallOptions withMetadata = CallOptions.defaults().withMetadata("tenant", "acme");

            assertThat(client.call("svc", "sleepOnTheLoop", null, String.class).block(WAIT)).isEqualTo("slept");
            assertThat(violations).as("the watch is on: the test's own sleep on the loop is seen")
                    .anySatisfy(violation -> assertThat(violation).contains("sleep")
                            .contains("by " + EventLoopBlockHoundTest.class.getName()));
            violations.clear();

            Long echoed = Flux.range(0, 2_000)
                    .flatMap(i -> client.call("svc", "echo", new Object[] {"m" + i}, String.class, withMetadata), 32)
                    .count().block(WAIT);
            Long plain = Flux.range(0, 500)
                    .flatMap(i -> client.call("svc", "plain", new Object[] {i}, Integer.class, CallOptions.defaults()), 16)
                    .count().block(WAIT);
            Long big = Flux.range(0, 20)
                    .flatMap(i -> client.call("svc", "bytes", new Object[] {new byte[(1 << 20) - 1024]}, byte[].class,
                            CallOptions.defaults()), 4)
                    .count().block(WAIT);
            Long streamed = client.stream("svc", "range", new Object[] {20_000}, Integer.class, CallOptions.defaults())
                    .count().block(WAIT);
            Long doubled = client.channel("svc", "doubled", new Object[] {Flux.range(0, 20_000)}, Integer.class,
                    CallOptions.defaults()).count().block(WAIT);

            assertThat(List.of(echoed, plain, big, streamed, doubled)).containsExactly(2_000L, 500L, 20L, 20_000L, 20_000L);
        } finally {
            clientTransport.disposeNow();
            server.disposeNow();
            scheduler.dispose();
        }
        // Ours: the nearest io.homa frame is the framework's. A park with no io.homa frame at all is
        // Netty's or Reactor's own, and so is one inside Netty's allocator (AdaptivePoolingAllocator's
        // StampedLock when a scheduler thread frees into the magazine the loop allocates from, seen
        // under the framework's GsoBatcher.add as well as under Netty's reads): printed, not failed.
        List<String> framework = violations.stream()
                .filter(violation -> !violation.contains("by " + EventLoopBlockHoundTest.class.getName()))
                .filter(violation -> !violation.contains("(no io.homa frame)"))
                .filter(violation -> !violation.contains(IN_NETTY_ALLOCATOR))
                .collect(Collectors.toList());
        assertThat(framework).as("blocking calls made by the framework on non-blocking threads").isEmpty();
    }
}
