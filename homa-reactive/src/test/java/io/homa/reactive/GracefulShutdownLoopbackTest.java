package io.homa.reactive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.homa.engine.EngineConfig;
import io.homa.reactive.internal.transport.TransportProbes;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

/**
 * A closed-loop client keeps RPCs in flight against an echo server while the server shuts down;
 * every RPC is counted by how it ended.
 */
class GracefulShutdownLoopbackTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final int OUTSTANDING = 16;

    private final List<HomaTransport> transports = new ArrayList<>();

    @AfterEach
    void disposeTransports() {
        transports.forEach(HomaTransport::disposeNow);
    }

    /** Short liveness timers so that a lost RPC shows as a timeout within about a second. */
    private HomaTransport bind(HomaRequestHandler handler) {
        EngineConfig engine = EngineConfig.builder()
                .resendIntervalNs(5_000_000L)
                .peerSilenceTimeoutNs(1_000_000_000L)
                .build();
        HomaTransport transport = HomaTransport.bindNow(
                HomaTransportConfig.builder().bindAddress("127.0.0.1").engine(engine).build(), handler, TIMEOUT);
        transports.add(transport);
        return transport;
    }

    private static InetSocketAddress address(HomaTransport transport) {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), transport.localAddress().getPort());
    }

    /** How each RPC of a {@link ClientLoop} ended, by outcome name. */
    static final class ClientLoop {
        final Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
        final Map<String, String> examples = new ConcurrentHashMap<>();
        final AtomicLong started = new AtomicLong();
        final AtomicInteger outstanding = new AtomicInteger();
        final AtomicBoolean stop = new AtomicBoolean();
        final CountDownLatch idle = new CountDownLatch(1);
        private final HomaTransport client;
        private final InetSocketAddress server;
        private final Random random = new Random(14);

        ClientLoop(HomaTransport client, InetSocketAddress server) {
            this.client = client;
            this.server = server;
        }

        void start(int outstanding) {
            for (int i = 0; i < outstanding; i++) {
                next();
            }
        }

        private void next() {
            if (stop.get()) {
                if (outstanding.get() == 0) {
                    idle.countDown();
                }
                return;
            }
            int length;
            synchronized (random) {
                length = random.nextInt(4) == 0 ? 1 + random.nextInt(300_000) : 1 + random.nextInt(2_000);
            }
            outstanding.incrementAndGet();
            started.incrementAndGet();
            client.call(server, new byte[length]).subscribe(
                    (response) -> end("OK", null),
                    (error) -> end(outcome(error), error));
        }

        private void end(String outcome, Throwable error) {
            outcomes.computeIfAbsent(outcome, (key) -> new AtomicInteger()).incrementAndGet();
            if (error != null) {
                examples.putIfAbsent(outcome, error.getMessage());
            }
            outstanding.decrementAndGet();
            if (error == null) {
                Schedulers.parallel().schedule(this::next);
            } else {
                Schedulers.parallel().schedule(this::next, 1, TimeUnit.MILLISECONDS);
            }
            if (stop.get() && outstanding.get() == 0) {
                idle.countDown();
            }
        }

        static String outcome(Throwable error) {
            if (error instanceof HomaTimeoutException) {
                return "timeout";
            }
            if (error instanceof HomaException homa) {
                return homa.status().name() + (String.valueOf(homa.getMessage()).contains("shutting down")
                        ? " (shutdown)" : "");
            }
            return error.getClass().getSimpleName();
        }

        int count(String outcome) {
            AtomicInteger count = outcomes.get(outcome);
            return count == null ? 0 : count.get();
        }

        long ended() {
            return outcomes.values().stream().mapToLong(AtomicInteger::get).sum();
        }

        Map<String, Integer> summary() {
            Map<String, Integer> summary = new TreeMap<>();
            outcomes.forEach((key, value) -> summary.put(key, value.get()));
            return summary;
        }

        void awaitCompleted(long rpcs) {
            await().atMost(TIMEOUT).until(() -> count("OK") >= rpcs);
            assertThat(count("OK")).as("RPCs completed before the shutdown").isGreaterThanOrEqualTo((int) rpcs);
        }

        void stopAndAwait() throws InterruptedException {
            stop.set(true);
            if (outstanding.get() == 0) {
                idle.countDown();
            }
            assertThat(idle.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).as("every RPC ended").isTrue();
        }
    }

    /**
     * The reported loss (SIGTERM on the echo server under load: 16 RPCs in flight ended in
     * timeouts) does not happen when the server drains before it closes: every RPC started before
     * the socket closed either completes or fails with the shutdown UNAVAILABLE.
     */
    @Test
    void shouldEndEveryRpcInFlightWithItsResponseOrTheShutdownUnavailableWhenTheServerDrainsUnderLoad()
            throws Exception {
        // Half the requests are answered a little later, off the loop, so that some are in the
        // handler when the drain starts.
        AtomicInteger inHandler = new AtomicInteger();
        HomaTransport server = bind(request -> {
            if (request.payload().getByte(request.payload().readerIndex()) == 0) {
                return Mono.just(request.payload().retainedDuplicate());
            }
            inHandler.incrementAndGet();
            return Mono.delay(Duration.ofMillis(2)).map((tick) -> request.payload().retainedDuplicate())
                    .doFinally((signal) -> inHandler.decrementAndGet());
        });
        HomaTransport client = bind(null);
        ClientLoop loop = new ClientLoop(client, address(server));
        loop.start(OUTSTANDING);
        loop.awaitCompleted(300);

        long completedBeforeDrain = loop.count("OK");
        // Read after the count: each of these had not completed then, and the drain lets it finish.
        int inHandlerAtDrain = inHandler.get();
        server.drain(Duration.ofSeconds(20)).block(TIMEOUT);
        int heldAfterDrain = TransportProbes.activeServerRpcs(server).block(TIMEOUT);
        server.disposeNow();
        loop.stopAndAwait();

        Map<String, Integer> outcomes = loop.summary();
        System.out.println("Drain under load: outcomes " + outcomes + ", " + completedBeforeDrain + " completed before the drain, "
                + server.refusedRequests() + " refused by the server");
        assertThat(outcomes.keySet()).as("outcomes %s, e.g. %s", outcomes, loop.examples)
                .containsOnly("OK", "UNAVAILABLE (shutdown)");
        assertThat(loop.ended()).isEqualTo(loop.started.get());
        assertThat(loop.count("UNAVAILABLE (shutdown)")).isPositive();
        assertThat(server.refusedRequests()).isPositive();
        assertThat(heldAfterDrain).as("server RPCs left unacknowledged when the drain completed").isZero();
        assertThat(loop.count("OK")).as("RPCs in the handler when the drain started completed")
                .isGreaterThanOrEqualTo((int) completedBeforeDrain + inHandlerAtDrain);
    }

    @Test
    void shouldFinishRequestsInTheHandlerRefuseNewOnesAndStopSendingToAServerThatIsShuttingDown() {
        Sinks.One<Boolean> release = Sinks.one();
        AtomicInteger handled = new AtomicInteger();
        HomaTransport server = bind(request -> {
            handled.incrementAndGet();
            return release.asMono().map((go) -> request.payload().retainedDuplicate());
        });
        HomaTransport client = bind(null);
        AtomicReference<byte[]> first = new AtomicReference<>();
        AtomicReference<Throwable> firstError = new AtomicReference<>();
        client.call(address(server), new byte[] {1}).subscribe(first::set, firstError::set);
        await().atMost(TIMEOUT).until(() -> handled.get() == 1);

        Mono<Void> drained = server.drain(Duration.ofSeconds(20)).cache();
        drained.subscribe();
        await().atMost(TIMEOUT).until(server::isDraining);

        Throwable refused = catchError(client.call(address(server), new byte[70_000])); // two packets and more
        assertThat(refused).isExactlyInstanceOf(HomaException.class)
                .hasMessageContaining("refused: server is shutting down (the request was not executed)");
        assertThat(((HomaException) refused).status()).isEqualTo(HomaStatus.UNAVAILABLE);
        Throwable notSent = catchError(client.call(address(server), new byte[] {3}));
        assertThat(notSent).isExactlyInstanceOf(HomaException.class).hasMessageContaining("not sent: server is shutting down");
        assertThat(server.refusedRequests()).as("the third request never reached the server").isEqualTo(1);
        assertThat(handled.get()).as("refused requests never reach the handler").isEqualTo(1);
        assertThat(drained.toFuture().isDone()).as("the drain waits for the request in the handler").isFalse();

        release.tryEmitValue(Boolean.TRUE);
        drained.block(TIMEOUT);
        assertThat(first.get()).containsExactly(1);
        assertThat(firstError.get()).isNull();
        assertThat(TransportProbes.activeServerRpcs(server).block(TIMEOUT)).isZero();
        assertThat(server.isDisposed()).as("a drain leaves the socket open").isFalse();
    }

    @Test
    void shouldKeepTheDrainedEndpointsOwnCallsWorking() {
        HomaTransport other = bind(request -> Mono.just(request.payload().retainedDuplicate()));
        HomaTransport drainedServer = bind(request -> Mono.just(request.payload().retainedDuplicate()));

        drainedServer.drain(Duration.ZERO).block(TIMEOUT);

        assertThat(drainedServer.call(address(other), new byte[] {7}).block(TIMEOUT)).containsExactly(7);
        Throwable refused = catchError(other.call(address(drainedServer), new byte[] {8}));
        assertThat(refused).hasMessageContaining("server is shutting down");
    }

    @Test
    void shouldRejectANegativeGracePeriod() {
        HomaTransport server = bind(request -> Mono.just(request.payload().retainedDuplicate()));
        assertThatThrownBy(() -> server.drain(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("gracePeriod");
    }

    private static Throwable catchError(Mono<byte[]> call) {
        try {
            call.block(TIMEOUT);
        } catch (RuntimeException e) {
            return e;
        }
        throw new AssertionError("the call succeeded");
    }
}
