package io.homa.demo.registry;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/** The registry accepts a shard's registration and answers it, Homa port in metadata, to a discovery query. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class DemoRegistryApplicationTest {

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void registersAnInstanceWithItsHomaPortAndListsIt() throws Exception {
        String instance = """
                {"instance": {"instanceId": "198.18.0.2:kv-0", "hostName": "198.18.0.2", "app": "KV-0",
                 "ipAddr": "198.18.0.2", "vipAddress": "kv-0", "status": "UP",
                 "port": {"$": 8080, "@enabled": "true"},
                 "dataCenterInfo": {"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo", "name": "MyOwn"},
                 "metadata": {"homa-port": "40123"}}}
                """;
        HttpResponse<String> registered = http.send(HttpRequest.newBuilder(uri("/eureka/apps/KV-0"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(instance)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(registered.statusCode()).isEqualTo(204);

        HttpResponse<String> listed = http.send(HttpRequest.newBuilder(uri("/eureka/apps/KV-0"))
                .header("Accept", "application/json").GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(listed.statusCode()).isEqualTo(200);
        assertThat(listed.body()).contains("\"instanceId\":\"198.18.0.2:kv-0\"").contains("\"homa-port\":\"40123\"");
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }
}
