package io.homa.reactive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.homa.engine.EngineConfig;
import io.homa.engine.wire.PacketType;
import io.homa.reactive.internal.transport.TransportProbes;
import io.homa.reactive.rpc.HomaClient;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.resources.LoopResources;

/**
 * Everything above the engine runs on the injected {@link NanoClock}: the transport's timers hand
 * the engine the clock's time (so RESENDs and timeouts follow it, not the wall clock), and the RPC
 * layer measures call deadlines on it.
 */
class FakeClockTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    /** A clock that moves only when told to. */
    private static final class FakeClock implements NanoClock {
        final AtomicLong nowNs = new AtomicLong(-3_000_000_000L); // any origin works

        @Override
        public long nanoTime() {
            return nowNs.get();
        }

        void advance(Duration by) {
            nowNs.addAndGet(by.toNanos());
        }
    }

    @Test
    void shouldResendAndTimeOutOnlyAsTheInjectedClockMoves() throws Exception {
        FakeClock clock = new FakeClock();
        // 100 ms of silence budget, RESENDs after 10 ms then every 20 ms (the cap, a fifth of it).
        EngineConfig engine = EngineConfig.builder().peerSilenceTimeoutNs(EngineConfig.MIN_PEER_SILENCE_TIMEOUT_NS).build();
        LoopResources loops = LoopResources.create("fake-clock-test", 1, true);
        try (DatagramSocket silent = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            HomaTransport client = HomaTransport.create(HomaTransportConfig.builder().bindAddress("127.0.0.1")
                            .engine(engine).build())
                    .runOn(loops)
                    .clock(clock)
                    .bindNow(TIMEOUT);
            try {
                assertThat(client.clock()).isSameAs(clock);
                AtomicReference<Throwable> failure = new AtomicReference<>();
                InetSocketAddress silentPeer = new InetSocketAddress(InetAddress.getLoopbackAddress(), silent.getLocalPort());
                client.call(silentPeer, new byte[] {1}).subscribe(response -> { }, failure::set);
                await().atMost(TIMEOUT).until(() -> client.counters().block(TIMEOUT).packetsSent(PacketType.DATA) > 0);

                // The clock stands still: however long the test waits, the engine sees no silence.
                // The wait lasts until a transport on the system clock, on the same loop, has sent a
                // RESEND for the same request to the same peer, sent later: a timer that followed
                // the wall clock would have fired before that one.
                HomaTransport control = HomaTransport.create(HomaTransportConfig.builder().bindAddress("127.0.0.1")
                                .engine(engine).build())
                        .runOn(loops)
                        .bindNow(TIMEOUT);
                try {
                    control.call(silentPeer, new byte[] {1}).subscribe(response -> { }, error -> { });
                    await().atMost(TIMEOUT).until(() -> control.counters().block(TIMEOUT).resendsSent() > 0);
                } finally {
                    control.disposeNow();
                }
                assertThat(client.counters().block(TIMEOUT).resendsSent()).as("RESENDs while the clock stands still").isZero();
                assertThat(failure.get()).isNull();

                // RESENDs at 10, 30, 50, 70 and 90 ms on the fake clock (backed off to the cap);
                // at 100 ms of silence, the budget, the call fails.
                long intervalNs = engine.resendIntervalNs();
                for (int step = 1; step <= 9; step++) {
                    clock.advance(Duration.ofNanos(intervalNs));
                    awaitResends(client, (step + 1) / 2);
                }
                assertThat(failure.get()).as("not failed before the budget passes").isNull();
                clock.advance(Duration.ofNanos(intervalNs));
                await().atMost(TIMEOUT).until(() -> failure.get() != null);
                assertThat(failure.get()).isInstanceOf(HomaTimeoutException.class)
                        .hasMessageContaining("peer-silence-timeout 100 ms").hasMessageContaining("after 5 RESENDs");
                assertThat(client.counters().block(TIMEOUT).resendsSent()).isEqualTo(5);
            } finally {
                client.disposeNow();
            }
        } finally {
            loops.disposeLater(Duration.ZERO, Duration.ofSeconds(2)).block(TIMEOUT);
        }
    }

    @Test
    void shouldLetATimerThatRunsLateAfterAPauseWaitForOnePassOfTheLoopsIo() throws Exception {
        FakeClock clock = new FakeClock();
        LoopResources loops = LoopResources.create("late-timer-test", 1, true);
        try (DatagramSocket silent = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            HomaTransport client = HomaTransport.create(HomaTransportConfig.builder().bindAddress("127.0.0.1").build())
                    .runOn(loops)
                    .clock(clock)
                    .bindNow(TIMEOUT);
            try {
                client.call(new InetSocketAddress(InetAddress.getLoopbackAddress(), silent.getLocalPort()), new byte[] {1})
                        .subscribe(response -> { }, error -> { });
                // The request's first packet has left (and the timer is armed, in the same drive).
                await().atMost(TIMEOUT).until(() -> client.counters().block(TIMEOUT).packetsSent(PacketType.DATA) > 0);
                assertThat(TransportProbes.lateTimers(client)).isZero();

                // 50 ms pass at once, as over a GC pause: the RESEND timer (due at 10 ms) runs 40 ms
                // late, so it first lets the loop read what came meanwhile, then sends its RESEND.
                clock.advance(Duration.ofMillis(50));
                awaitResends(client, 1);
                assertThat(TransportProbes.lateTimers(client)).isEqualTo(1);
            } finally {
                client.disposeNow();
            }
        } finally {
            loops.disposeLater(Duration.ZERO, Duration.ofSeconds(2)).block(TIMEOUT);
        }
    }

    private static void awaitResends(HomaTransport client, long resends) {
        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(1))
                .until(() -> client.counters().block(TIMEOUT).resendsSent() >= resends);
        assertThat(client.counters().block(TIMEOUT).resendsSent()).isEqualTo(resends);
    }

    @Test
    void shouldMeasureCallDeadlinesOnTheInjectedClock() {
        FakeClock clock = new FakeClock();
        HomaTransport transport = HomaTransport.create(HomaTransportConfig.builder().bindAddress("127.0.0.1").build())
                .clock(clock)
                .bindNow(TIMEOUT);
        try {
            InetSocketAddress nowhere = new InetSocketAddress(InetAddress.getLoopbackAddress(), 9);
            // Resolving the service takes 2 s on the fake clock: the 1 s deadline has passed before
            // the request is encoded, so it is never sent.
            HomaClient client = HomaClient.builder(transport)
                    .resolver(service -> Mono.fromSupplier(() -> {
                        clock.advance(Duration.ofSeconds(2));
                        return nowhere;
                    }))
                    .defaultTimeout(Duration.ofSeconds(1))
                    .build();
            assertThatThrownBy(() -> client.call("slow", "lookup", "x", String.class).block(TIMEOUT))
                    .isInstanceOf(HomaException.class)
                    .satisfies(e -> assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.DEADLINE_EXCEEDED));
            assertThat(transport.counters().block(TIMEOUT).rpcsStarted()).as("nothing sent").isZero();

            // The same call with the clock standing still is sent (and then fails for other reasons).
            HomaClient patient = HomaClient.builder(transport)
                    .resolver(service -> Mono.just(nowhere))
                    .defaultTimeout(Duration.ofSeconds(1))
                    .build();
            patient.call("slow", "lookup", "x", String.class).subscribe(result -> { }, error -> { });
            await().atMost(TIMEOUT).until(() -> transport.counters().block(TIMEOUT).rpcsStarted() > 0);
            assertThat(transport.counters().block(TIMEOUT).rpcsStarted()).isEqualTo(1);
        } finally {
            transport.disposeNow();
        }
    }
}
