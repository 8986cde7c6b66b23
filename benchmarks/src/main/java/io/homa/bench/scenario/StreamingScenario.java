package io.homa.bench.scenario;

import io.homa.bench.cpu.CpuCost;
import io.homa.bench.cpu.CpuSampler;
import io.homa.bench.report.ScenarioResult;
import io.homa.bench.systems.EchoProtocol;
import io.homa.bench.systems.EchoStreams;
import io.homa.bench.systems.StreamProtocol;
import io.homa.bench.systems.SystemKind;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.SignalType;
import reactor.core.publisher.Sinks;

/**
 * S10, streaming: each system's own streams (Homa's RPC layer, gRPC, RSocket; {@link EchoStreams})
 * to the first server, in four parts:
 *
 * <ol>
 *   <li>a server stream of {@value #SMALL_BYTES}-byte items: items per second;
 *   <li>a server stream of {@value #LARGE_BYTES}-byte items: Gbit/s of payload;
 *   <li>a client stream of {@value #LARGE_BYTES}-byte chunks: Gbit/s of payload;
 *   <li>ping-pong over one open bidirectional stream: send a {@value #SMALL_BYTES}-byte item, wait
 *       for the server's echo of it, send the next; the time of each exchange.
 * </ol>
 *
 * <p>Each part is measured in {@link Plan#slices()} slices, the systems taking turns slice by
 * slice as S1-S4 do ({@link ScenarioRunner#interleave}); each slice opens one stream, runs it
 * unmeasured for a warm-up, then for the slice's window, then ends it (a server stream is
 * cancelled; a client stream's source completes and its answer is awaited; the bidirectional
 * stream's source completes after the last echo). A stream's consumer asks for items with
 * Reactor's {@code limitRate}: {@value #SMALL_PREFETCH} items of {@value #SMALL_BYTES} B,
 * {@value #LARGE_PREFETCH} of {@value #LARGE_BYTES} B (1 MiB, gRPC's default window); the ping-pong
 * consumer asks for one echo at a time.
 */
public final class StreamingScenario {
    /** Length of the small items (part 1) and of the ping-pong items (part 4). */
    public static final int SMALL_BYTES = 100;
    /** Length of the large items and chunks (parts 2 and 3). */
    public static final int LARGE_BYTES = 64 * 1024;
    /** Items of {@value #SMALL_BYTES} B a server stream's consumer asks for at a time. */
    public static final int SMALL_PREFETCH = 256;
    /** Items of {@value #LARGE_BYTES} B a server stream's consumer asks for at a time. */
    public static final int LARGE_PREFETCH = 16;
    /** Items a measured server stream asks for: more than any slice takes, so that it is cancelled, never finished. */
    static final long UNENDING = Long.MAX_VALUE / 2;
    /** Pause after a slice's stream ended, so that what it left in flight is not in the next slice's window. */
    static final long PAUSE_MS = 50;

    /** The four parts, with the key of each one's headline figure in {@code report.json}. */
    public enum Part {
        SERVER_STREAM_SMALL("items_per_s_100b"),
        SERVER_STREAM_LARGE("gbit_per_s_64kb_server"),
        CLIENT_STREAM_LARGE("gbit_per_s_64kb_client"),
        BIDI_PING_PONG("bidi_p50_us");

        private final String metric;

        Part(String metric) {
            this.metric = metric;
        }

        /** The headline figure's key. */
        public String metric() {
            return metric;
        }
    }

    /**
     * S10's durations.
     *
     * @param firstWarmupMs unmeasured time of a system's first slice of each part, on its stream
     * @param warmupMs unmeasured time of each later slice (the system is warm; only the stream is new)
     * @param sliceMs each slice's window
     * @param slices slices per part and system, &gt;= 1
     * @param endMs longest wait for a stream's end after its window (a client stream's answer, the
     *     last echo); a stream that has not ended by then is cancelled and counted as failed
     */
    public record Plan(long firstWarmupMs, long warmupMs, long sliceMs, int slices, long endMs) {
        public Plan {
            if (slices < 1) {
                throw new IllegalArgumentException("slices must be >= 1, was " + slices);
            }
        }

