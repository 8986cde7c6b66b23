package io.homa.demo.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.workloads.Workload;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

class LoadGeneratorTest {

    private final Workload w1 = Workload.load("w1");
    private final ByteArrayOutputStream output = new ByteArrayOutputStream();
    private final PrintStream out = new PrintStream(output, true, StandardCharsets.UTF_8);

    /** An echo on another thread that copies the bytes, as a network would. */
    private static final Function<byte[], Mono<byte[]>> ECHO =
            request -> Mono.fromCallable(request::clone).subscribeOn(Schedulers.parallel());

    @Test
    void shouldKeepRpcsOutstandingAndRecordEachSuccessfulEcho() {
        LoadGenerator generator = new LoadGenerator(ECHO, w1, 1, Duration.ofSeconds(1), out);
        UnloadedRtt unloaded = generator.measureUnloaded(UnloadedRtt.probeLengths(w1), 3);

        WorkloadResult result = generator.run(Duration.ofMillis(1200), 4, unloaded);

        assertThat(result.completedRpcs()).isPositive();
        assertThat(result.failedRpcs()).isZero();
        assertThat(generator.failedRpcs()).isZero();
        assertThat(result.rows()).hasSize(10);
        assertThat(result.rows().stream().mapToLong(DecileTable.Row::count).sum()).isEqualTo(result.completedRpcs());
        assertThat(result.bytes()).isGreaterThanOrEqualTo(2 * 8 * result.completedRpcs());
        assertThat(result.elapsedNs()).isGreaterThanOrEqualTo(Duration.ofMillis(1200).toNanos());
        assertThat(result.rpcsPerSecond()).isPositive();
        assertThat(output.toString(StandardCharsets.UTF_8))
                .containsPattern("^ +1\\.\\d s +[\\d,]+ RPCs +[\\d,]+ RPCs/s +0 failures\\R");
        assertThat(result.report()).contains("Workload w1, 4 outstanding RPCs").contains("0 failed RPCs");
    }

    @Test
    void shouldCountResponsesThatDifferFromTheRequestAsFailures() {
        AtomicInteger calls = new AtomicInteger();
        Function<byte[], Mono<byte[]>> corruptEveryThird = request -> {
            byte[] response = request.clone();
            if (calls.incrementAndGet() % 3 == 0) {
                response[response.length - 1] ^= 1;
            }
            return Mono.just(response);
        };
        LoadGenerator generator = new LoadGenerator(corruptEveryThird, w1, 1, Duration.ofSeconds(1), out);

        WorkloadResult result = generator.run(Duration.ofMillis(200), 2, new UnloadedRtt(new int[] {8}, new long[] {1000}));

        long total = result.completedRpcs() + result.failedRpcs();
        assertThat(result.failedRpcs()).isBetween(total / 3 - 2, total / 3 + 2);
        assertThat(generator.firstFailure()).contains("response differs from the request");
    }

    @Test
    void shouldCountErrorsEmptyResponsesWrongLengthsAndTimeoutsAsFailures() {
        AtomicInteger calls = new AtomicInteger();
        Function<byte[], Mono<byte[]>> misbehaving = request -> switch (calls.getAndIncrement()) {
            case 0 -> Mono.error(new IllegalStateException("boom"));
            case 1 -> Mono.empty();
            case 2 -> Mono.just(new byte[request.length + 1]);
            case 3 -> Mono.never();
            case 4 -> throw new UnsupportedOperationException("stub");
            default -> Mono.just(request.clone());
        };
        LoadGenerator generator = new LoadGenerator(misbehaving, w1, 1, Duration.ofMillis(50), out);

        UnloadedRtt unloaded = generator.measureUnloaded(new int[] {100}, 6);

        assertThat(generator.failedRpcs()).isEqualTo(5);
        assertThat(generator.firstFailure()).contains("boom");
        assertThat(unloaded.probeRttNs(0)).isPositive();
    }

    @Test
    void shouldFailTheProbeWhenEveryRpcOfALengthFails() {
        LoadGenerator generator = new LoadGenerator(
                request -> Mono.error(new IllegalStateException("unreachable")), w1, 1, Duration.ofSeconds(1), out);

        assertThatThrownBy(() -> generator.measureUnloaded(new int[] {8, 100}, 2))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("probe of 8 bytes")
                .hasMessageContaining("unreachable");
    }

    @Test
    void shouldBuildReproducibleRequestsStampedWithTheirSequenceNumber() {
        LoadGenerator first = new LoadGenerator(ECHO, w1, 5, Duration.ofSeconds(1), out);
        LoadGenerator second = new LoadGenerator(ECHO, w1, 5, Duration.ofSeconds(1), out);

        byte[] request = first.request(258, 1000);

        assertThat(request).isEqualTo(second.request(258, 1000));
        assertThat(request[0]).isEqualTo((byte) 2);
        assertThat(request[1]).isEqualTo((byte) 1);
        assertThat(first.matches(258, 1000, request)).isTrue();
        assertThat(first.matches(259, 1000, request)).isFalse();
        assertThat(first.matches(258, 1000, java.util.Arrays.copyOf(request, 999))).isFalse();
        assertThat(first.request(3, 3)).containsExactly(3, 0, 0);
        assertThat(first.request(7, Workload.DEFAULT_CAP_BYTES)).hasSize(Workload.DEFAULT_CAP_BYTES);
    }

    @Test
    void shouldWarmUpForTheGivenTime() {
        LoadGenerator generator = new LoadGenerator(ECHO, w1, 1, Duration.ofSeconds(1), out);
        long startNs = System.nanoTime();

        long rpcs = generator.warmUp(Duration.ofMillis(100), 3);

        assertThat(rpcs).isPositive();
        assertThat(System.nanoTime() - startNs).isGreaterThanOrEqualTo(Duration.ofMillis(100).toNanos());
        assertThat(generator.failedRpcs()).isZero();
    }
}
