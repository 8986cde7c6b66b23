package io.homa.spring.observability;

import java.time.Duration;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/** Micrometer metrics of Homa calls and of the protocol, under {@code homa.metrics.*}. */
@ConfigurationProperties("homa.metrics")
public class HomaMetricsProperties implements InitializingBean {

    /**
     * Whether to record Homa metrics (client and server call timers, protocol counters) when a
     * MeterRegistry exists.
     */
    private boolean enabled = true;

    /**
     * Time between two samples of the engine's protocol counters (homa.packets.* etc.), 100ms..1h;
     * the protocol meters lag by at most this much.
     */
    private Duration protocolSampleInterval = Duration.ofSeconds(5);

    public boolean isEnabled() {
        return this.enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Duration getProtocolSampleInterval() {
        return this.protocolSampleInterval;
    }

    public void setProtocolSampleInterval(Duration protocolSampleInterval) {
        this.protocolSampleInterval = protocolSampleInterval;
    }

    /**
     * @throws InvalidConfigurationPropertyValueException naming
     *     {@code homa.metrics.protocol-sample-interval} if it is outside 100ms..1h
     */
    @Override
    public void afterPropertiesSet() {
        Duration interval = this.protocolSampleInterval;
        if (interval == null || interval.compareTo(Duration.ofMillis(100)) < 0
                || interval.compareTo(Duration.ofHours(1)) > 0) {
            throw new InvalidConfigurationPropertyValueException("homa.metrics.protocol-sample-interval", interval,
                    "must be between 100ms and 1h");
        }
    }
}
