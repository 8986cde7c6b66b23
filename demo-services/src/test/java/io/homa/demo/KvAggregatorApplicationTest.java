package io.homa.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.demo.aggregator.AggregateStats;
import io.homa.demo.aggregator.AggregatorClient;
import io.homa.demo.aggregator.ShardStats;
import io.homa.demo.kv.KeyNotFoundException;
import io.homa.demo.kv.KvClient;
import io.homa.demo.kv.KvRecord;
import io.homa.demo.kv.KvShardClients;
import io.homa.demo.kv.KvShardServers;
import io.homa.demo.kv.KvShards;
import io.homa.demo.kv.KvStats;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTransport;
import io.homa.spring.LocalHomaPort;
import io.homa.spring.test.AutoConfigureHomaTest;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/**
 * The demo's key-value and aggregator services end to end over loopback UDP: the application as
 * {@code --mode=server} runs it (aggregator on its own endpoint, three key-value shards in this
 * JVM, each a Spring application with its own Homa endpoint), called through the declarative
 * clients {@link KvClient} (one per shard, from {@link KvShardClients}) and {@link AggregatorClient}.
 * {@link AutoConfigureHomaTest @AutoConfigureHomaTest} puts the application's endpoint on a free
 * loopback port instead of server mode's 4001, and sends the calls of its clients of the services
 * it exports ({@link AggregatorClient}, the {@link KvClient} bean) there.
 */
@SpringBootTest(classes = DemoApplication.class,
        args = {"--mode=server", "--port=0", "--kv-shards=" + KvAggregatorApplicationTest.SHARDS})
