package io.homa.demo.aggregator;

import java.util.List;

/**
 * The answer of {@link AggregatorService#stats}: the shards' answers merged.
 *
 * @param prefix the key prefix asked about
 * @param keys keys under the prefix, over all shards
 * @param valueChars total length of their values, in characters
 * @param shards each shard's answer, in shard order
 * @param fanOutMicros time from sending the first shard request to receiving the last answer, at
 *     the aggregator, in microseconds
 */
public record AggregateStats(String prefix, long keys, long valueChars, List<ShardStats> shards, long fanOutMicros) {
    public AggregateStats {
        shards = List.copyOf(shards);
    }
}
