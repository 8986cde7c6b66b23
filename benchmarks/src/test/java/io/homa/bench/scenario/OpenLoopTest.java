package io.homa.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.bench.systems.EchoClient;
import io.homa.bench.systems.EchoProtocol;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

/** S5's open loop: where its calls go (the all-to-all variant spreads them over every target). */
class OpenLoopTest {
    /** Answers every call at once with a response of the requested length, counting calls per target. */
    private static final class CountingClient implements EchoClient {
        final AtomicIntegerArray calls;

        CountingClient(int targets) {
            calls = new AtomicIntegerArray(targets);
        }

        @Override
        public CompletableFuture<byte[]> call(int target, byte[] request) {
            calls.incrementAndGet(target);
            return CompletableFuture.completedFuture(EchoProtocol.respond(request));
        }

        @Override
        public int targets() {
            return calls.length();
        }

        @Override
        public void close() {}
    }

    @Test
    void shouldSpreadCallsOverEveryTargetWithAnyTarget() {
        CountingClient client = new CountingClient(3);

        OpenLoop.Result result = new OpenLoop(client, OpenLoop.ANY_TARGET, u -> 100, 20_000, 64, 1_000, 7)
                .run(0, 300, 100);

        int total = client.calls.get(0) + client.calls.get(1) + client.calls.get(2);
        assertThat(total).isGreaterThan(300);
        for (int target = 0; target < 3; target++) {
            assertThat(client.calls.get(target)).as("target %d's share", target).isBetween(total / 6, total / 2);
        }
        assertThat(result.failed()).isZero();
    }

    @Test
    void shouldSendEveryCallToTheOneTargetNamed() {
        CountingClient client = new CountingClient(3);

        new OpenLoop(client, 1, u -> 100, 20_000, 64, 1_000, 7).run(0, 100, 100);

        assertThat(client.calls.get(1)).isPositive();
        assertThat(client.calls.get(0) + client.calls.get(2)).isZero();
    }

    @Test
    void shouldMarkTheWindowsEndsOnceEachWhileCallsAreRecordedInside() {
        CountingClient client = new CountingClient(1);
        List<String> marks = new ArrayList<>();
        long[] at = new long[2];
        long runStart = System.nanoTime();

        OpenLoop.Result result = new OpenLoop(client, 0, u -> 100, 5_000, 64, 1_000, 7).run(100, 200, 100,
                () -> {
                    marks.add("start");
                    at[0] = System.nanoTime();
                }, () -> {
                    marks.add("end");
                    at[1] = System.nanoTime();
                });

        assertThat(marks).containsExactly("start", "end");
        assertThat(at[0] - runStart).as("after the warm-up").isGreaterThanOrEqualTo(100_000_000L);
        assertThat(at[1] - at[0]).as("the window").isGreaterThanOrEqualTo(190_000_000L);
        assertThat(result.recorded()).isPositive();
        assertThat(result.windowSeconds()).isEqualTo(0.2);
    }

    @Test
    void shouldCountTheBytesOfferedAndAnsweredInTheWindow() {
        CountingClient client = new CountingClient(1);

        OpenLoop.Result result = new OpenLoop(client, 0, u -> 1_000, 5_000, 64, 1_000, 7).run(0, 200, 100);

        // Every call is answered at once, so every call issued in the window is answered in it.
        assertThat(result.issuedInWindow()).isPositive();
        assertThat(result.skipped()).isZero();
        assertThat(result.offeredBytesInWindow()).isEqualTo(1_000L * result.issuedInWindow());
        assertThat(result.answeredBytesInWindow()).isEqualTo(1_000L * result.answeredInWindow());
        assertThat(result.answeredInWindow()).isEqualTo(result.issuedInWindow());
    }

    @Test
    void shouldCountASkippedArrivalAtTheMeanLengthIssued() {
        EchoClient neverAnswers = new EchoClient() {
            @Override
            public CompletableFuture<byte[]> call(int target, byte[] request) {
                return new CompletableFuture<>();
            }

            @Override
            public int targets() {
                return 1;
            }

            @Override
            public void close() {}
        };

        OpenLoop.Result result = new OpenLoop(neverAnswers, 0, u -> 2_000, 5_000, 1, 60_000, 7).run(0, 200, 0);

        assertThat(result.issuedInWindow()).isEqualTo(1);
        assertThat(result.skipped()).isPositive();
        assertThat(result.answeredBytesInWindow()).isZero();
        assertThat(result.offeredBytesInWindow()).isEqualTo(2_000L * (1 + result.skipped()));
    }
}