        /** Under a second per part and system: about 10 s for three systems. */
        public static Plan quick() {
            return new Plan(300, 100, 400, 1, 2_000);
        }

        /**
         * 10 s of window per part and system, in slices of 2 s, after 5 s on each part's first stream
         * (the JIT compiler is busy for several seconds when a part starts): about 70 s per system.
         */
        public static Plan full() {
            return new Plan(5_000, 200, 2_000, 5, 5_000);
        }

        /** The plan of a run mode ({@code quick} or {@code full}). */
        public static Plan of(String mode) {
            return "full".equals(mode) ? full() : quick();
        }
    }

    private final Plan plan;
    private final Function<SystemKind, List<CpuSampler.Target>> cpuSampled;

    public StreamingScenario(Plan plan) {
        this(plan, system -> List.of());
    }

    /**
     * @param cpuSampled by system, the client and its server, whose CPU time over each part's
     *     windows gives its CPU per item, per MiB or per exchange; empty: none
     */
    public StreamingScenario(Plan plan, Function<SystemKind, List<CpuSampler.Target>> cpuSampled) {
        this.plan = plan;
        this.cpuSampled = cpuSampled;
    }

    /** How S10 streams on each system, for the report. */
    public static String api(SystemKind system) {
        return switch (system) {
            case HOMA_RPC, HOMA_RPC_AUTH -> "RpcDispatcher methods: RpcMethod.stream (server), a Flux<byte[]> parameter"
                    + " returning Mono<Long> (client) or the Flux (bidirectional); HomaClient.stream and"
                    + " HomaClient.channel, JSON codec (byte[] raw)";
            case GRPC -> "server-, client- and bidirectional-streaming methods on the byte[] marshaller (ServerCalls,"
                    + " ClientCalls); the server sends while isReady(), the client's demand is request(n)";
            case GRPC_HOMA -> "grpc's streaming methods and client, unchanged, over HomaManagedChannel: the RPC layer's"
                    + " streams carry the messages, isReady() and request(n) map onto their window and demand";
            case RSOCKET -> "requestStream and requestChannel on the request-response connection";
            default -> "n/a";
        };
    }

    /** What one part measured for one system, over every slice run. */
    static final class Tally {
        /** CPU time over the windows, sampled at each one's start and end. */
        final CpuCost cpu;
        long items;
        long windowNs;
        int slices;
        long failedStreams;
        long badItems;
        @Nullable String firstError;
        final Histogram latency = LatencyStats.newHistogram();

        Tally() {
            this(List.of());
        }

        Tally(List<CpuSampler.Target> cpuSampled) {
            this.cpu = new CpuCost(cpuSampled);
        }

        void fail(String error) {
            failedStreams++;
            if (firstError == null) {
                firstError = error;
            }
        }
    }

    /**
     * S10 for several systems, the systems taking turns slice by slice.
     *
     * @param streams each system's streams, in the order of the first turn
     * @return each system's result
     */
    public Map<SystemKind, ScenarioResult> run(Map<SystemKind, EchoStreams> streams) {
        List<SystemKind> systems = new ArrayList<>(streams.keySet());
        Map<SystemKind, Map<Part, Tally>> tallies = new LinkedHashMap<>();
        Map<SystemKind, RuntimeException> crashes = new LinkedHashMap<>();
        for (SystemKind system : systems) {
            Map<Part, Tally> parts = new LinkedHashMap<>();
            List<CpuSampler.Target> sampled = cpuSampled.apply(system);
            for (Part part : Part.values()) {
                parts.put(part, new Tally(sampled));
            }
            tallies.put(system, parts);
        }
        int count = systems.size();
        for (Part part : Part.values()) {
            for (int slice = 0; slice < plan.slices(); slice++) {
                for (int i = 0; i < count; i++) {
                    SystemKind system = systems.get((i + slice) % count);
                    if (crashes.containsKey(system)) {
                        continue;
                    }
                    long warmupMs = slice == 0 ? plan.firstWarmupMs() : plan.warmupMs();
                    try {
                        slice(part, streams.get(system), warmupMs, tallies.get(system).get(part));
                    } catch (RuntimeException e) {
                        crashes.put(system, e);
                    }
                }
            }
        }
        Map<SystemKind, ScenarioResult> results = new LinkedHashMap<>();
        for (SystemKind system : systems) {
            RuntimeException crash = crashes.get(system);
            results.put(system, crash != null
                    ? ScenarioResult.failed(Scenario.S10.id(), system.id(), "crashed: " + crash)
                    : result(system, tallies.get(system)));
        }
        return results;
    }

