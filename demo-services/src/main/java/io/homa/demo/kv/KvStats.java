package io.homa.demo.kv;

/**
 * What one key-value store holds under a key prefix: the answer of {@link KvService#stats}.
 *
 * @param keys keys that start with the prefix
 * @param valueChars total length of their values, in characters
 */
public record KvStats(long keys, long valueChars) {}
