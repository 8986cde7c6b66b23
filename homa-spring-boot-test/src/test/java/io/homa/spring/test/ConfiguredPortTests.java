package io.homa.spring.test;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.reactive.HomaTransport;
import io.homa.spring.LocalHomaPort;
import io.homa.spring.test.app.GreetingApplication;
import io.homa.spring.test.app.GreetingClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@code @AutoConfigureHomaTest(randomPort = false)} keeps the configured port and bind address
 * (profile {@code configured-port}: a port found free, on 0.0.0.0); the clients call it on loopback.
 */
@SpringBootTest(classes = GreetingApplication.class)
@AutoConfigureHomaTest(randomPort = false)
@ActiveProfiles("configured-port")
class ConfiguredPortTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private static final int CONFIGURED_PORT = freeUdpPort();

    @Autowired
    private GreetingClient greetingClient;

    @Autowired
    private HomaTransport transport;

    @LocalHomaPort
    private int port;

    @DynamicPropertySource
    static void configuredPort(DynamicPropertyRegistry registry) {
        registry.add("test.configured-port", () -> CONFIGURED_PORT);
    }

    @Test
    void shouldBindTheConfiguredPortAndAddress() {
        assertThat(this.port).isEqualTo(CONFIGURED_PORT);
        assertThat(this.transport.localAddress().getAddress().isAnyLocalAddress()).isTrue();
    }

    @Test
    void shouldCallTheApplicationsOwnServiceOnLoopback() {
        assertThat(this.greetingClient.greet("Ada").block(WAIT)).isEqualTo("Hello, Ada");
    }

    private static int freeUdpPort() {
        try (DatagramSocket socket = new DatagramSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