    /** One slice of one part on one system's first server. */
    void slice(Part part, EchoStreams streams, long warmupMs, Tally tally) {
        switch (part) {
            case SERVER_STREAM_SMALL -> serverStream(streams, SMALL_BYTES, SMALL_PREFETCH, warmupMs, tally);
            case SERVER_STREAM_LARGE -> serverStream(streams, LARGE_BYTES, LARGE_PREFETCH, warmupMs, tally);
            case CLIENT_STREAM_LARGE -> upload(streams, warmupMs, tally);
            case BIDI_PING_PONG -> pingPong(streams, warmupMs, tally);
        }
        tally.slices++;
        ClosedLoop.sleepMs(PAUSE_MS);
    }

    /** Counts the items of one server stream over the window, then cancels it. */
    private void serverStream(EchoStreams streams, int itemBytes, int prefetch, long warmupMs, Tally tally) {
        AtomicLong received = new AtomicLong();
        AtomicLong bad = new AtomicLong();
        AtomicReference<String> ended = new AtomicReference<>();
        Disposable stream = streams.serverStream(0, itemBytes, UNENDING)
                .limitRate(prefetch)
                .subscribe(item -> {
                    if (item.length != itemBytes) {
                        bad.incrementAndGet();
                    }
                    received.lazySet(received.get() + 1); // one item at a time: no other writer
                }, error -> ended.compareAndSet(null, "failed: " + error), () -> ended.compareAndSet(null,
                        "completed before its window ended"));
        try {
            window(tally, warmupMs, received::get, recording -> {});
            tally.badItems += bad.get();
            if (ended.get() != null) {
                tally.fail("server stream of " + itemBytes + " B items " + ended.get());
            }
        } finally {
            stream.dispose();
        }
    }

