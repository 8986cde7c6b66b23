package io.homa.spring.observability;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.EngineConfig;
import io.homa.reactive.HomaSecurityConfig;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/** The packet-authentication meters (issue 14, item 2): {@code homa.datagrams.unauthenticated} and {@code .replayed}. */
class HomaSecurityMetricsTests {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final List<HomaTransport> transports = new ArrayList<>();

    @AfterEach
    void dispose() {
        this.transports.forEach(HomaTransport::disposeNow);
    }

    private HomaTransport bind(HomaSecurityConfig security, boolean serve) {
        EngineConfig fast = EngineConfig.builder().resendIntervalNs(2_000_000L)
                .peerSilenceTimeoutNs(EngineConfig.MIN_PEER_SILENCE_TIMEOUT_NS).build();
        HomaTransport transport = HomaTransport.bindNow(HomaTransportConfig.builder().bindAddress("127.0.0.1")
                .engine(fast).security(security).build(),
                serve ? (request) -> Mono.just(request.payload().retain()) : null, WAIT);
        this.transports.add(transport);
        return transport;
    }

    @Test
    void shouldCountDatagramsThatDidNotAuthenticate() {
        HomaSecurityConfig security = HomaSecurityConfig.authenticate(Map.of(1, new byte[32]), 1);
        HomaTransport server = bind(security, true);
        HomaTransport plain = bind(HomaSecurityConfig.off(), false);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        HomaTransportMetrics metrics = new HomaTransportMetrics(server, Duration.ofMinutes(1));
        metrics.bindTo(registry);
        assertThat(registry.get("homa.datagrams.unauthenticated").functionCounter().count()).isZero();
        assertThat(registry.get("homa.datagrams.replayed").functionCounter().count()).isZero();

        plain.call(new InetSocketAddress("127.0.0.1", server.localAddress().getPort()), new byte[100])
                .onErrorResume((error) -> Mono.empty()).block(WAIT);

        assertThat(registry.get("homa.datagrams.unauthenticated").functionCounter().count()).isPositive()
                .isEqualTo(server.unauthenticatedDatagrams());
        assertThat(registry.get("homa.datagrams.replayed").functionCounter().count()).isZero();
        metrics.close();
    }
}
