package io.homa.demo.aggregator;

import io.homa.demo.DemoProperties;
import io.homa.demo.kv.KvShardClients;
import io.homa.demo.kv.KvShards;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.ExitCodeGenerator;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * {@code watch} mode: the aggregator in this JVM in front of remote shards, watched from its
 * caller's side. One thread per shard calls {@link AggregatorClient#put} for a key of that shard
 * through this application's endpoint, one call at a time, every {@value #INTERVAL_MS} ms, so each
 * call goes caller, aggregator, that shard and back. Printed, times in epoch seconds:
 * <ul>
 *   <li>{@code event <time> kv-<i> answering via <host:port>} when shard {@code i} answers for
 *       the first time or again after failures (with where its next call goes);</li>
 *   <li>{@code event <time> kv-<i> failing <STATUS>: <message>} when its calls start failing, and
 *       again whenever the failure changes (e.g. from the liveness timeout of a dead endpoint to
 *       "no instance" once the registry has dropped it); the status is the one the caller gets;</li>
 *   <li>{@code event <time> kv-<i> resolved <host:port>} or {@code resolved none: <STATUS>: <message>}
 *       when where shard {@code i}'s calls would go changes (looked up every {@value #INTERVAL_MS} ms
 *       apart from the calls, which wait for their answers: with discovery this shows when the
 *       registry drops a shard and when it lists it again);</li>
 *   <li>once a second, {@code watch <time>} and per shard its calls answered and failed in that
 *       second, and how long a call has been waiting, if one is.</li>
 * </ul>
 * Once every shard has answered, {@link KvDemo}'s figures (puts, get, scan, stats) are printed
 * and the watch goes on for {@code --duration}. Exit code 1 if not every shard answered within
 * {@link #START_TIMEOUT}, or the figures failed; failures while watching are what it is for and
 * do not count.
 */
@Component
@Order(1)
public class ShardWatch implements ApplicationRunner, ExitCodeGenerator {
    private static final Logger log = LoggerFactory.getLogger(ShardWatch.class);
    /** How often each shard is called, in milliseconds (one call at a time per shard). */
    public static final int INTERVAL_MS = 100;
    /** How long the watch waits for every shard to answer before it gives up. */
    static final Duration START_TIMEOUT = Duration.ofSeconds(120);
    /** The longest a watch thread waits for one call (the call's own deadline is shorter). */
    static final Duration CALL_WAIT = Duration.ofSeconds(60);

    private final AggregatorClient aggregator;
    private final KvShardClients shards;
    private final KvDemo figures;
    private final DemoProperties properties;
    private final PrintStream out;
    private final LongSupplier epochMillis;
    private volatile boolean failed;
    private volatile boolean stopped;
    private volatile List<Probe> probes = List.of();

    @Autowired
    public ShardWatch(AggregatorClient aggregator, KvShardClients shards, KvDemo figures, DemoProperties properties) {
        this(aggregator, shards, figures, properties, System.out, System::currentTimeMillis);
    }

    ShardWatch(AggregatorClient aggregator, KvShardClients shards, KvDemo figures, DemoProperties properties,
            PrintStream out, LongSupplier epochMillis) {
        this.aggregator = aggregator;
        this.shards = shards;
        this.figures = figures;
        this.properties = properties;
        this.out = out;
        this.epochMillis = epochMillis;
    }

    @Override
    public void run(ApplicationArguments args) {
        if (properties.mode() != DemoProperties.Mode.WATCH) {
            return;
        }
        int count = shards.count();
        out.printf(Locale.ROOT, "Watching %d shards through the aggregator in this application: put(key of the shard)"
                        + " every %d ms per shard, for %s once all answer; shards %s%n", count, INTERVAL_MS,
                format(properties.duration()), shards.discovers()
                        ? "found through Spring Cloud discovery and LoadBalancer (service kv-<i>)"
                        : "at homa.client.peers.kv-<i>");
        List<Probe> started = new ArrayList<>();
        for (int shard = 0; shard < count; shard++) {
            Probe probe = new Probe(shard, probeKey(shard, count));
            started.add(probe);
            Thread thread = new Thread(probe, "watch-" + KvShards.peerName(shard));
            thread.setDaemon(true);
            probe.thread = thread;
            thread.start();
        }
        probes = List.copyOf(started);
        Thread resolutions = new Thread(this::watchResolutions, "watch-resolutions");
        resolutions.setDaemon(true);
        resolutions.start();
        long startNs = System.nanoTime();
        long endNs = startNs + START_TIMEOUT.toNanos();
        boolean allAnswered = false;
        try {
            while (System.nanoTime() < endNs) {
                sleepMillis(1000);
                printSecond();
                if (!allAnswered && started.stream().allMatch(probe -> probe.everAnswered)) {
                    allAnswered = true;
                    out.printf(Locale.ROOT, "All %d shards answer, %.1f s after the watch started%n", count,
                            (System.nanoTime() - startNs) / 1e9);
                    runFigures();
                    endNs = System.nanoTime() + properties.duration().toNanos();
                }
            }
            if (!allAnswered) {
                failed = true;
                out.printf(Locale.ROOT, "Not every shard answered within %s: %s%n", format(START_TIMEOUT),
                        started.stream().filter(probe -> !probe.everAnswered)
                                .map(probe -> KvShards.peerName(probe.shard)).collect(Collectors.joining(", ")));
            }
        } finally {
            stop();
            resolutions.interrupt();
        }
        out.printf(Locale.ROOT, "Watch done: %s%n", started.stream()
                .map(probe -> String.format(Locale.ROOT, "%s %,d answered, %,d failed", KvShards.peerName(probe.shard),
                        probe.totalOk.get(), probe.totalFailed.get()))
                .collect(Collectors.joining("; ")));
    }

    private void runFigures() {
        try {
            figures.runDemo();
        } catch (RuntimeException e) {
            failed = true;
            out.printf(Locale.ROOT, "Key-value figures failed: %s%n", describe(e));
            log.debug("Key-value figures failed", e);
        }
    }

    private void printSecond() {
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "watch %.3f", epochMillis.getAsLong() / 1e3));
        for (Probe probe : probes) {
            long ok = probe.ok.getAndSet(0);
            long bad = probe.failedNow.getAndSet(0);
            line.append(String.format(Locale.ROOT, "  | %s %d ok, %d failed", KvShards.peerName(probe.shard), ok, bad));
            long callStartNs = probe.callStartNs;
            if (callStartNs != 0) {
                double waitingS = (System.nanoTime() - callStartNs) / 1e9;
                if (waitingS >= 0.5) {
                    line.append(String.format(Locale.ROOT, ", a call waiting %.1f s", waitingS));
                }
            }
        }
        out.println(line);
    }

    /** Looks up every shard every {@value #INTERVAL_MS} ms and prints where its calls would go when that changes. */
    private void watchResolutions() {
        String[] last = new String[shards.count()];
        while (!stopped) {
            for (int shard = 0; shard < last.length; shard++) {
                String now;
                try {
                    InetSocketAddress address = shards.resolve(shard).block(Duration.ofSeconds(5));
                    now = address == null ? "none" : address.getHostString() + ":" + address.getPort();
                } catch (RuntimeException e) {
                    now = "none: " + describe(e);
                }
                if (!now.equals(last[shard])) {
                    last[shard] = now;
                    out.printf(Locale.ROOT, "event %.3f %s resolved %s%n", epochMillis.getAsLong() / 1e3,
                            KvShards.peerName(shard), now);
                }
            }
            try {
                Thread.sleep(INTERVAL_MS);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Stops the watch threads (also when the application closes during the watch). */
    void stop() {
        stopped = true;
        for (Probe probe : probes) {
            Thread thread = probe.thread;
            if (thread != null) {
                thread.interrupt();
            }
        }
    }

    @Override
    public int getExitCode() {
        return failed ? 1 : 0;
    }

    /** The first key {@code probe-<j>} that lives on {@code shard} of {@code count}. */
    static String probeKey(int shard, int count) {
        for (int j = 0; ; j++) {
            String key = "probe-" + j;
            if (KvShards.shardOf(key, count) == shard) {
                return key;
            }
        }
    }

    /** {@code STATUS: message} of a failed call as its caller sees it. */
    static String describe(Throwable error) {
        if (error instanceof HomaRemoteException remote) {
            return remote.status() + ": " + remote.remoteMessage();
        }
        if (error instanceof HomaException homa) {
            return homa.status() + ": " + homa.getMessage();
        }
        return error.getClass().getSimpleName() + ": " + error.getMessage();
    }

    private static String format(Duration duration) {
        return duration.toMillis() % 1000 == 0 ? duration.toSeconds() + " s" : duration.toMillis() + " ms";
    }

    private static void sleepMillis(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Calls one shard's key in a loop. */
    private final class Probe implements Runnable {
        final int shard;
        final String key;
        final AtomicLong ok = new AtomicLong();
        final AtomicLong failedNow = new AtomicLong();
        final AtomicLong totalOk = new AtomicLong();
        final AtomicLong totalFailed = new AtomicLong();
        volatile long callStartNs;
        volatile boolean everAnswered;
        volatile Thread thread;
        private Boolean answering;
        private String lastFailure = "";

        Probe(int shard, String key) {
            this.shard = shard;
            this.key = key;
        }

        @Override
        public void run() {
            long n = 0;
            while (!stopped) {
                long startNs = System.nanoTime();
                callStartNs = startNs;
                try {
                    aggregator.put(key, "value-" + n++).block(CALL_WAIT);
                    callStartNs = 0;
                    answered();
                } catch (RuntimeException e) {
                    callStartNs = 0;
                    if (stopped) {
                        return;
                    }
                    failed(e);
                }
                long leftMs = INTERVAL_MS - (System.nanoTime() - startNs) / 1_000_000;
                if (leftMs > 0) {
                    try {
                        Thread.sleep(leftMs);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        }

        private void answered() {
            ok.incrementAndGet();
            totalOk.incrementAndGet();
            if (Boolean.TRUE.equals(answering)) {
                return;
            }
            long at = epochMillis.getAsLong();
            answering = true;
            everAnswered = true;
            lastFailure = "";
            String via;
            try {
                InetSocketAddress address = shards.resolve(shard).block(Duration.ofSeconds(5));
                via = address == null ? "?" : address.getHostString() + ":" + address.getPort();
            } catch (RuntimeException e) {
                via = "? (" + describe(e) + ")";
            }
            out.printf(Locale.ROOT, "event %.3f %s answering via %s%n", at / 1e3, KvShards.peerName(shard), via);
        }

        private void failed(RuntimeException error) {
            failedNow.incrementAndGet();
            totalFailed.incrementAndGet();
            String failure = describe(error);
            String kind = failure.replaceAll("[0-9]+", "#");
            if (Boolean.FALSE.equals(answering) && kind.equals(lastFailure)) {
                return;
            }
            answering = false;
            lastFailure = kind;
            out.printf(Locale.ROOT, "event %.3f %s failing %s%n", epochMillis.getAsLong() / 1e3,
                    KvShards.peerName(shard), failure);
        }
    }
}
