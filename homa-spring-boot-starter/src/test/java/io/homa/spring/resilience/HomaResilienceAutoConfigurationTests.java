package io.homa.spring.resilience;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.reactor.circuitbreaker.operator.CircuitBreakerOperator;
import io.github.resilience4j.retry.RetryRegistry;
import io.github.resilience4j.springboot.bulkhead.autoconfigure.BulkheadAutoConfiguration;
import io.github.resilience4j.springboot.circuitbreaker.autoconfigure.CircuitBreakerAutoConfiguration;
import io.github.resilience4j.springboot.ratelimiter.autoconfigure.RateLimiterAutoConfiguration;
import io.github.resilience4j.springboot.retry.autoconfigure.RetryAutoConfiguration;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.CallOptions;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.RpcMethod;
import io.homa.spring.observability.LoopbackRpc;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

/** {@link HomaResilienceAutoConfiguration} with Resilience4j's Spring Boot auto-configuration. */
class HomaResilienceAutoConfigurationTests {

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(CircuitBreakerAutoConfiguration.class,
                    BulkheadAutoConfiguration.class, RateLimiterAutoConfiguration.class, RetryAutoConfiguration.class,
                    HomaResilienceAutoConfiguration.class));

    @Test
    void shouldProvideInterceptorWhenResilience4jIsPresent() {
        this.contextRunner.run((context) -> {
            assertThat(context).hasSingleBean(HomaResilienceInterceptor.class);
            assertThat(context).hasSingleBean(CircuitBreakerRegistry.class);
            assertThat(context.getBean(HomaResilienceInterceptor.class).getOrder())
                    .isEqualTo(HomaResilienceInterceptor.ORDER);
        });
    }

    @Test
    void shouldBackOffWhenUserDefinesInterceptor() {
        this.contextRunner.withUserConfiguration(UserInterceptorConfiguration.class).run((context) -> {
            assertThat(context).hasSingleBean(HomaResilienceInterceptor.class);
            assertThat(context).hasBean("myResilience");
        });
    }

    @Test
    void shouldBeSwitchedOffByProperty() {
        this.contextRunner.withPropertyValues("homa.client.resilience.enabled=false")
                .run((context) -> assertThat(context).doesNotHaveBean(HomaResilienceInterceptor.class));
    }

    @Test
    void shouldBackOffWithoutRegistries() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HomaResilienceAutoConfiguration.class))
                .run((context) -> assertThat(context).doesNotHaveBean(HomaResilienceInterceptor.class));
    }

    @Test
    void shouldUseWhicheverRegistryExists() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RetryAutoConfiguration.class,
                        HomaResilienceAutoConfiguration.class))
                .run((context) -> {
                    assertThat(context).hasSingleBean(RetryRegistry.class);
                    assertThat(context).doesNotHaveBean(BulkheadRegistry.class);
                    assertThat(context).hasSingleBean(HomaResilienceInterceptor.class);
                });
    }

    @Test
    void shouldBackOffWithoutResilience4jReactor() {
        this.contextRunner.withClassLoader(new FilteredClassLoader(CircuitBreakerOperator.class))
                .run((context) -> assertThat(context).doesNotHaveBean(HomaResilienceInterceptor.class));
    }

    @Test
    void shouldFailOnBlankInstanceName() {
        this.contextRunner.withPropertyValues("homa.client.resilience.bulkhead.instance= ").run((context) -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining("homa.client.resilience.bulkhead.instance");
        });
    }

    @Test
    void shouldUseCircuitBreakerConfiguredInYamlForTheTargetService() {
        this.contextRunner.withPropertyValues(
                "resilience4j.circuitbreaker.instances.inventory.sliding-window-size=3",
                "resilience4j.circuitbreaker.instances.inventory.minimum-number-of-calls=3",
                "resilience4j.circuitbreaker.instances.inventory.failure-rate-threshold=50",
                "resilience4j.circuitbreaker.instances.inventory.wait-duration-in-open-state=1m")
                .run((context) -> {
                    AtomicInteger invocations = new AtomicInteger();
                    try (LoopbackRpc rpc = new LoopbackRpc()) {
                        rpc.dispatcher().register(RpcMethod.unary("inventory", "count", new Type[0], (args) -> {
                            invocations.incrementAndGet();
                            return Mono.error(new HomaException(HomaStatus.UNAVAILABLE, "database down"));
                        }));
                        HomaClient client = rpc.client(List.of(context.getBean(HomaResilienceInterceptor.class)),
                                "inventory");
                        for (int i = 0; i < 3; i++) {
                            assertThatThrownBy(() -> count(client)).isInstanceOf(HomaException.class)
                                    .hasNoCause();
                        }
                        assertThat(context.getBean(CircuitBreakerRegistry.class).circuitBreaker("inventory")
                                .getState()).isEqualTo(CircuitBreaker.State.OPEN);
                        assertThatThrownBy(() -> count(client)).hasCauseInstanceOf(CallNotPermittedException.class);
                        assertThat(invocations).hasValue(3);
                    }
                });
    }

    private static Integer count(HomaClient client) {
        return client.<Integer>call("inventory", "count", new Object[0], Integer.class, CallOptions.defaults())
                .block(Duration.ofSeconds(10));
    }

    @Configuration(proxyBeanMethods = false)
    static class UserInterceptorConfiguration {

        @Bean
        HomaResilienceInterceptor myResilience() {
            return new HomaResilienceInterceptor(null, null, null, null, new HomaResilienceProperties());
        }
    }
}
