package io.homa.spring.resilience;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.util.StringUtils;

/**
 * Which Resilience4j instances guard {@link io.homa.reactive.rpc.HomaClient} calls, under
 * {@code homa.client.resilience.*}. The instances themselves are configured the Resilience4j way,
 * under {@code resilience4j.circuitbreaker.instances.<service>},
 * {@code resilience4j.bulkhead.instances.<name>}, {@code resilience4j.ratelimiter.instances.<name>}
 * and {@code resilience4j.retry.instances.<name>}.
 */
@ConfigurationProperties("homa.client.resilience")
public class HomaResilienceProperties implements InitializingBean {

    /** Default instance name of the per-client bulkhead, rate limiter and retry. */
    public static final String DEFAULT_INSTANCE = "homa-client";

    /** Whether Resilience4j guards Homa client calls (when it is on the classpath). */
    private boolean enabled = true;

    private final CircuitBreaker circuitBreaker = new CircuitBreaker();

    private final Bulkhead bulkhead = new Bulkhead();

    private final RateLimiter rateLimiter = new RateLimiter();

    private final Retry retry = new Retry();

    public boolean isEnabled() {
        return this.enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public CircuitBreaker getCircuitBreaker() {
        return this.circuitBreaker;
    }

    public Bulkhead getBulkhead() {
        return this.bulkhead;
    }

    public RateLimiter getRateLimiter() {
        return this.rateLimiter;
    }

    public Retry getRetry() {
        return this.retry;
    }

    /**
     * Checks the instance names.
     *
     * @throws InvalidConfigurationPropertyValueException naming the property if an instance name is
     *     blank
     */
    @Override
    public void afterPropertiesSet() {
        checkName("homa.client.resilience.bulkhead.instance", this.bulkhead.getInstance());
        checkName("homa.client.resilience.rate-limiter.instance", this.rateLimiter.getInstance());
        checkName("homa.client.resilience.retry.instance", this.retry.getInstance());
    }

    private static void checkName(String property, String value) {
        if (!StringUtils.hasText(value)) {
            throw new InvalidConfigurationPropertyValueException(property, value,
                    "must be the name of a Resilience4j instance (not blank)");
        }
    }

    /** The circuit breakers: one per target service, named after the service. */
    public static class CircuitBreaker {

        /**
         * Whether each target service gets a circuit breaker named after it (configured under
         * resilience4j.circuitbreaker.instances.<service>, else from the default config).
         */
        private boolean enabled = true;

        public boolean isEnabled() {
            return this.enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** The per-client bulkhead. */
    public static class Bulkhead {

        /**
         * Whether the client's calls pass the bulkhead named by "instance", when that instance is
         * configured (resilience4j.bulkhead.instances.<instance>).
         */
        private boolean enabled = true;

        /** Name of the Resilience4j bulkhead that limits the client's concurrent calls. */
        private String instance = "homa-client";

        public boolean isEnabled() {
            return this.enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public String getInstance() {
            return this.instance;
        }

        public void setInstance(String instance) {
            this.instance = instance;
        }
    }

    /** The per-client rate limiter. */
    public static class RateLimiter {

        /**
         * Whether the client's calls pass the rate limiter named by "instance", when that instance
         * is configured (resilience4j.ratelimiter.instances.<instance>).
         */
        private boolean enabled = true;

        /** Name of the Resilience4j rate limiter that limits the client's call rate. */
        private String instance = "homa-client";

        public boolean isEnabled() {
            return this.enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public String getInstance() {
            return this.instance;
        }

        public void setInstance(String instance) {
            this.instance = instance;
        }
    }

    /** Retries of idempotent calls, and of any call the server refused unexecuted. */
    public static class Retry {

        /**
         * Whether idempotent unary calls are retried on service failures (UNAVAILABLE,
         * DEADLINE_EXCEEDED, INTERNAL, timeouts). Calls not marked idempotent are retried only
         * when the server refused them without executing them (server overloaded or shutting
         * down), which cannot run them twice.
         */
        private boolean enabled = true;

        /**
         * Name of the Resilience4j retry (resilience4j.retry.instances.<instance>; when absent,
         * Resilience4j's default config: 3 attempts, 500ms apart).
         */
        private String instance = "homa-client";

        public boolean isEnabled() {
            return this.enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public String getInstance() {
            return this.instance;
        }

        public void setInstance(String instance) {
            this.instance = instance;
        }
    }
}
