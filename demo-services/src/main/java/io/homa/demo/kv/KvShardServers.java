package io.homa.demo.kv;

import io.homa.demo.DemoProperties;
import io.homa.demo.kv.shard.KvShardApplication;
import io.homa.spring.HomaProperties;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.ApplicationArguments;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * The key-value shards that run in this JVM. In {@code local} and {@code server} mode, each shard
 * {@code i} in {@code 0..--kv-shards-1} that has no {@code homa.client.peers.kv-<i>} entry is
 * started as a {@link KvShardApplication} (a Spring Boot application of its own with its own Homa
 * endpoint on a free loopback port) when this application starts, and closed when it stops. In
 * {@code client} and {@code hol} mode none runs here: the aggregator is remote, or not used.
 *
 * <p>The shards get this application's {@code --homa.protocol.*} and {@code --homa.transport.*}
 * command-line settings, so both ends of every call use the same protocol settings.
 */
@Component
public class KvShardServers implements SmartLifecycle {
    private static final Logger log = LoggerFactory.getLogger(KvShardServers.class);
    private static final String LOOPBACK = "127.0.0.1";

    private final DemoProperties demoProperties;
    private final HomaProperties homaProperties;
    private final List<String> passedArgs;
    private final Map<Integer, ConfigurableApplicationContext> shards = Collections.synchronizedMap(new LinkedHashMap<>());
    private volatile Map<Integer, InetSocketAddress> addresses = Map.of();
    private volatile boolean running;

    /**
     * @param demoProperties the demo's arguments (mode, {@code --kv-shards})
     * @param homaProperties this application's {@code homa.*} settings ({@code homa.client.peers})
     * @param arguments this application's command line, when it was started by {@code SpringApplication}
     */
    public KvShardServers(DemoProperties demoProperties, HomaProperties homaProperties,
            ObjectProvider<ApplicationArguments> arguments) {
        this.demoProperties = demoProperties;
        this.homaProperties = homaProperties;
        ApplicationArguments args = arguments.getIfAvailable();
        this.passedArgs = args == null ? List.of() : Arrays.stream(args.getSourceArgs())
                .filter(arg -> arg.startsWith("--homa.protocol.") || arg.startsWith("--homa.transport."))
                .toList();
    }

    /** Whether shards run in this JVM in the demo's mode ({@code local} and {@code server}). */
    public boolean runsShards() {
        return demoProperties.mode() == DemoProperties.Mode.LOCAL || demoProperties.mode() == DemoProperties.Mode.SERVER;
    }

    @Override
    public void start() {
        running = true;
        if (!runsShards()) {
            return;
        }
        long startNs = System.nanoTime();
        Map<Integer, InetSocketAddress> bound = new LinkedHashMap<>();
        try {
            for (int shard = 0; shard < demoProperties.kvShards(); shard++) {
                if (homaProperties.getClient().getPeers().containsKey(KvShards.peerName(shard))) {
                    continue; // configured: runs elsewhere
                }
                ConfigurableApplicationContext context = KvShardApplication.start(shard, LOOPBACK, passedArgs);
                shards.put(shard, context);
                bound.put(shard, KvShardApplication.localAddress(context));
            }
        } catch (RuntimeException e) {
            closeShards();
            throw new IllegalStateException("starting the in-process key-value shards failed: " + e.getMessage(), e);
        }
        addresses = Map.copyOf(bound);
        log.debug("Started {} key-value shards in {} ms: {}", bound.size(),
                (System.nanoTime() - startNs) / 1_000_000, bound);
    }

    @Override
    public void stop() {
        closeShards();
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /**
     * The endpoint of in-process shard {@code shard}, or {@code null} if that shard does not run in
     * this JVM (configured elsewhere, out of range, or not started).
     */
    public InetSocketAddress address(int shard) {
        return addresses.get(shard);
    }

    /** Shard index to endpoint of the shards that run in this JVM, in index order. */
    public Map<Integer, InetSocketAddress> addresses() {
        Map<Integer, InetSocketAddress> sorted = new LinkedHashMap<>();
        addresses.keySet().stream().sorted().forEach(shard -> sorted.put(shard, addresses.get(shard)));
        return Collections.unmodifiableMap(sorted);
    }

    private void closeShards() {
        List<ConfigurableApplicationContext> running;
        synchronized (shards) {
            running = new ArrayList<>(shards.values());
            shards.clear();
        }
        addresses = Map.of();
        for (ConfigurableApplicationContext context : running) {
            try {
                context.close();
            } catch (RuntimeException e) {
                log.warn("Closing a key-value shard failed: {}", e.toString());
            }
        }
    }
}
