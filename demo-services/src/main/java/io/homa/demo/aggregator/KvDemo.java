package io.homa.demo.aggregator;

import io.homa.demo.DemoProperties;
import io.homa.demo.kv.KvRecord;
import io.homa.demo.kv.KvShardServers;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.ExitCodeGenerator;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;

/**
 * The key-value section of the demo's output, after the greeting and before the workload (in
 * {@code local} mode against this JVM's aggregator and shards, in {@code client} mode against the
 * {@code --mode=server} demo's aggregator): puts {@value #KEYS} keys through the
 * {@link AggregatorClient}, reads one back, asks for a missing one (NOT_FOUND), scans a range
 * merged from all shards and runs the aggregated query, printing the figures. In {@code local}
 * mode a failure makes the exit code 1; in {@code client} mode it is only logged (the server may
 * run an older demo).
 */
@Component
@Order(0)
public class KvDemo implements ApplicationRunner, ExitCodeGenerator {
    private static final Logger log = LoggerFactory.getLogger(KvDemo.class);
    /** Keys the demo puts: {@code key-000} .. {@code key-099}. */
    public static final int KEYS = 100;
    /** Puts kept outstanding at once. */
    static final int PUT_CONCURRENCY = 16;
    static final Duration TIMEOUT = Duration.ofSeconds(30);
    static final String MISSING_KEY = "no-such-key";
    static final int SCAN_FROM = 90;
    static final int SCAN_LIMIT = 5;

    private final AggregatorClient aggregator;
    private final KvShardServers shardServers;
    private final DemoProperties properties;
    private final PrintStream out;
    private volatile AggregateStats stats;
    private volatile List<KvRecord> scanned;
    private volatile boolean failed;

    @Autowired
    public KvDemo(AggregatorClient aggregator, KvShardServers shardServers, DemoProperties properties) {
        this(aggregator, shardServers, properties, System.out);
    }

    KvDemo(AggregatorClient aggregator, KvShardServers shardServers, DemoProperties properties, PrintStream out) {
        this.aggregator = aggregator;
        this.shardServers = shardServers;
        this.properties = properties;
        this.out = out;
    }

    @Override
    public void run(ApplicationArguments args) {
        if (properties.mode() != DemoProperties.Mode.LOCAL && properties.mode() != DemoProperties.Mode.CLIENT) {
            return;
        }
        try {
            runDemo();
        } catch (RuntimeException e) {
            failed = properties.mode() == DemoProperties.Mode.LOCAL;
            log.warn("Key-value demo failed: {}", e.toString());
            log.debug("Key-value demo failure", e);
        }
    }

    /**
     * Puts, gets, scans and aggregates through the aggregator and prints the figures.
     *
     * @throws RuntimeException the first call's failure (e.g. a {@code HomaRemoteException})
     */
    void runDemo() {
        Map<Integer, InetSocketAddress> local = shardServers.addresses();
        out.printf(Locale.ROOT, "Key-value demo: %s, aggregator %s%n",
                local.isEmpty() ? "shards behind the aggregator" : local.size() + " shards (" + local.entrySet().stream()
                        .map(e -> "kv-" + e.getKey() + " " + e.getValue().getHostString() + ":" + e.getValue().getPort()).collect(Collectors.joining(", ")) + ")",
                properties.mode() == DemoProperties.Mode.CLIENT ? "of the --peer host" : "in this application");

        long startNs = System.nanoTime();
        Long puts = Flux.range(0, KEYS)
                .flatMap(i -> aggregator.put(key(i), value(i)).thenReturn(i), PUT_CONCURRENCY)
                .count()
                .block(TIMEOUT);
        double putMs = (System.nanoTime() - startNs) / 1e6;

        String sampleKey = key(42);
        String value = aggregator.get(sampleKey).block(TIMEOUT);
        if (!value(42).equals(value)) {
            throw new IllegalStateException("get(" + sampleKey + ") returned '" + value + "', not '" + value(42) + "'");
        }
        String missing;
        try {
            aggregator.get(MISSING_KEY).block(TIMEOUT);
            throw new IllegalStateException("get(" + MISSING_KEY + ") found a value");
        } catch (HomaRemoteException e) {
            if (e.status() != HomaStatus.NOT_FOUND) {
                throw e;
            }
            missing = e.status() + " (" + simpleName(e.remoteType()) + ": " + e.remoteMessage() + ")";
        }

        startNs = System.nanoTime();
        List<KvRecord> records = aggregator.scan(key(SCAN_FROM), SCAN_LIMIT).collectList().block(TIMEOUT);
        double scanMs = (System.nanoTime() - startNs) / 1e6;
        scanned = records;

        startNs = System.nanoTime();
        AggregateStats answer = aggregator.stats("key-").block(TIMEOUT);
        double statsMs = (System.nanoTime() - startNs) / 1e6;
        stats = answer;

        out.printf(Locale.ROOT, "Put %d keys through the aggregator (%d outstanding) in %.1f ms; keys per shard: %s%n",
                puts, PUT_CONCURRENCY, putMs, answer.shards().stream()
                        .map(s -> "kv-" + s.shard() + " " + s.keys()).collect(Collectors.joining(", ")));
        out.printf(Locale.ROOT, "get(%s) = %s; get(%s) -> %s%n", sampleKey, value, MISSING_KEY, missing);
        out.printf(Locale.ROOT, "scan(from %s, limit %d), merged from %d shard streams in %.1f ms: %d records, %s%n",
                key(SCAN_FROM), SCAN_LIMIT, answer.shards().size(), scanMs, records.size(),
                records.stream().map(KvRecord::key).collect(Collectors.joining(", ")));
        out.printf(Locale.ROOT, "Aggregated stats(prefix \"key-\") over %d shards: %d keys, %d value characters,"
                        + " in %.1f ms (fan-out at the aggregator %.1f ms)%n",
                answer.shards().size(), answer.keys(), answer.valueChars(), statsMs, answer.fanOutMicros() / 1e3);
    }

    /** The aggregated query's answer, once the demo has run; else {@code null}. */
    public AggregateStats stats() {
        return stats;
    }

    /** The scanned records, once the demo has run; else {@code null}. */
    public List<KvRecord> scanned() {
        return scanned;
    }

    @Override
    public int getExitCode() {
        return failed ? 1 : 0;
    }

    static String key(int i) {
        return String.format(Locale.ROOT, "key-%03d", i);
    }

    static String value(int i) {
        return String.format(Locale.ROOT, "value-%03d", i);
    }

    private static String simpleName(String className) {
        return className == null ? "?" : className.substring(className.lastIndexOf('.') + 1);
    }
}
