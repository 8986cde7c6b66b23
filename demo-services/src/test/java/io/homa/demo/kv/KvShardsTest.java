package io.homa.demo.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class KvShardsTest {

    @Test
    void shouldSpreadKeysOverAllShardsStably() {
        int[] perShard = new int[3];
        IntStream.range(0, 300).forEach(i -> perShard[KvShards.shardOf("key-" + i, 3)]++);

        assertThat(Arrays.stream(perShard).boxed().toList()).allSatisfy(count -> assertThat(count).isBetween(60, 140));
        assertThat(KvShards.shardOf("key-042", 3)).as("String.hashCode is fixed by the JLS")
                .isEqualTo(Math.floorMod("key-042".hashCode(), 3));
        assertThat(KvShards.shardOf("anything", 1)).isZero();
        assertThatThrownBy(() -> KvShards.shardOf("k", 0)).hasMessage("shards must be at least 1, was 0");
    }

    @Test
    void shouldNameShardPeers() {
        assertThat(KvShards.peerName(2)).isEqualTo("kv-2");
        assertThatThrownBy(() -> KvShards.peerName(-1)).hasMessage("shard must be 0 or more, was -1");
    }
}
