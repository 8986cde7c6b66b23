package io.homa.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.CommandLinePropertySource;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.SimpleCommandLinePropertySource;
import org.springframework.core.env.StandardEnvironment;

class DemoEnvironmentPostProcessorTest {

    @Test
    void shouldBindTheStarterEndpointToAFreeLoopbackPortInLocalMode() {
        StandardEnvironment environment = process(Map.of());

        assertThat(environment.getProperty("homa.server.port")).isEqualTo("0");
        assertThat(environment.getProperty("homa.server.bind-address")).isEqualTo("127.0.0.1");
    }

    @Test
    void shouldUseAFixedPortInServerModeAndAFreeOneInClientMode() {
        assertThat(process(Map.of("mode", "server")).getProperty("homa.server.port")).isEqualTo("4001");
        assertThat(process(Map.of("mode", "SERVER")).getProperty("homa.server.bind-address")).isNull();
        assertThat(process(Map.of("mode", "client")).getProperty("homa.server.port")).isEqualTo("0");
    }

    @Test
    void shouldServeReflectionInServerModeOnly() {
        assertThat(process(Map.of("mode", "server")).getProperty("homa.server.reflection.enabled")).isEqualTo("true");
        assertThat(process(Map.of("mode", "local")).getProperty("homa.server.reflection.enabled")).isNull();
        assertThat(process(Map.of("mode", "server", "homa.server.reflection.enabled", "false"))
                .getProperty("homa.server.reflection.enabled")).isEqualTo("false");
    }

    @Test
    void shouldLetExplicitSettingsWin() {
        StandardEnvironment environment = process(Map.of("mode", "server", "homa.server.port", "5001"));

        assertThat(environment.getProperty("homa.server.port")).isEqualTo("5001");
    }

    @Test
    void shouldNameAShardAfterItsPeerAndLetTheCommandLineWin() {
        StandardEnvironment shard = process(Map.of("mode", "shard", "shard", "3"));
        assertThat(shard.getProperty("spring.application.name")).isEqualTo("kv-3");
        assertThat(shard.getProperty("homa.server.port")).isEqualTo("4001");
        assertThat(shard.getProperty("eureka.client.fetch-registry")).isEqualTo("false");
        assertThat(shard.getProperty("eureka.client.register-with-eureka")).isNull();

        StandardEnvironment named = new StandardEnvironment();
        named.getPropertySources().addFirst(new SimpleCommandLinePropertySource(
                "--mode=shard", "--shard=3", "--spring.application.name=store"));
        named.getPropertySources().addLast(new MapPropertySource("application.yml",
                Map.of("spring.application.name", "homa-demo")));
        new DemoEnvironmentPostProcessor().postProcessEnvironment(named, new SpringApplication());
        assertThat(named.getProperty("spring.application.name")).isEqualTo("store");
        named.getPropertySources().remove(CommandLinePropertySource.COMMAND_LINE_PROPERTY_SOURCE_NAME);
        assertThat(named.getProperty("spring.application.name")).as("above the configuration files").isEqualTo("kv-3");
    }

    @Test
    void shouldLetTheWatchFetchTheRegistryWithoutRegistering() {
        StandardEnvironment watch = process(Map.of("mode", "watch"));
        assertThat(watch.getProperty("homa.server.port")).isEqualTo("0");
        assertThat(watch.getProperty("eureka.client.register-with-eureka")).isEqualTo("false");
        assertThat(watch.getProperty("spring.application.name")).isNull();
    }

    private static StandardEnvironment process(Map<String, Object> arguments) {
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addFirst(new MapPropertySource("arguments", arguments));
        new DemoEnvironmentPostProcessor().postProcessEnvironment(environment, new SpringApplication());
        return environment;
    }
}
