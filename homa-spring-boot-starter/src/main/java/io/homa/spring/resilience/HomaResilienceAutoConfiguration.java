package io.homa.spring.resilience;

import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.ratelimiter.RateLimiterRegistry;
import io.github.resilience4j.reactor.circuitbreaker.operator.CircuitBreakerOperator;
import io.github.resilience4j.retry.RetryRegistry;
import io.homa.reactive.rpc.HomaClient;
import io.homa.spring.HomaAutoConfiguration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.ConfigurationCondition;

/**
 * Guards Homa client calls with Resilience4j: a {@link HomaResilienceInterceptor} bean, which the
 * {@link HomaClient} picks up with the other client interceptors. Needs
 * {@code resilience4j-spring-boot4} (its registries, configured under {@code resilience4j.*}) and
 * {@code resilience4j-reactor} on the classpath and at least one of the circuit breaker,
 * bulkhead, rate limiter and retry registries as a bean; {@code homa.client.resilience.enabled=false}
 * switches it off. Backs off when the application defines its own
 * {@link HomaResilienceInterceptor}.
 */
@AutoConfiguration(after = HomaAutoConfiguration.class, afterName = {
        "io.github.resilience4j.springboot.circuitbreaker.autoconfigure.CircuitBreakerAutoConfiguration",
        "io.github.resilience4j.springboot.bulkhead.autoconfigure.BulkheadAutoConfiguration",
        "io.github.resilience4j.springboot.ratelimiter.autoconfigure.RateLimiterAutoConfiguration",
        "io.github.resilience4j.springboot.retry.autoconfigure.RetryAutoConfiguration" })
@ConditionalOnClass({ HomaClient.class, CircuitBreakerOperator.class, CircuitBreakerRegistry.class,
        BulkheadRegistry.class, RateLimiterRegistry.class, RetryRegistry.class })
@ConditionalOnBooleanProperty(name = "homa.client.resilience.enabled", matchIfMissing = true)
@Conditional(HomaResilienceAutoConfiguration.OnAnyRegistry.class)
@EnableConfigurationProperties(HomaResilienceProperties.class)
public final class HomaResilienceAutoConfiguration {

    /** The interceptor over whichever Resilience4j registries exist. */
    @Bean
    @ConditionalOnMissingBean
    HomaResilienceInterceptor homaResilienceInterceptor(ObjectProvider<CircuitBreakerRegistry> circuitBreakers,
            ObjectProvider<BulkheadRegistry> bulkheads, ObjectProvider<RateLimiterRegistry> rateLimiters,
            ObjectProvider<RetryRegistry> retries, HomaResilienceProperties properties) {
        return new HomaResilienceInterceptor(circuitBreakers.getIfUnique(), bulkheads.getIfUnique(),
                rateLimiters.getIfUnique(), retries.getIfUnique(), properties);
    }

    /** Any one of the four Resilience4j registries is a bean. */
    static final class OnAnyRegistry extends AnyNestedCondition {

        OnAnyRegistry() {
            super(ConfigurationCondition.ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnBean(CircuitBreakerRegistry.class)
        static final class CircuitBreakers {
        }

        @ConditionalOnBean(BulkheadRegistry.class)
        static final class Bulkheads {
        }

        @ConditionalOnBean(RateLimiterRegistry.class)
        static final class RateLimiters {
        }

        @ConditionalOnBean(RetryRegistry.class)
        static final class Retries {
        }
    }
}
