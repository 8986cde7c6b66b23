package io.homa.demo.aggregator;

/**
 * One shard's part of an {@link AggregateStats}.
 *
 * @param shard the shard index
 * @param keys keys under the prefix on that shard
 * @param valueChars total length of their values, in characters
 */
public record ShardStats(int shard, long keys, long valueChars) {}
