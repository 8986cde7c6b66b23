package io.homa.demo.kv;

/**
 * How the demo shards its key-value store: {@code N} shards ({@code --kv-shards}), each a Homa
 * endpoint that exports {@link KvService} ({@value KvService#SERVICE}), known to the client side
 * as peers {@code kv-0} .. {@code kv-<N-1>} ({@code homa.client.peers.kv-0=host:port}, ...; in
 * {@code local} and {@code server} mode, shards without such an entry run in this JVM, see
 * {@link KvShardServers}). A key lives on shard {@link #shardOf(String, int)};
 * {@link KvShardClients} has one {@link KvClient} per shard.
 */
public final class KvShards {
    /** Prefix of the peer names of the shards: {@code kv-0}, {@code kv-1}, ... */
    public static final String PEER_PREFIX = KvService.SERVICE + "-";

    private KvShards() {}

    /**
     * The shard that holds {@code key}: {@code floorMod(key.hashCode(), shards)}
     * ({@link String#hashCode} is the same in every JVM).
     *
     * @param key the key, not null
     * @param shards number of shards, at least 1
     * @return the shard index, 0..shards-1
     * @throws IllegalArgumentException if {@code shards} is less than 1
     */
    public static int shardOf(String key, int shards) {
        if (shards < 1) {
            throw new IllegalArgumentException("shards must be at least 1, was " + shards);
        }
        return Math.floorMod(key.hashCode(), shards);
    }

    /**
     * The peer name of a shard, {@code kv-<shard>}.
     *
     * @throws IllegalArgumentException if {@code shard} is negative
     */
    public static String peerName(int shard) {
        if (shard < 0) {
            throw new IllegalArgumentException("shard must be 0 or more, was " + shard);
        }
        return PEER_PREFIX + shard;
    }
}
