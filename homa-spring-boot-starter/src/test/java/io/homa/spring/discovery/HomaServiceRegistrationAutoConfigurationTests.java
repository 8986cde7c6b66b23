package io.homa.spring.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;

import com.netflix.appinfo.ApplicationInfoManager;
import io.homa.spring.HomaAutoConfiguration;
import java.net.URI;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.serviceregistry.Registration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The Homa port an application publishes in its Spring Cloud registration. */
class HomaServiceRegistrationAutoConfigurationTests {

    /** A Homa endpoint on a free loopback port. */
    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HomaAutoConfiguration.class,
                    HomaServiceRegistrationAutoConfiguration.class))
            .withPropertyValues("homa.server.port=0", "homa.server.bind-address=127.0.0.1");

    @Test
    void shouldPublishTheBoundPortWhenTheConfiguredPortIsZero() {
        this.contextRunner.withUserConfiguration(WithRegistration.class).run((context) -> {
            int bound = context.getEnvironment().getRequiredProperty(HomaAutoConfiguration.LOCAL_PORT_PROPERTY,
                    Integer.class);
            assertThat(bound).isBetween(1, 65535);
            Registration registration = context.getBean(Registration.class);
            assertThat(registration.getMetadata()).containsEntry("homa-port", Integer.toString(bound))
                    .containsEntry("zone", "a");
            // What a discovering client reads from it:
            assertThat(DiscoveryServiceResolver.homaPort(registration, "homa-port")).isEqualTo(bound);
        });
    }

    @Test
    void shouldUseTheConfiguredMetadataKey() {
        this.contextRunner.withUserConfiguration(WithRegistration.class)
                .withPropertyValues("homa.client.discovery.port-metadata-key=udp-port")
                .run((context) -> assertThat(context.getBean(Registration.class).getMetadata())
                        .containsEntry("udp-port", context.getEnvironment()
                                .getProperty(HomaAutoConfiguration.LOCAL_PORT_PROPERTY))
                        .doesNotContainKey("homa-port"));
    }

    @Test
    void shouldKeepAnEntryTheApplicationSet() {
        this.contextRunner.withUserConfiguration(WithRegistration.class)
                .run((context) -> {
                    Registration registration = context.getBean(Registration.class);
                    registration.getMetadata().put("homa-port", "4001");
                    assertThat(context.getBean(HomaRegistrationMetadata.class).publish()).isEqualTo(4001);
                    assertThat(registration.getMetadata()).containsEntry("homa-port", "4001");
                });
    }

    @Test
    void shouldStartWithoutARegistration() {
        this.contextRunner.run((context) -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(HomaRegistrationMetadata.class).publish()).isEqualTo(-1);
        });
    }

    @Test
    void shouldWarnAndStartWhenTheMetadataCannotChange() {
        this.contextRunner.withBean(Registration.class, () -> new TestRegistration(Map.of())).run((context) -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(HomaRegistrationMetadata.class).publish()).isEqualTo(-1);
            assertThat(context.getBean(Registration.class).getMetadata()).isEmpty();
        });
    }

    @Test
    void shouldPublishNothingWhenTheServerIsDisabled() {
        this.contextRunner.withUserConfiguration(WithRegistration.class)
                .withPropertyValues("homa.server.enabled=false")
                .run((context) -> {
                    assertThat(context).doesNotHaveBean(HomaRegistrationMetadata.class);
                    assertThat(context.getBean(Registration.class).getMetadata()).doesNotContainKey("homa-port");
                });
    }

    @Test
    void shouldBackOffWithoutSpringCloud() {
        this.contextRunner.withClassLoader(new FilteredClassLoader("org.springframework.cloud"))
                .run((context) -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(HomaServiceRegistrationAutoConfiguration.class);
                });
    }

    @Test
    void shouldAlsoPutThePortIntoEurekasInstanceMetadata() {
        ApplicationInfoManager eureka = mock(ApplicationInfoManager.class);
        this.contextRunner.withUserConfiguration(WithRegistration.class)
                .withBean(ApplicationInfoManager.class, () -> eureka)
                .run((context) -> verify(eureka).registerAppMetadata(Map.of("homa-port",
                        context.getEnvironment().getProperty(HomaAutoConfiguration.LOCAL_PORT_PROPERTY))));
    }

    @Configuration(proxyBeanMethods = false)
    static class WithRegistration {

        @Bean
        Registration registration() {
            Map<String, String> metadata = new HashMap<>();
            metadata.put("zone", "a");
            return new TestRegistration(metadata);
        }
    }

    /** A registration as Spring Cloud's registries make them: the HTTP port, and modifiable metadata. */
    record TestRegistration(Map<String, String> metadata) implements Registration {

        @Override
        public String getServiceId() {
            return "kv-0";
        }

        @Override
        public String getHost() {
            return "127.0.0.1";
        }

        @Override
        public int getPort() {
            return 8080;
        }

        @Override
        public boolean isSecure() {
            return false;
        }

        @Override
        public URI getUri() {
            return URI.create("http://127.0.0.1:8080");
        }

        @Override
        public Map<String, String> getMetadata() {
            return this.metadata;
        }
    }
}
