package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class LongMapTest {

    @Test
    void shouldBehaveLikeHashMapUnderRandomOperations() {
        Random random = new Random(42);
        LongMap<String> map = new LongMap<>();
        Map<Long, String> reference = new HashMap<>();
        for (int step = 0; step < 200_000; step++) {
            // Few distinct keys, clustered like rpcids (even, sequential), plus 0 and negatives.
            long key = switch (random.nextInt(4)) {
                case 0 -> 2L * random.nextInt(600);
                case 1 -> 1_000_000_000_000L + 2L * random.nextInt(600);
                case 2 -> -random.nextInt(50);
                default -> random.nextLong() & 0x7FFL;
            };
            switch (random.nextInt(3)) {
                case 0 -> assertThat(map.put(key, "v" + step)).isEqualTo(reference.put(key, "v" + step));
                case 1 -> assertThat(map.remove(key)).isEqualTo(reference.remove(key));
                default -> assertThat(map.get(key)).isEqualTo(reference.get(key));
            }
            assertThat(map.size()).isEqualTo(reference.size());
        }
        for (Map.Entry<Long, String> entry : reference.entrySet()) {
            assertThat(map.get(entry.getKey())).isEqualTo(entry.getValue());
        }
        List<String> values = new ArrayList<>();
        map.values().forEach(values::add);
        assertThat(values).containsExactlyInAnyOrderElementsOf(reference.values());
    }

    @Test
    void shouldEmptyOnClearAndAllowKeyZero() {
        LongMap<String> map = new LongMap<>();
        assertThat(map.get(0)).isNull();
        map.put(0, "zero");
        map.put(2, "two");
        assertThat(map.get(0)).isEqualTo("zero");
        map.clear();
        assertThat(map.isEmpty()).isTrue();
        assertThat(map.get(0)).isNull();
        assertThat(map.values()).isEmpty();
    }

    @Test
    void shouldRejectNullValuesAndChangesDuringIteration() {
        LongMap<String> map = new LongMap<>();
        assertThatThrownBy(() -> map.put(4, null)).isInstanceOf(NullPointerException.class).hasMessageContaining("key 4");
        map.put(2, "a");
        map.put(4, "b");
        assertThatThrownBy(() -> {
            for (String ignored : map.values()) {
                map.remove(2);
            }
        }).isInstanceOf(ConcurrentModificationException.class);
    }
}
