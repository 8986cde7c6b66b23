package com.example.greeting;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.DatagramSocket;
import java.net.SocketException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The application of docs/getting-started.md, started whole: it serves "greeting" and calls
 * it through the declarative client over loopback UDP. A free port replaces application.yml's 4000,
 * so the test does not depend on that port being free.
 */
@SpringBootTest
class GreetingApplicationTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @DynamicPropertySource
    static void freePort(DynamicPropertyRegistry registry) throws SocketException {
        int port;
        try (DatagramSocket socket = new DatagramSocket(0)) {
            port = socket.getLocalPort();
        }
        registry.add("homa.server.port", () -> port);
        registry.add("homa.client.peers.greeting", () -> "127.0.0.1:" + port);
    }

    @Autowired
    private GreetingClient client;

    @Test
    void callsTheServiceThroughTheDeclarativeClient() {
        assertThat(this.client.greet(new GreetingRequest("Ada")).block(WAIT)).isEqualTo(new Greeting("Hello, Ada"));
        assertThat(this.client.countTo(3, Duration.ofMillis(5)).collectList().block(WAIT)).containsExactly(1, 2, 3);
    }
}
