package io.homa.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.demo.aggregator.AggregatorClient;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * {@code --spring.profiles.active=web}: Actuator's {@code /actuator/health} and
 * {@code /actuator/metrics} over HTTP show the Homa endpoint's health and meters, once calls have
 * been made (the demo in server mode, as one would monitor it, on free ports).
 */
class DemoActuatorTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private static ConfigurableApplicationContext context;
    private static HttpClient http;
    private static URI base;

    @BeforeAll
    static void startDemo() {
        context = SpringApplication.run(DemoApplication.class, "--mode=server", "--port=0", "--kv-shards=1",
                "--homa.server.port=0", "--homa.server.bind-address=127.0.0.1",
                "--spring.profiles.active=web", "--server.port=0", "--server.address=127.0.0.1");
        base = URI.create("http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port"));
        http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
        // Client and server calls through this application's own endpoint, so both sides have meters.
        AggregatorClient aggregator = context.getBean(AggregatorClient.class);
        aggregator.put("metered", "yes").block(TIMEOUT);
        assertThat(aggregator.get("metered").block(TIMEOUT)).isEqualTo("yes");
    }

    @AfterAll
    static void stopDemo() {
        if (context != null) {
            context.close();
        }
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

    private static HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(base.resolve(path)).timeout(TIMEOUT).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
