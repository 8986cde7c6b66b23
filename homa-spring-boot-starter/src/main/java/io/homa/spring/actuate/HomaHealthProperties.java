package io.homa.spring.actuate;

import java.time.Duration;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * The {@code homa} health indicator, under {@code homa.health.*}; switch it off with
 * {@code management.health.homa.enabled=false}.
 */
@ConfigurationProperties("homa.health")
public class HomaHealthProperties implements InitializingBean {

    /** How long the engine's event loop has to answer a health check before the endpoint is DOWN, 1ms..1m. */
    private Duration timeout = Duration.ofSeconds(1);

    public Duration getTimeout() {
        return this.timeout;
    }

    public void setTimeout(Duration timeout) {
        this.timeout = timeout;
    }

    /**
     * @throws InvalidConfigurationPropertyValueException naming {@code homa.health.timeout} if it is
     *     outside 1ms..1m
     */
    @Override
    public void afterPropertiesSet() {
        if (this.timeout == null || this.timeout.compareTo(Duration.ofMillis(1)) < 0
                || this.timeout.compareTo(Duration.ofMinutes(1)) > 0) {
            throw new InvalidConfigurationPropertyValueException("homa.health.timeout", this.timeout,
                    "must be between 1ms and 1m");
        }
    }
}
