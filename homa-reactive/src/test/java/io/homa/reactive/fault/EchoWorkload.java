package io.homa.reactive.fault;

import io.homa.reactive.HomaTransport;
import io.homa.workloads.Workload;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Echo RPCs with request lengths drawn from a workload CSV ({@code length_bytes,cumulative_fraction},
 * the W1-W5 files that homa-workloads ships), spread over several clients, with a bounded number in flight.
 */
final class EchoWorkload {
    private EchoWorkload() {}

    /**
     * Outcome of {@link #run}.
     *
     * @param rpcs RPCs issued
     * @param correct RPCs whose response equalled the request
     * @param failures one line per failed or wrong RPC
     * @param rttNs round-trip times of the correct RPCs, sorted ascending
     * @param elapsedNs wall time of the whole run
     */
    record Result(int rpcs, int correct, List<String> failures, long[] rttNs, long elapsedNs) {
        /** The {@code p}-quantile (0 < p <= 1) of the round-trip times in microseconds, or -1 if none. */
        long rttPercentileMicros(double p) {
            if (rttNs.length == 0) {
                return -1;
            }
            int index = (int) Math.ceil(p * rttNs.length) - 1;
            return rttNs[Math.max(0, Math.min(rttNs.length - 1, index))] / 1_000;
        }
    }

    /**
     * Draws {@code count} lengths: uniform u in [0,1), the first length whose cumulative fraction
     * is at least u, capped at {@code capBytes}.
     */
    static int[] sampleLengths(String workload, int count, long seed, int capBytes) {
        Workload distribution = Workload.load(workload, capBytes);
        Random random = new Random(seed);
        int[] lengths = new int[count];
        for (int i = 0; i < count; i++) {
            lengths[i] = distribution.sample(random);
        }
        return lengths;
    }

    /**
     * Sends {@code lengths.length} echo RPCs to {@code server}, RPC i from {@code clients[i % n]}
     * with {@code lengths[i]} random bytes, at most {@code concurrency} in flight.
     *
     * @param callTimeout guard per RPC on top of the engine's own timeout
     * @param totalTimeout the whole run fails with an exception beyond this
     */
    static Result run(List<HomaTransport> clients, InetSocketAddress server, int[] lengths, long seed,
            int concurrency, Duration callTimeout, Duration totalTimeout) {
        int rpcs = lengths.length;
        long[] rttNs = new long[rpcs];
        Arrays.fill(rttNs, -1);
        List<String> failures = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger correct = new AtomicInteger();
        long startNs = System.nanoTime();
        Flux.range(0, rpcs)
                .flatMap(i -> Mono.defer(() -> {
                    byte[] request = new byte[lengths[i]];
                    new Random(seed + i).nextBytes(request);
                    long sentNs = System.nanoTime();
                    return clients.get(i % clients.size()).call(server, request)
                            .timeout(callTimeout)
                            .doOnNext(response -> {
                                if (Arrays.equals(response, request)) {
                                    rttNs[i] = System.nanoTime() - sentNs;
                                    correct.incrementAndGet();
                                } else {
                                    failures.add("RPC " + i + " (" + request.length + " B): wrong response of "
                                            + response.length + " B");
                                }
                            })
                            .onErrorResume(e -> {
                                failures.add("RPC " + i + " (" + request.length + " B): " + e);
                                return Mono.empty();
                            });
                }), concurrency)
                .then()
                .block(totalTimeout);
        long elapsedNs = System.nanoTime() - startNs;
        long[] measured = Arrays.stream(rttNs).filter(t -> t >= 0).sorted().toArray();
        return new Result(rpcs, correct.get(), List.copyOf(failures), measured, elapsedNs);
    }
}
