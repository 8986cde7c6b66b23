package io.homa.spring.test;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.spring.LocalHomaPort;
import io.homa.spring.test.app.GreetingApplication;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The annotation's properties win over the application's configuration (here command-line
 * arguments) and lose to the test's own properties (inlined and dynamic).
 */
@SpringBootTest(classes = GreetingApplication.class, args = "--homa.server.bind-address=0.0.0.0",
        properties = "homa.client.local-services=greeting")
@AutoConfigureHomaTest
class PrecedenceTests {

    private static final int DYNAMIC_PORT = freeUdpPort();

    @Autowired
    private Environment environment;

    @LocalHomaPort
    private int port;

    @DynamicPropertySource
    static void port(DynamicPropertyRegistry registry) {
        registry.add("homa.server.port", () -> DYNAMIC_PORT);
    }

    @Test
    void shouldOverrideTheApplicationsConfiguration() {
        assertThat(this.environment.getProperty("homa.server.bind-address")).isEqualTo("127.0.0.1");
    }

    @Test
    void shouldYieldToTheTestsOwnProperties() {
        assertThat(this.environment.getProperty("homa.client.local-services")).isEqualTo("greeting");
        assertThat(this.port).isEqualTo(DYNAMIC_PORT);
    }

    private static int freeUdpPort() {
        try (DatagramSocket socket = new DatagramSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
