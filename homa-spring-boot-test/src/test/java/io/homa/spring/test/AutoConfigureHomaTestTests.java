package io.homa.spring.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.rpc.HomaClient;
import io.homa.spring.HomaProperties;
import io.homa.spring.LocalHomaPort;
import io.homa.spring.test.app.GreetingApplication;
import io.homa.spring.test.app.GreetingClient;
import io.homa.spring.test.app.InventoryClient;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;
import org.springframework.test.context.ActiveProfiles;

/**
 * The application's own services on a random loopback port, called through its declarative
 * client and its {@code HomaClient} with no {@code homa.client.peers} entry; its configured port
 * (profile {@code configured-port}: 4999 on 0.0.0.0) is not used.
 */
@SpringBootTest(classes = GreetingApplication.class)
@AutoConfigureHomaTest
@ActiveProfiles("configured-port")
class AutoConfigureHomaTestTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @Autowired
    private GreetingClient greetingClient;

    @Autowired
    private InventoryClient inventoryClient;

    @Autowired
    private HomaClient homaClient;

    @Autowired
    private HomaTransport transport;

    @Autowired
    private HomaProperties properties;

    @Autowired
    private Environment environment;

    @LocalHomaPort
    private int port;

    @Test
    void shouldBindAFreePortOnLoopback() {
        assertThat(this.environment.getProperty("homa.server.port")).isEqualTo("0");
        assertThat(this.properties.getServer().getPort()).isZero();
        assertThat(this.port).isPositive();
        assertThat(this.transport.localAddress()).isEqualTo(new InetSocketAddress("127.0.0.1", this.port));
    }

    @Test
    void shouldCallTheApplicationsOwnServiceThroughItsDeclarativeClientWithoutAPeer() {
        assertThat(this.properties.getClient().getPeers()).isEmpty();
        assertThat(this.greetingClient.greet("Ada").block(WAIT)).isEqualTo("Hello, Ada");
    }

    @Test
    void shouldCallTheApplicationsOwnServiceThroughTheHomaClient() {
        assertThat(this.homaClient.call("greeting", "greet", "Bo", String.class).block(WAIT)).isEqualTo("Hello, Bo");
    }

    @Test
    void shouldResolveAServiceTheApplicationDoesNotExportAsUsual() {
        assertThatThrownBy(() -> this.inventoryClient.count("apples").block(WAIT))
                .isInstanceOfSatisfying(HomaException.class,
                        (e) -> assertThat(e.status()).isEqualTo(HomaStatus.UNAVAILABLE))
                .hasMessageContaining("no peer for service 'inventory'");
    }
}