    /** Sends chunks for the window, then ends the stream and checks the server's total. */
    private void upload(EchoStreams streams, long warmupMs, Tally tally) {
        byte[] chunk = StreamProtocol.item(LARGE_BYTES);
        AtomicLong taken = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        Flux<byte[]> source = Flux.generate(sink -> {
            if (stop.get()) {
                sink.complete();
            } else {
                taken.lazySet(taken.get() + 1); // the system pulls one item at a time
                sink.next(chunk);
            }
        });
        CompletableFuture<Long> answer = streams.upload(0, source).toFuture();
        try {
            window(tally, warmupMs, taken::get, recording -> {});
            stop.set(true);
            Long total = answer.get(plan.endMs(), TimeUnit.MILLISECONDS);
            if (total == null || total != taken.get() * LARGE_BYTES) {
                tally.badItems++;
                tally.fail("client stream: the server counted " + total + " bytes, the client sent "
                        + taken.get() * LARGE_BYTES);
            }
        } catch (TimeoutException e) {
            tally.fail("client stream: no answer within " + plan.endMs() + " ms after its source completed");
        } catch (ExecutionException e) {
            tally.fail("client stream failed: " + e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } finally {
            stop.set(true);
            answer.cancel(true);
        }
    }

    /**
     * One slice's measurement: the warm-up unmeasured, then the window, over which the items
     * {@code count} counts and the CPU of client and server are added to {@code tally};
     * {@code recording} is told when the window opens and closes.
     */
    private void window(Tally tally, long warmupMs, java.util.function.LongSupplier count,
                        java.util.function.Consumer<Boolean> recording) {
        ClosedLoop.sleepMs(warmupMs);
        tally.cpu.start();
        long startNs = System.nanoTime();
        long before = count.getAsLong();
        recording.accept(true);
        ClosedLoop.sleepMs(plan.sliceMs());
        recording.accept(false);
        long after = count.getAsLong();
        long endNs = System.nanoTime();
        tally.cpu.stop();
        tally.items += after - before;
        tally.windowNs += endNs - startNs;
    }

    /** Ping-pong over one bidirectional stream: each exchange timed, those that end in the window recorded. */
    private void pingPong(EchoStreams streams, long warmupMs, Tally tally) {
        PingPong pingPong = new PingPong(EchoProtocol.echoRequest(SMALL_BYTES), tally.latency);
        streams.echo(0, pingPong.items()).subscribe(pingPong);
        try {
            window(tally, warmupMs, pingPong::exchanges, recording -> pingPong.recording = recording);
            pingPong.stop = true;
            if (!pingPong.awaitEnd(plan.endMs())) {
                tally.fail("bidirectional stream: not ended within " + plan.endMs() + " ms of its window");
            } else if (pingPong.error != null) {
                tally.fail("bidirectional stream failed: " + pingPong.error);
            }
            tally.badItems += pingPong.mismatches;
        } finally {
            pingPong.dispose();
        }
    }

    /**
     * The ping-pong's consumer: asks for one echo, sends one item, and on each echo sends the next
     * (from the thread that delivered the echo, as an application reacting to it would). After
     * {@link #stop} it completes its source and waits for the stream to end.
     */
    static final class PingPong extends BaseSubscriber<byte[]> {
        private final byte[] item;
        private final Histogram latency;
        private final Sinks.Many<byte[]> source = Sinks.many().unicast().onBackpressureBuffer();
        private final CountDownLatch ended = new CountDownLatch(1);
        private volatile long sentNs;
        private volatile long exchanges;
        volatile boolean recording;
        volatile boolean stop;
        volatile @Nullable Throwable error;
        volatile long mismatches;

        PingPong(byte[] item, Histogram latency) {
            this.item = item;
            this.latency = latency;
        }

        Flux<byte[]> items() {
            return source.asFlux();
        }

        long exchanges() {
            return exchanges;
        }

        @Override
        protected void hookOnSubscribe(Subscription subscription) {
            subscription.request(1);
            send();
        }

        @Override
        protected void hookOnNext(byte[] echo) {
            long rttNs = System.nanoTime() - sentNs;
            if (!Arrays.equals(echo, item)) {
                mismatches++;
            }
            if (recording) {
                synchronized (latency) {
                    LatencyStats.record(latency, rttNs);
                }
            }
            exchanges++;
            if (stop) {
                source.tryEmitComplete();
                // Demand for the end: a stream may hold back its completion until its subscriber
                // asks for more (Homa's RPC layer fetches the end, like items, in a batch RPC).
                request(1);
            } else {
                request(1);
                send();
            }
        }

        private void send() {
            sentNs = System.nanoTime();
            Sinks.EmitResult result = source.tryEmitNext(item);
            if (result.isFailure()) {
                error = new IllegalStateException("could not send the next item: " + result);
                source.tryEmitComplete();
            }
        }

        @Override
        protected void hookOnError(Throwable throwable) {
            error = throwable;
        }

        @Override
        protected void hookFinally(SignalType type) {
            ended.countDown();
        }

        boolean awaitEnd(long timeoutMs) {
            try {
                return ended.await(timeoutMs, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }

    /** One system's figures from its four tallies. */
    static ScenarioResult result(SystemKind system, Map<Part, Tally> tallies) {
        Map<String, Object> metrics = new LinkedHashMap<>();
        metrics.put("api", api(system));
        Tally small = tallies.get(Part.SERVER_STREAM_SMALL);
        Tally server = tallies.get(Part.SERVER_STREAM_LARGE);
        Tally client = tallies.get(Part.CLIENT_STREAM_LARGE);
        Tally bidi = tallies.get(Part.BIDI_PING_PONG);
        metrics.put("items_per_s_100b", Math.round(perSecond(small.items, small.windowNs)));
        metrics.put("gbit_per_s_64kb_server", gbps(server.items, server.windowNs));
        metrics.put("gbit_per_s_64kb_client", gbps(client.items, client.windowNs));
        synchronized (bidi.latency) {
            metrics.putAll(LatencyStats.summary(bidi.latency, "bidi_"));
        }
        metrics.put("bidi_exchanges_per_s", Math.round(perSecond(bidi.items, bidi.windowNs)));
        metrics.put("items_100b", small.items);
        metrics.put("items_64kb_server", server.items);
        metrics.put("chunks_64kb_client", client.items);
        metrics.put("prefetch_100b", SMALL_PREFETCH);
        metrics.put("prefetch_64kb", LARGE_PREFETCH);
        metrics.put("upload_prefetch_64kb", StreamProtocol.UPLOAD_PREFETCH);
        metrics.put("window_s", Math.round(small.windowNs / 1e7) / 100.0);
        metrics.put("slices", small.slices);
        Map<String, Object> cpu = cpuByPart(tallies);
        if (!cpu.isEmpty()) {
            metrics.put("cpu_by_part", cpu);
        }
        long failed = 0;
        long bad = 0;
        List<String> notes = new ArrayList<>();
        List<String> empty = new ArrayList<>();
        for (Map.Entry<Part, Tally> entry : tallies.entrySet()) {
            Tally tally = entry.getValue();
            failed += tally.failedStreams;
            bad += tally.badItems;
            if (tally.firstError != null) {
                notes.add(tally.failedStreams + " failed stream(s) in " + entry.getKey().metric() + ", first: "
                        + tally.firstError);
            }
            if (tally.items == 0) {
                empty.add(entry.getKey().metric());
            }
        }
        metrics.put("failed_streams", failed);
        metrics.put("bad_items", bad);
        String note = String.join("; ", notes);
        if (!empty.isEmpty() || bad > 0) {
            String why = (!empty.isEmpty() ? "nothing arrived in the window of " + String.join(", ", empty) : "")
                    + (bad > 0 ? (empty.isEmpty() ? "" : "; ") + bad + " items or totals with the wrong bytes" : "");
            return new ScenarioResult(Scenario.S10.id(), system.id(), ScenarioResult.FAILED,
                    why + (note.isEmpty() ? "" : "; " + note), metrics);
        }
        return ScenarioResult.ok(Scenario.S10.id(), system.id(), note, metrics);
    }

    /** The key of each part's CPU figures in {@code cpu_by_part}. */
    static String cpuKey(Part part) {
        return switch (part) {
            case SERVER_STREAM_SMALL -> "server_stream_100b";
            case SERVER_STREAM_LARGE -> "server_stream_64kb";
            case CLIENT_STREAM_LARGE -> "client_stream_64kb";
            case BIDI_PING_PONG -> "bidi_ping_pong";
        };
    }

    /**
     * Each part's CPU over its windows: per item of 100 B ({@code cpu_us_per_call_*}), per MiB of
     * 64 KiB items or chunks ({@code cpu_us_per_mib_*}), per ping-pong exchange
     * ({@code cpu_us_per_call_*}); the parts not sampled are left out.
     */
    static Map<String, Object> cpuByPart(Map<Part, Tally> tallies) {
        Map<String, Object> byPart = new LinkedHashMap<>();
        tallies.forEach((part, tally) -> {
            Map<String, Object> figures = part == Part.SERVER_STREAM_LARGE || part == Part.CLIENT_STREAM_LARGE
                    ? tally.cpu.perMib(tally.items * (double) LARGE_BYTES)
                    : tally.cpu.perCall(tally.items);
            if (!figures.isEmpty()) {
                byPart.put(cpuKey(part), figures);
            }
        });
        return byPart;
    }

    private static double perSecond(long count, long ns) {
        return ns <= 0 ? 0 : count / (ns / 1e9);
    }

    private static double gbps(long chunks, long ns) {
        return ns <= 0 ? 0 : Math.round(chunks * (double) LARGE_BYTES * 8 / ns * 1000) / 1000.0;
    }

    /** A short summary of an S10 result for the progress log. */
    public static String summary(ScenarioResult result) {
        return String.format(Locale.ROOT, "%,.0f items/s of 100 B; 64 KiB: server %.3f Gbit/s, client %.3f Gbit/s;"
                        + " bidi p50 %.1f µs, p99 %.1f µs", result.number("items_per_s_100b"),
                result.number("gbit_per_s_64kb_server"), result.number("gbit_per_s_64kb_client"),
                result.number("bidi_p50_us"), result.number("bidi_p99_us"));
    }
}
