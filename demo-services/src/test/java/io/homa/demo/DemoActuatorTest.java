package io.homa.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.demo.aggregator.AggregatorClient;
import io.homa.spring.test.AutoConfigureHomaTest;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;

/**
 * {@code --spring.profiles.active=web}: Actuator's {@code /actuator/health} and
 * {@code /actuator/metrics} over HTTP show the Homa endpoint's health and meters, once calls have
 * been made (the demo in server mode, as one would monitor it, its HTTP server on a random port
 * and its Homa endpoint on a free loopback port through {@link AutoConfigureHomaTest @AutoConfigureHomaTest}).
 */
@SpringBootTest(classes = DemoApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
        args = {"--mode=server", "--port=0", "--kv-shards=1"}, properties = "server.address=127.0.0.1")
@ActiveProfiles("web")
@AutoConfigureHomaTest
@DirtiesContext
class DemoActuatorTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();

    @LocalServerPort
    private int httpPort;

    @Autowired
    private AggregatorClient aggregator;

    @BeforeEach
    void callThroughTheOwnEndpoint() {
        // Client and server calls through this application's own endpoint, so both sides have meters.
        aggregator.put("metered", "yes").block(TIMEOUT);
        assertThat(aggregator.get("metered").block(TIMEOUT)).isEqualTo("yes");
    }

    @Test
    void shouldShowTheHomaComponentInHealth() throws Exception {
        HttpResponse<String> health = get("/actuator/health");

        assertThat(health.statusCode()).as(health.body()).isEqualTo(200);
        assertThat(health.body()).contains("\"status\":\"UP\"").contains("\"homa\":{");
    }

    @Test
    void shouldListHomaMetersInMetrics() throws Exception {
        HttpResponse<String> metrics = get("/actuator/metrics");

        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body()).contains("\"homa.client.calls\"").contains("\"homa.server.calls\"")
                .as("protocol counters").contains("\"homa.packets.sent\"");
        HttpResponse<String> serverCalls = get("/actuator/metrics/homa.server.calls");
        assertThat(serverCalls.statusCode()).isEqualTo(200);
        assertThat(serverCalls.body()).contains("\"service\"").contains("aggregator");
    }

    @Test
    void shouldNotServeOtherEndpoints() throws Exception {
        assertThat(get("/actuator/env").statusCode()).isEqualTo(404);
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        URI uri = URI.create("http://127.0.0.1:" + httpPort + path);
        return http.send(HttpRequest.newBuilder(uri).timeout(TIMEOUT).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
