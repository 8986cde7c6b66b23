package io.homa.demo.aggregator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.demo.DemoProperties;
import io.homa.demo.kv.KeyNotFoundException;
import io.homa.demo.kv.KvService;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.DefaultApplicationArguments;

class KvServerSeedTest {

    @Test
    void shouldPutTheDemoKeysInServerMode() {
        KvService kv = new KvService();
        new KvServerSeed(kv, mode(DemoProperties.Mode.SERVER)).run(new DefaultApplicationArguments());
        assertThat(kv.get("key-042")).isEqualTo("value-042");
        assertThat(kv.stats("key-").keys()).isEqualTo(KvDemo.KEYS);
    }

    @Test
    void shouldPutNothingInOtherModes() {
        KvService kv = new KvService();
        new KvServerSeed(kv, mode(DemoProperties.Mode.LOCAL)).run(new DefaultApplicationArguments());
        assertThatThrownBy(() -> kv.get("key-042")).isInstanceOf(KeyNotFoundException.class);
    }

    private static DemoProperties mode(DemoProperties.Mode mode) {
        return new DemoProperties(mode, Duration.ofSeconds(1), 1, "w1", 4000, null, 1, Duration.ZERO, 1,
                Duration.ofSeconds(1), 1);
    }
}
