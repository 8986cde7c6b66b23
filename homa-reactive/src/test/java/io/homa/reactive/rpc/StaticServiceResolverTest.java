package io.homa.reactive.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StaticServiceResolverTest {
    private static final InetSocketAddress KV = new InetSocketAddress("127.0.0.1", 4000);

    @Test
    void shouldResolveConfiguredService() {
        assertThat(new StaticServiceResolver(Map.of("kv", KV)).resolve("kv")).isEqualTo(KV);
    }

    @Test
    void shouldFailWithUnavailableForUnknownService() {
        assertThatThrownBy(() -> StaticServiceResolver.of("kv", KV).resolve("echo"))
                .isInstanceOf(HomaException.class)
                .hasMessage("no endpoint configured for service 'echo'")
                .satisfies(e -> assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.UNAVAILABLE));
    }

    @Test
    void shouldCopyTheMap() {
        Map<String, InetSocketAddress> endpoints = new HashMap<>(Map.of("kv", KV));
        StaticServiceResolver resolver = new StaticServiceResolver(endpoints);
        endpoints.clear();

        assertThat(resolver.resolve("kv")).isEqualTo(KV);
        assertThat(resolver.endpoints()).containsOnlyKeys("kv");
    }
}
