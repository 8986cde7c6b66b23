package io.homa.reactive.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

class StaticServiceResolverTest {
    private static final InetSocketAddress KV = new InetSocketAddress("127.0.0.1", 4000);

    @Test
    void shouldResolveConfiguredService() {
        assertThat(new StaticServiceResolver(Map.of("kv", KV)).resolve("kv").block()).isEqualTo(KV);
    }

    @Test
    void shouldRoundRobinOverSeveralPeers() {
        InetSocketAddress other = new InetSocketAddress("127.0.0.1", 4001);
        StaticServiceResolver resolver = StaticServiceResolver.ofPeers(Map.of("kv", List.of(KV, other)));

        assertThat(Flux.range(0, 4).concatMap(i -> resolver.resolve("kv")).collectList().block())
                .containsExactly(KV, other, KV, other);
    }

    @Test
    void shouldRejectServiceWithoutPeers() {
        assertThatThrownBy(() -> StaticServiceResolver.ofPeers(Map.of("kv", List.of())))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("service 'kv' must have at least one endpoint");
    }

    @Test
    void shouldFailWithUnavailableForUnknownService() {
        assertThatThrownBy(() -> StaticServiceResolver.of("kv", KV).resolve("echo").block())
                .isInstanceOf(HomaException.class)
                .hasMessage("no peer for service 'echo' (configured: kv)")
                .satisfies(e -> assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.UNAVAILABLE));
    }

    @Test
    void shouldCopyTheMap() {
        Map<String, InetSocketAddress> endpoints = new HashMap<>(Map.of("kv", KV));
        StaticServiceResolver resolver = new StaticServiceResolver(endpoints);
        endpoints.clear();

        assertThat(resolver.resolve("kv").block()).isEqualTo(KV);
        assertThat(resolver.endpoints()).containsOnlyKeys("kv");
    }
}
