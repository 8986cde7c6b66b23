package io.homa.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The configuration metadata IDEs complete {@code homa.*} keys from. */
class HomaPropertiesMetadataTests {

    @Test
    void shouldDescribeEveryPropertyWithItsDefault() throws IOException {
        Map<String, JsonNode> properties = new HashMap<>();
        for (String resource : new String[] {"META-INF/spring-configuration-metadata.json"}) {
            try (InputStream in = getClass().getClassLoader().getResourceAsStream(resource)) {
                assertThat(in).as(resource).isNotNull();
                JsonNode root = JsonMapper.builder().build().readTree(in);
                root.get("properties").forEach((property) -> properties.put(property.get("name").asString(), property));
            }
        }
        Map<String, JsonNode> core = new HashMap<>();
        properties.forEach((name, property) -> {
            String sourceType = property.path("sourceType").asString("");
            if (sourceType.startsWith(HomaProperties.class.getName())
                    || sourceType.equals(HomaProtocolProperties.class.getName())
                    || sourceType.equals(HomaTransportProperties.class.getName())
                    || sourceType.equals(HomaSecurityProperties.class.getName())) {
                core.put(name, property);
            }
        });
        assertThat(core).containsOnlyKeys("homa.server.port", "homa.server.bind-address",
                "homa.server.enabled", "homa.server.reflection.enabled", "homa.server.codecs", "homa.server.shutdown-grace-period",
                "homa.server.shutdown-ack-timeout", "homa.server.threads",
                "homa.server.queue-capacity", "homa.server.offload-size", "homa.server.stream-window-size",
                "homa.server.max-calls-in-service", "homa.server.max-blocking-calls", "homa.server.max-queue-delay",
                "homa.client.peers", "homa.client.default-timeout", "homa.client.codec", "homa.client.services",
                "homa.client.local-services",
                "homa.client.stream-batch-size", "homa.client.stream-window-size", "homa.protocol.mtu", "homa.protocol.unscheduled-bytes",
                "homa.protocol.max-message-size", "homa.protocol.resend-interval", "homa.protocol.peer-silence-timeout", "homa.protocol.timeout-resends",
                "homa.transport.receive-buffer-size", "homa.transport.send-buffer-size", "homa.transport.native",
                "homa.protocol.link-mbps", "homa.protocol.max-nic-queue", "homa.transport.device-mtu",
                "homa.transport.segmentation-offload", "homa.transport.link-mbps", "homa.transport.busy-poll",
                "homa.transport.timetrace-events",
                "homa.transport.loops",
                "homa.protocol.peer-idle-timeout", "homa.protocol.max-inbound-buffer",
                "homa.protocol.max-overcommit", "homa.protocol.max-grants-per-peer", "homa.protocol.max-incoming",
                "homa.protocol.fifo-grant-fraction", "homa.protocol.priority-levels", "homa.protocol.incast-threshold",
                "homa.protocol.incast-unscheduled-bytes", "homa.protocol.incast-buffer-bytes", "homa.protocol.rtt-bytes", "homa.protocol.address-validation",
                "homa.protocol.congestion-control", "homa.protocol.rtt-probe-interval", "homa.transport.priority-tos",
                "homa.security.mode", "homa.security.keys", "homa.security.active-key");
        assertThat(properties.keySet()).allSatisfy((name) -> assertThat(name).startsWith("homa."));
        properties.forEach((name, property) -> assertThat(property.path("description").asString("")).as(name)
                .isNotBlank());
        assertThat(properties.get("homa.server.port").get("defaultValue").asInt()).isEqualTo(4000);
        assertThat(properties.get("homa.protocol.mtu").get("defaultValue").asInt()).isEqualTo(1500);
        assertThat(properties.get("homa.protocol.resend-interval").get("defaultValue").asString()).isEqualTo("10ms");
        assertThat(properties.get("homa.protocol.congestion-control").get("defaultValue").asString()).isEqualTo("off");
        assertThat(properties.get("homa.protocol.rtt-probe-interval").get("defaultValue").asString()).isEqualTo("1ms");
        assertThat(properties.get("homa.protocol.max-nic-queue").get("defaultValue").asString()).isEqualTo("50us");
        assertThat(properties.get("homa.protocol.link-mbps").get("defaultValue").asString()).isEqualTo("auto");
        assertThat(properties.get("homa.transport.device-mtu").get("defaultValue").asBoolean()).isTrue();
        assertThat(properties.get("homa.transport.segmentation-offload").get("defaultValue").asBoolean()).isTrue();
        assertThat(properties.get("homa.transport.native").get("defaultValue").asBoolean()).isTrue();
        assertThat(properties.get("homa.transport.busy-poll").get("defaultValue").asString()).isEqualTo("50us");
        assertThat(properties.get("homa.protocol.address-validation").get("defaultValue").asBoolean()).isTrue();
        assertThat(properties.get("homa.transport.priority-tos").get("defaultValue").asString()).isEqualTo("auto");
        assertThat(properties.get("homa.protocol.fifo-grant-fraction").get("defaultValue").asDouble()).isEqualTo(0.05);
        assertThat(properties.get("homa.client.default-timeout").get("defaultValue").asString()).isEqualTo("10s");
        assertThat(properties.get("homa.client.codec").get("defaultValue").asString()).isEqualTo("json");
        assertThat(properties.get("homa.security.mode").get("defaultValue").asString()).isEqualTo("off");
        assertThat(properties.get("homa.client.stream-batch-size").get("defaultValue").asInt()).isEqualTo(256);
        assertThat(properties.get("homa.client.stream-window-size").get("defaultValue").asString()).isEqualTo("2MB");
        assertThat(properties.get("homa.server.stream-window-size").get("defaultValue").asString()).isEqualTo("8MB");
        assertThat(properties.get("homa.server.shutdown-grace-period").get("defaultValue").asString())
                .isEqualTo("10s");
        assertThat(properties.get("homa.server.shutdown-ack-timeout").get("defaultValue").asString())
                .isEqualTo("2s");
        assertThat(properties.get("homa.server.codecs").has("defaultValue"))
                .as("default: every codec of the registry, which depends on the classpath").isFalse();
        assertThat(properties.get("homa.server.codecs").get("description").asString())
                .contains("Default: every codec of the registry");
        assertThat(properties.get("homa.client.services").path("description").asString())
                .contains("timeout", "codec", "methods.<method>.timeout");
        Map<String, JsonNode> hints = new HashMap<>();
        try (InputStream in = getClass().getClassLoader()
                .getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
            JsonMapper.builder().build().readTree(in).path("hints")
                    .forEach((hint) -> hints.put(hint.get("name").asString(), hint));
        }
        assertThat(hints.get("homa.security.mode").get("values").values()).extracting((value) -> value.get("value")
                .asString()).containsExactly("off", "authenticate", "encrypt");
        assertThat(properties.get("homa.server.reflection.enabled").get("defaultValue").asString()).isEqualTo("auto");
        assertThat(hints.get("homa.server.reflection.enabled").get("values").values()).extracting((value) -> value
                .get("value").asString()).containsExactly("auto", "true", "false");
        assertThat(hints.get("homa.client.codec").get("values").values()).extracting((value) -> value.get("value")
                .asString()).containsExactly("json", "smile", "cbor");
    }
}