@AutoConfigureHomaTest
@DirtiesContext
class KvAggregatorApplicationTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    static final int SHARDS = 3;

    @Autowired
    private KvShardClients shards;
    @Autowired
    private AggregatorClient aggregator;
    @Autowired
    private KvShardServers shardServers;
    @Autowired
    private KvClient kvClient;
    @Autowired
    private HomaTransport transport;
    @LocalHomaPort
    private int homaPort;

    @Test
    void shouldRunEachShardOnItsOwnEndpoint() {
        Map<Integer, InetSocketAddress> addresses = shardServers.addresses();
        InetSocketAddress own = transport.localAddress();

        assertThat(own).isEqualTo(new InetSocketAddress("127.0.0.1", homaPort));
        assertThat(addresses).containsOnlyKeys(0, 1, 2);
        assertThat(new HashSet<>(addresses.values())).hasSize(SHARDS).doesNotContain(own);
        assertThat(shards.count()).isEqualTo(SHARDS);
    }

    @Test
    void shouldKeepTheDemosLoggingOnWhileItsShardsRunInThisJvm() {
        // A shard's own SpringApplication once ran Spring Cloud's LoggingSystemShutdownListener,
        // which suppressed every later log line of the demo (e.g. server mode's "listening" line).
        assertThat(shardServers.addresses()).hasSize(SHARDS);
        assertThat(LoggerFactory.getLogger(DemoRunner.class).isInfoEnabled()).isTrue();
        assertThat(LoggerFactory.getLogger(DemoRunner.class).isWarnEnabled()).isTrue();
    }

    @Test
    void shouldPutGetAndScanOnTheChosenShardThroughTheDeclarativeClient() {
        shards.shard(1).put("direct-b", "B").block(TIMEOUT);
        shards.shard(1).put("direct-a", "A").block(TIMEOUT);
        shards.shard(1).put("direct-c", "C").block(TIMEOUT);

        assertThat(shards.shard(1).get("direct-a").block(TIMEOUT)).isEqualTo("A");
        StepVerifier.create(shards.shard(1).scan("direct-", 2))
                .expectNext(new KvRecord("direct-a", "A"), new KvRecord("direct-b", "B"))
                .expectComplete()
                .verify(TIMEOUT);
        assertThat(shards.shard(1).stats("direct-").block(TIMEOUT)).isEqualTo(new KvStats(3, 3));
        assertThat(shards.shard(0).stats("direct-").block(TIMEOUT))
                .as("another shard is another store").isEqualTo(new KvStats(0, 0));
    }

    @Test
    void shouldReportAMissingKeyAsNotFoundWithTheRemoteExceptionType() {
        shards.shard(2).put("only-on-2", "x").block(TIMEOUT);

        assertThatThrownBy(() -> shards.shard(0).get("only-on-2").block(TIMEOUT))
                .isInstanceOfSatisfying(HomaRemoteException.class, e -> {
                    assertThat(e.status()).isEqualTo(HomaStatus.NOT_FOUND);
                    assertThat(e.remoteMessage()).isEqualTo("no value for key 'only-on-2'");
                    assertThat(e.remoteType()).isEqualTo(KeyNotFoundException.class.getName());
                });
    }

    @Test
    void shouldCarryInvalidArgument() {
        assertThatThrownBy(() -> shards.shard(0).get("").block(TIMEOUT))
                .isInstanceOfSatisfying(HomaRemoteException.class,
                        e -> assertThat(e.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT));
    }

    @Test
    void shouldCallThisApplicationsOwnStoreThroughThePlainKvClientWithoutAPeer() {
        // Every demo endpoint exports a store of its own (none of the shards); @AutoConfigureHomaTest
        // sends the KvClient bean's calls there, with no homa.client.peers.kv entry.
        kvClient.put("own-store", "x").block(TIMEOUT);

        assertThat(kvClient.get("own-store").block(TIMEOUT)).isEqualTo("x");
        for (int shard = 0; shard < SHARDS; shard++) {
            assertThat(shards.shard(shard).stats("own-store").block(TIMEOUT)).as("shard %d", shard)
                    .isEqualTo(new KvStats(0, 0));
        }
    }

    @Test
    void shouldFanOutToEveryShardAndMergeTheirAnswers() {
        List<String> keys = IntStream.range(0, 60).mapToObj(i -> String.format(Locale.ROOT, "agg-%02d", i)).toList();
        Flux.fromIterable(keys).flatMap(key -> aggregator.put(key, "v" + key), 8).blockLast(TIMEOUT);

        AggregateStats stats = aggregator.stats("agg-").block(TIMEOUT);
        assertThat(stats.keys()).isEqualTo(60);
        assertThat(stats.valueChars()).isEqualTo(60 * 7);
        assertThat(stats.shards()).extracting(ShardStats::shard).containsExactly(0, 1, 2);
        for (ShardStats shard : stats.shards()) {
            KvStats direct = shards.shard(shard.shard()).stats("agg-").block(TIMEOUT);
            assertThat(shard.keys()).as("shard %d holds its share", shard.shard())
                    .isPositive().isEqualTo(direct.keys());
            long expected = keys.stream().filter(key -> KvShards.shardOf(key, SHARDS) == shard.shard()).count();
            assertThat(shard.keys()).isEqualTo(expected);
        }

        assertThat(aggregator.scan("agg-", 100).map(KvRecord::key).collectList().block(TIMEOUT))
                .as("merged in key order from all shards").isEqualTo(keys);
        assertThat(aggregator.scan("agg-10", 5).map(KvRecord::key).collectList().block(TIMEOUT))
                .containsExactly("agg-10", "agg-11", "agg-12", "agg-13", "agg-14");
        assertThat(aggregator.get("agg-33").block(TIMEOUT)).isEqualTo("vagg-33");
    }

    @Test
    void shouldReportAMissingKeyThroughTheAggregatorAsNotFound() {
        assertThatThrownBy(() -> aggregator.get("never-put").block(TIMEOUT))
                .isInstanceOfSatisfying(HomaRemoteException.class, e -> {
                    assertThat(e.status()).isEqualTo(HomaStatus.NOT_FOUND);
                    assertThat(e.remoteType()).isEqualTo(KeyNotFoundException.class.getName());
                    assertThat(e.remoteMessage()).isEqualTo("no value for key 'never-put'");
                });
        assertThatThrownBy(() -> aggregator.scan("a", 0).blockLast(TIMEOUT))
                .isInstanceOfSatisfying(HomaRemoteException.class,
                        e -> assertThat(e.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT));
    }
}
