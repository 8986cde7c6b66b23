package io.homa.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.homa.demo.workload.HeadOfLineBenchmark;
import io.homa.demo.workload.HeadOfLineResult;
import io.homa.engine.EngineConfig;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaTimeoutException;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

/** Client and server mode of {@link DemoRunner}, without Spring. */
class DemoRunnerTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final ByteArrayOutputStream output = new ByteArrayOutputStream();
    private final PrintStream out = new PrintStream(output, true, StandardCharsets.UTF_8);

    @Test
    void shouldRunTheWorkloadAgainstARemoteEchoServerInClientMode() {
        HomaTransport echo = HomaTransport.bindNow(
                HomaTransportConfig.builder().bindAddress("127.0.0.1").port(0).build(), DemoRunner.ECHO, TIMEOUT);
        try {
            DemoRunner runner = new DemoRunner(properties(DemoProperties.Mode.CLIENT, 0,
                    "127.0.0.1:" + echo.localAddress().getPort()), out);

            runner.run(null);

            assertThat(runner.getExitCode()).isZero();
            assertThat(runner.result().completedRpcs()).isPositive();
            assertThat(runner.result().failedRpcs()).isZero();
            assertThat(output.toString(StandardCharsets.UTF_8)).contains("Homa echo workload w2").contains("0 failed RPCs");
        } finally {
            echo.disposeNow(TIMEOUT);
        }
    }

    @Test
    void shouldExitWithOneWhenThePeerDoesNotAnswer() throws Exception {
        int deadPort;
        try (java.net.DatagramSocket socket = new java.net.DatagramSocket(0, java.net.InetAddress.getLoopbackAddress())) {
            deadPort = socket.getLocalPort(); // nothing answers here once closed
        }
        DemoRunner runner = new DemoRunner(properties(DemoProperties.Mode.CLIENT, 0, "127.0.0.1:" + deadPort), out);

        runner.run(null);

        assertThat(runner.getExitCode()).isEqualTo(1);
        assertThat(runner.result()).isNull();
    }

    @Test
    void shouldServeEchoesInServerModeUntilDestroyed() throws Exception {
        DemoRunner runner = new DemoRunner(properties(DemoProperties.Mode.SERVER, 0, null), out);
        runner.run(null);
        Thread waiting = new Thread(runner::awaitServerClosed, "demo-server-test");
        waiting.start();
        HomaTransport client = HomaTransport.bindNow(
                HomaTransportConfig.builder().bindAddress("127.0.0.1").port(0).build(), null, TIMEOUT);
        try {
            InetSocketAddress server = new InetSocketAddress("127.0.0.1", runner.server().localAddress().getPort());
            byte[] request = new byte[5000];
            new java.util.Random(3).nextBytes(request);

            assertThat(client.call(server, request).block(TIMEOUT)).isEqualTo(request);
            assertThat(waiting.isAlive()).as("awaitServerClosed blocks while serving").isTrue();
        } finally {
            client.disposeNow(TIMEOUT);
            runner.destroy();
        }
        waiting.join(TimeUnit.SECONDS.toMillis(10));
        assertThat(waiting.isAlive()).isFalse();
        assertThat(runner.getExitCode()).isZero();
    }

    /**
     * The reported loss: SIGTERM on the echo server under load left 16 RPCs in flight to time out.
     * Now every RPC started before the server closed ends with its echo or with the shutdown
     * UNAVAILABLE.
     */
    @Test
    void shouldEndEveryRpcWithItsEchoOrTheShutdownUnavailableWhenTheServerStopsUnderLoad() throws Exception {
        DemoRunner runner = new DemoRunner(properties(DemoProperties.Mode.SERVER, 0, null),
                HomaTransportConfig.defaults(), Duration.ofSeconds(20), out);
        runner.run(null);
        HomaTransport client = HomaTransport.bindNow(HomaTransportConfig.builder().bindAddress("127.0.0.1").port(0)
                .engine(EngineConfig.builder().peerSilenceTimeoutNs(1_000_000_000L).build()).build(), null, TIMEOUT);
        Map<String, Integer> outcomes = new ConcurrentHashMap<>();
        Map<String, String> examples = new ConcurrentHashMap<>();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger outstanding = new AtomicInteger();
        try {
            InetSocketAddress server = new InetSocketAddress("127.0.0.1", runner.server().localAddress().getPort());
            Random random = new Random(14);
            Runnable[] next = new Runnable[1];
            next[0] = () -> {
                // Counted before the stop check: once stop is set and nothing is outstanding, no call starts.
                outstanding.incrementAndGet();
                if (stop.get()) {
                    outstanding.decrementAndGet();
                    return;
                }
                int length;
                synchronized (random) {
                    length = random.nextInt(4) == 0 ? 1 + random.nextInt(300_000) : 1 + random.nextInt(2_000);
                }
                client.call(server, new byte[length]).subscribe((echo) -> {
                    outcomes.merge(echo.length == length ? "OK" : "wrong echo", 1, Integer::sum);
                    outstanding.decrementAndGet();
                    Schedulers.parallel().schedule(next[0]);
                }, (error) -> {
                    String outcome = outcome(error);
                    outcomes.merge(outcome, 1, Integer::sum);
                    examples.putIfAbsent(outcome, String.valueOf(error));
                    outstanding.decrementAndGet();
                    Schedulers.parallel().schedule(next[0], 1, TimeUnit.MILLISECONDS);
                });
            };
            for (int i = 0; i < 16; i++) {
                next[0].run();
            }
            await().atMost(WAIT).until(() -> outcomes.getOrDefault("OK", 0) >= 300);

            runner.destroy(); // what SIGTERM does: the context closes

            stop.set(true);
            await().atMost(WAIT).until(() -> outstanding.get() == 0);
        } finally {
            stop.set(true);
            client.disposeNow(TIMEOUT);
        }
        System.out.println("Echo server stopped under load: outcomes " + outcomes);
        assertThat(outcomes.keySet()).as("outcomes %s, e.g. %s", outcomes, examples)
                .containsOnly("OK", "UNAVAILABLE (shutdown)");
        assertThat(outcomes.get("UNAVAILABLE (shutdown)")).isPositive();
        assertThat(output.toString(StandardCharsets.UTF_8)).contains("Homa server engine");
    }

    private static String outcome(Throwable error) {
        if (error instanceof HomaTimeoutException) {
            return "timeout";
        }
        if (error instanceof HomaException homa) {
            return homa.status() + (String.valueOf(homa.getMessage()).contains("shutting down") ? " (shutdown)" : "");
        }
        return error.getClass().getSimpleName();
    }

    @Test
    void shouldPrintShortRpcLatencyAloneAndUnderLongRpcsInHolMode() {
        DemoRunner runner = new DemoRunner(new DemoProperties(DemoProperties.Mode.HOL, Duration.ofSeconds(2), 16, "w3",
                4000, null, 1, Duration.ofMillis(200), 20, Duration.ofSeconds(10), 3), out);

        runner.run(null);

        String printed = output.toString(StandardCharsets.UTF_8);
        assertThat(runner.getExitCode()).as(printed).isZero();
        HeadOfLineResult result = runner.headOfLineResult();
        assertThat(result.unloadedRpcs()).isEqualTo(HeadOfLineBenchmark.UNLOADED_SAMPLES);
        assertThat(result.loadedRpcs()).isPositive();
        assertThat(result.longRpcs()).as("the long RPCs really ran").isPositive();
        assertThat(result.failedRpcs()).isZero();
        // The result holds what each phase printed, and the ratios are of its own figures.
        assertThat(printed)
                .contains(String.format(Locale.ROOT, "Unloaded: %,d sequential 100-byte RPCs: p50 %.1f µs, p99 %.1f µs,",
                        result.unloadedRpcs(), result.unloadedP50Us(), result.unloadedP99Us()))
                .containsPattern(Pattern.quote(String.format(Locale.ROOT, "Loaded:   %,d sequential 100-byte RPCs in ",
                        result.loadedRpcs())) + "[0-9.]+ s: " + Pattern.quote(String.format(Locale.ROOT,
                        "p50 %.1f µs, p99 %.1f µs,", result.loadedP50Us(), result.loadedP99Us())))
                .contains(String.format(Locale.ROOT, "Loaded / unloaded: p50 %.2fx, p99 %.2fx",
                        result.loadedP50Us() / result.unloadedP50Us(), result.loadedP99Us() / result.unloadedP99Us()));
        assertThat(printed)
                .contains("Homa head-of-line test: 100-byte echo RPCs alone, then while 3 1,048,576-byte echo RPCs")
                .containsPattern("Unloaded: 2,000 sequential 100-byte RPCs: p50 [0-9.]+ µs, p99 [0-9.]+ µs")
                .containsPattern("Loaded: +[0-9,]+ sequential 100-byte RPCs in [0-9.]+ s: p50 [0-9.]+ µs, p99 [0-9.]+ µs")
                .containsPattern("Loaded / unloaded: p50 [0-9.]+x, p99 [0-9.]+x");
        assertThat(runner.server()).as("transports are closed afterwards").isNull();
    }

    private static DemoProperties properties(DemoProperties.Mode mode, int port, String peer) {
        return new DemoProperties(mode, Duration.ofSeconds(1), 2, "w2", port, peer, 3, Duration.ZERO, 2,
                Duration.ofSeconds(2), 3);
    }
}
