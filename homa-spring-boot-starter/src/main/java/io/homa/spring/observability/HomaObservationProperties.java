package io.homa.spring.observability;

import org.springframework.boot.context.properties.ConfigurationProperties;

/** Micrometer Observations (tracing) of Homa calls, under {@code homa.observation.*}. */
@ConfigurationProperties("homa.observation")
public class HomaObservationProperties {

    /**
     * Whether to wrap client and server calls in Micrometer Observations (spans with a tracer, trace
     * context in the request metadata) when an ObservationRegistry exists.
     */
    private boolean enabled = true;

    public boolean isEnabled() {
        return this.enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }
}
