package io.homa.spring.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.reactive.HomaTransport;
import io.homa.spring.observability.LoopbackRpc;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.health.registry.ReactiveHealthContributorRegistry;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

/** {@link HomaHealthContributorAutoConfiguration}. */
class HomaHealthContributorAutoConfigurationTests {

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HealthContributorRegistryAutoConfiguration.class,
                    HomaHealthContributorAutoConfiguration.class))
            .withUserConfiguration(TransportConfiguration.class);

    @Test
    void shouldContributeHomaHealth() {
        this.contextRunner.run((context) -> {
            assertThat(context).hasSingleBean(HomaHealthIndicator.class);
            assertThat(context).hasBean("homaHealthIndicator");
            ReactiveHealthContributorRegistry registry = context.getBean(ReactiveHealthContributorRegistry.class);
            assertThat(registry.getContributor("homa")).isSameAs(context.getBean(HomaHealthIndicator.class));
            Health health = ((ReactiveHealthIndicator) registry.getContributor("homa")).health()
                    .block(Duration.ofSeconds(10));
            assertThat(health.getStatus()).isEqualTo(Status.UP);
        });
    }

    @Test
    void shouldBackOffWhenUserDefinesHomaHealthIndicator() {
        this.contextRunner.withUserConfiguration(UserIndicatorConfiguration.class).run((context) -> {
            assertThat(context).doesNotHaveBean(HomaHealthIndicator.class);
            assertThat(context).hasBean("homaHealthIndicator");
        });
    }

    @Test
    void shouldBeSwitchedOffByManagementProperty() {
        this.contextRunner.withPropertyValues("management.health.homa.enabled=false")
                .run((context) -> assertThat(context).doesNotHaveBean(HomaHealthIndicator.class));
    }

    @Test
    void shouldNeedATransport() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HomaHealthContributorAutoConfiguration.class))
                .run((context) -> assertThat(context).doesNotHaveBean(HomaHealthIndicator.class));
    }

    @Test
    void shouldBackOffWithoutSpringBootHealth() {
        this.contextRunner.withClassLoader(new FilteredClassLoader(ReactiveHealthIndicator.class))
                .run((context) -> assertThat(context).doesNotHaveBean(HomaHealthIndicator.class));
    }

    @Test
    void shouldFailOnBadTimeout() {
        this.contextRunner.withPropertyValues("homa.health.timeout=0s").run((context) -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining("homa.health.timeout");
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class TransportConfiguration {

        @Bean(destroyMethod = "disposeNow")
        HomaTransport homaTransport() {
            return HomaTransport.bindNow(LoopbackRpc.config(), null,
                    Duration.ofSeconds(10));
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class UserIndicatorConfiguration {

        @Bean
        ReactiveHealthIndicator homaHealthIndicator() {
            return () -> Mono.just(Health.up().build());
        }
    }
}
