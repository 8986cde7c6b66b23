package io.homa.spring.actuate;

import io.homa.reactive.HomaTransport;
import io.homa.spring.HomaAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The {@code homa} health indicator ({@link HomaHealthIndicator}, bean {@code homaHealthIndicator})
 * when Spring Boot's health support ({@code spring-boot-health}, part of the actuator starter) is
 * on the classpath and there is one {@link HomaTransport}. Backs off when the application defines
 * a bean named {@code homaHealthIndicator}; {@code management.health.homa.enabled=false} switches
 * it off.
 */
@AutoConfiguration(after = HomaAutoConfiguration.class)
@ConditionalOnClass({ HomaTransport.class, ReactiveHealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
@ConditionalOnSingleCandidate(HomaTransport.class)
@ConditionalOnEnabledHealthIndicator("homa")
@EnableConfigurationProperties(HomaHealthProperties.class)
public final class HomaHealthContributorAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "homaHealthIndicator")
    HomaHealthIndicator homaHealthIndicator(HomaTransport transport, HomaHealthProperties properties) {
        return new HomaHealthIndicator(transport, properties.getTimeout());
    }
}
