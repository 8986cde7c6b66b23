package io.homa.demo.aggregator;

import io.homa.demo.kv.KeyNotFoundException;
import io.homa.demo.kv.KvRecord;
import io.homa.demo.kv.KvService;
import io.homa.demo.kv.KvShardClients;
import io.homa.demo.kv.KvShards;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.spring.HomaMethod;
import io.homa.spring.HomaService;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The front of the sharded key-value store, exported as service {@value #SERVICE}: it sends
 * {@link #put} and {@link #get} to the shard that holds the key ({@link KvShards#shardOf}) and
 * fans {@link #scan} and {@link #stats} out to all {@code --kv-shards} shards at once, then
 * merges their answers. The fan-out is the incast pattern: the shards' responses arrive together
 * at this endpoint, which Homa's receiver-driven grants (and its incast marking) are built for.
 *
 * <p>The shards are called through declarative {@link io.homa.demo.kv.KvClient}s, one per shard
 * ({@link KvShardClients}). Errors keep their status:
 * a missing key is a {@link KeyNotFoundException} again (NOT_FOUND through
 * {@link io.homa.demo.kv.KvExceptionAdvice}), other shard failures a {@link HomaException} with
 * the shard's status and message.
 */
@HomaService(AggregatorService.SERVICE)
public class AggregatorService {
    /** The service name. */
    public static final String SERVICE = "aggregator";

    private final KvShardClients kv;
    private final int shards;

    /** @param kv the declarative clients of the shards */
    public AggregatorService(KvShardClients kv) {
        this.kv = kv;
        this.shards = kv.count();
    }

    /** Sets the value of {@code key} on its shard. */
    @HomaMethod(idempotent = true)
    public Mono<Void> put(String key, String value) {
        KvService.checkKey("key", key);
        int shard = KvShards.shardOf(key, shards);
        return kv.shard(shard).put(key, value).onErrorMap(e -> fromShard(shard, key, e));
    }

    /**
     * The value of {@code key}, from its shard.
     *
     * @throws KeyNotFoundException (NOT_FOUND at the caller) if the shard has none
     */
    @HomaMethod(idempotent = true)
    public Mono<String> get(String key) {
        KvService.checkKey("key", key);
        int shard = KvShards.shardOf(key, shards);
        return kv.shard(shard).get(key).onErrorMap(e -> fromShard(shard, key, e));
    }

    /**
     * Up to {@code limit} records from {@code fromKey} on, in key order, over all shards: each
     * shard streams its own records in key order and this merges the streams, fetching from each
     * shard only as the caller asks for more.
     */
    @HomaMethod(idempotent = true)
    public Flux<KvRecord> scan(String fromKey, int limit) {
        if (limit < 1 || limit > KvService.MAX_SCAN_LIMIT) {
            return Flux.error(new HomaException(HomaStatus.INVALID_ARGUMENT,
                    "limit must be between 1 and " + KvService.MAX_SCAN_LIMIT + ", was " + limit));
        }
        List<Flux<KvRecord>> streams = new ArrayList<>(shards);
        for (int shard = 0; shard < shards; shard++) {
            int index = shard;
            streams.add(kv.shard(index).scan(fromKey, limit).onErrorMap(e -> fromShard(index, null, e)));
        }
        @SuppressWarnings("unchecked")
        Flux<KvRecord>[] sources = streams.toArray(Flux[]::new);
        return Flux.mergeComparing(Comparator.comparing(KvRecord::key), sources).take(limit, true);
    }

    /**
     * How many keys start with {@code prefix} and how long their values are, over all shards:
     * one request to every shard at once, answers summed.
     */
    @HomaMethod(idempotent = true)
    public Mono<AggregateStats> stats(String prefix) {
        return Mono.defer(() -> {
            long startNs = System.nanoTime();
            return Flux.range(0, shards)
                    .flatMap(shard -> kv.shard(shard).stats(prefix)
                            .map(stats -> new ShardStats(shard, stats.keys(), stats.valueChars()))
                            .onErrorMap(e -> fromShard(shard, null, e)), shards)
                    .collectSortedList(Comparator.comparingInt(ShardStats::shard))
                    .map(answers -> new AggregateStats(prefix,
                            answers.stream().mapToLong(ShardStats::keys).sum(),
                            answers.stream().mapToLong(ShardStats::valueChars).sum(),
                            answers,
                            (System.nanoTime() - startNs) / 1_000));
        });
    }

    /** A shard's failure as this service's: NOT_FOUND stays a {@link KeyNotFoundException}, other statuses stay. */
    private static Throwable fromShard(int shard, String key, Throwable error) {
        if (error instanceof HomaRemoteException remote) {
            if (remote.status() == HomaStatus.NOT_FOUND && key != null) {
                return new KeyNotFoundException(key);
            }
            return new HomaException(remote.status(), "kv shard " + shard + ": " + remote.remoteMessage(), remote);
        }
        if (error instanceof HomaException homa) {
            return new HomaException(homa.status(), "kv shard " + shard + ": " + homa.getMessage(), homa);
        }
        return error;
    }
}
