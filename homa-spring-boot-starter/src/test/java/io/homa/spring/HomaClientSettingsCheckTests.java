package io.homa.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.spring.client.HomaExchange;
import io.homa.spring.client.ImportHomaClients;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The start-up WARN for {@code homa.client.services.<service>.methods.<method>} keys no client declares. */
@ExtendWith(OutputCaptureExtension.class)
class HomaClientSettingsCheckTests {

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HomaAutoConfiguration.class))
            .withPropertyValues("homa.server.port=0", "homa.server.bind-address=127.0.0.1")
            .withUserConfiguration(KvClients.class);

    @Test
    void shouldWarnOfAMethodKeyNoDeclarativeClientDeclares(CapturedOutput output) {
        this.contextRunner.withPropertyValues("homa.client.services.kv.methods.gte.timeout=1s",
                "homa.client.services.kv.methods.get.timeout=1s").run((context) -> {
                    assertThat(context).hasNotFailed();
                    assertThat(output).contains("WARN").contains("homa.client.services.kv.methods.gte.timeout:"
                            + " no declarative client of service 'kv' declares a method 'gte' (declared: get,"
                            + " put, scan); the setting is unused unless a HomaClient call names that method");
                    assertThat(output).doesNotContain("methods.get.timeout:");
                });
    }

    @Test
    void shouldNotWarnOfKeysThatNameDeclaredMethods(CapturedOutput output) {
        this.contextRunner.withPropertyValues("homa.client.services.kv.methods.get.timeout=1s",
                "homa.client.services.kv.methods.put.timeout=2s", "homa.client.services.kv.methods.scan.timeout=30s",
                "homa.client.services.kv.timeout=500ms").run((context) -> {
                    assertThat(context).hasNotFailed();
                    assertThat(output).doesNotContain("no declarative client");
                });
    }

    @Test
    void shouldNotWarnForAServiceOnlyHomaClientCalls(CapturedOutput output) {
        this.contextRunner.withPropertyValues("homa.client.services.audit.methods.record.timeout=1s")
                .run((context) -> {
                    assertThat(context).hasNotFailed();
                    assertThat(output).doesNotContain("no declarative client");
                });
    }

    @Test
    void shouldWriteServiceAndMethodNamesWithDotsInBrackets(CapturedOutput output) {
        this.contextRunner.withPropertyValues("homa.client.services[io.example.Kv].methods[v2.get].timeout=1s")
                .run((context) -> {
                    assertThat(context).hasNotFailed();
                    assertThat(output).contains("homa.client.services[io.example.Kv].methods[v2.get].timeout: no"
                            + " declarative client of service 'io.example.Kv' declares a method 'v2.get'"
                            + " (declared: lookup)");
                });
    }

    @HomaExchange(service = "kv")
    interface KvClient {

        Mono<String> get(String key);

        @HomaMethod(name = "put")
        Mono<Void> store(String key, String value);
    }

    /** A second client of the same service: its methods count too. */
    @HomaExchange(service = "kv")
    interface KvScanClient {

        Flux<String> scan(String fromKey);
    }

    @HomaExchange(service = "io.example.Kv")
    interface DottedClient {

        Mono<String> lookup(String key);
    }

    @Configuration(proxyBeanMethods = false)
    @ImportHomaClients({KvClient.class, KvScanClient.class, DottedClient.class})
    static class KvClients {
    }
}
