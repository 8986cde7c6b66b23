package io.homa.demo.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/** {@link KvService} as a plain object: the store's semantics, without the wire. */
class KvServiceTest {
    private final KvService kv = new KvService();

    @Test
    void shouldReturnWhatWasPutAndReplaceOnPut() {
        kv.put("a", "1");
        kv.put("a", "2");

        assertThat(kv.get("a")).isEqualTo("2");
    }

    @Test
    void shouldThrowKeyNotFoundForAMissingKey() {
        assertThatThrownBy(() -> kv.get("missing"))
                .isInstanceOf(KeyNotFoundException.class)
                .hasMessage("no value for key 'missing'");
    }

    @Test
    void shouldScanFromAKeyInKeyOrderUpToTheLimit() {
        for (String key : new String[] {"d", "b", "a", "e", "c"}) {
            kv.put(key, key.toUpperCase());
        }

        StepVerifier.create(kv.scan("b", 3))
                .expectNext(new KvRecord("b", "B"), new KvRecord("c", "C"), new KvRecord("d", "D"))
                .verifyComplete();
        StepVerifier.create(kv.scan("", 10)).expectNextCount(5).verifyComplete();
        StepVerifier.create(kv.scan("z", 10)).verifyComplete();
    }

    @Test
    void shouldProduceScanRecordsOnlyAsTheyAreRequested() {
        for (int i = 0; i < 100; i++) {
            kv.put("k" + (1000 + i), "v");
        }

        StepVerifier.create(kv.scan("", 100), 0)
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(10))
                .thenRequest(2)
                .expectNextCount(2)
                .expectNoEvent(Duration.ofMillis(10))
                .thenCancel()
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void shouldCountKeysAndValueLengthUnderAPrefix() {
        kv.put("user:1", "ab");
        kv.put("user:2", "cde");
        kv.put("users", "x");
        kv.put("order:1", "zzzz");

        assertThat(kv.stats("user:")).isEqualTo(new KvStats(2, 5));
        assertThat(kv.stats("")).isEqualTo(new KvStats(4, 10));
        assertThat(kv.stats("none")).isEqualTo(new KvStats(0, 0));
    }

    @Test
    void shouldRejectBadArgumentsWithInvalidArgument() {
        assertInvalid(() -> kv.get(""), "key must be 1..256 characters, was 0 characters");
        assertInvalid(() -> kv.put("x".repeat(257), "v"), "key must be 1..256 characters, was 257 characters");
        assertInvalid(() -> kv.put("k", null), "value must be present");
        assertInvalid(() -> kv.stats(null), "prefix must be present");
        StepVerifier.create(kv.scan("a", 0))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(HomaException.class)
                        .hasMessage("limit must be between 1 and 10000, was 0"))
                .verify();
    }

    private static void assertInvalid(Runnable call, String message) {
        assertThatThrownBy(call::run)
                .isInstanceOfSatisfying(HomaException.class,
                        e -> assertThat(e.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT))
                .hasMessageStartingWith(message);
    }
}
