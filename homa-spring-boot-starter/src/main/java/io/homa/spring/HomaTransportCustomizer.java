package io.homa.spring;

import io.homa.reactive.HomaTransportSpec;

/**
 * Customizes the auto-configured endpoint's {@link HomaTransportSpec} before it binds, the way
 * Spring Boot's {@code NettyServerCustomizer} customizes a web server: another clock, another
 * handler scheduler, other loops. Every bean of this type is applied, in
 * {@link org.springframework.core.annotation.Order @Order}.
 */
@FunctionalInterface
public interface HomaTransportCustomizer {

    /**
     * @param spec the spec so far (immutable: its setters return a new one)
     * @return the spec to bind with
     */
    HomaTransportSpec customize(HomaTransportSpec spec);
}
