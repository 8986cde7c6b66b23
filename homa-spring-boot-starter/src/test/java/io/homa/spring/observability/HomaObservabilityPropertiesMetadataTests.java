package io.homa.spring.observability;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** IDE metadata of the resilience, metrics, observation and health properties. */
class HomaObservabilityPropertiesMetadataTests {

    @Test
    void shouldDescribeEveryPropertyWithItsDefault() throws IOException {
        Map<String, JsonNode> properties = new HashMap<>();
        try (InputStream in = getClass().getClassLoader()
                .getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
            assertThat(in).isNotNull();
            JsonMapper.builder().build().readTree(in).get("properties").forEach((property) -> {
                String name = property.get("name").asString();
                if (name.startsWith("homa.client.resilience.") || name.startsWith("homa.metrics.")
                        || name.startsWith("homa.observation.") || name.startsWith("homa.health.")) {
                    properties.put(name, property);
                }
            });
        }
        assertThat(properties).containsOnlyKeys("homa.client.resilience.enabled",
                "homa.client.resilience.circuit-breaker.enabled", "homa.client.resilience.bulkhead.enabled",
                "homa.client.resilience.bulkhead.instance", "homa.client.resilience.rate-limiter.enabled",
                "homa.client.resilience.rate-limiter.instance", "homa.client.resilience.retry.enabled",
                "homa.client.resilience.retry.instance", "homa.metrics.enabled",
                "homa.metrics.protocol-sample-interval", "homa.observation.enabled", "homa.health.timeout");
        properties.forEach((name, property) -> {
            assertThat(property.path("description").asString("")).as(name).isNotBlank();
            assertThat(property.has("defaultValue")).as(name).isTrue();
        });
        assertThat(properties.get("homa.client.resilience.retry.instance").get("defaultValue").asString())
                .isEqualTo("homa-client");
        assertThat(properties.get("homa.metrics.protocol-sample-interval").get("defaultValue").asString())
                .isEqualTo("5s");
        assertThat(properties.get("homa.health.timeout").get("defaultValue").asString()).isEqualTo("1s");
    }
}
