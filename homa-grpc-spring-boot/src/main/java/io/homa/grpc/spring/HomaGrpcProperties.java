package io.homa.grpc.spring;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * {@code homa.grpc.*}: gRPC over the application's Homa endpoint. The endpoint itself (port,
 * protocol, security) is configured by {@code homa.*} as for {@code @HomaService} beans.
 */
@ConfigurationProperties("homa.grpc")
public class HomaGrpcProperties {

    /** The largest {@code homa.grpc.client.default-deadline} and {@code resolve-timeout}. */
    static final Duration MAX_DURATION = Duration.ofDays(1);

    private final Server server = new Server();
    private final Client client = new Client();

    public Server getServer() {
        return server;
    }

    public Client getClient() {
        return client;
    }

    /**
     * Fails start-up on a value out of range, naming the property, its value and the range.
     *
     * @throws InvalidConfigurationPropertyValueException for the first bad value
     */
    void validate() {
        requireRange("homa.grpc.client.default-deadline", client.getDefaultDeadline(), Duration.ZERO,
                "0s..1d (0 = no deadline)");
        requireRange("homa.grpc.client.resolve-timeout", client.getResolveTimeout(), Duration.ofMillis(1),
                "1ms..1d");
    }

    private static void requireRange(String property, Duration value, Duration min, String range) {
        if (value == null || value.compareTo(min) < 0 || value.compareTo(MAX_DURATION) > 0) {
            throw new InvalidConfigurationPropertyValueException(property, value, "must be within " + range);
        }
    }

    /** The server side: the application's {@code BindableService} beans served over Homa. */
    public static class Server {

        /**
         * Whether to serve the application's BindableService beans on the Homa endpoint, on the
         * same port as @HomaService beans. When true, Spring Boot's own gRPC server (grpc-netty)
         * backs off; set it to false to serve over grpc-netty only.
         */
        private boolean enabled = true;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** The client side: channels for {@code homa://} targets. */
    public static class Client {

        /**
         * Deadline given to each call of a homa:// channel whose stub sets none, 0s..1d (a plain
         * number means milliseconds; 0 = none, as gRPC's default). A call past it fails with
         * DEADLINE_EXCEEDED at the client and is cancelled at the server.
         */
        private Duration defaultDeadline = Duration.ZERO;

        /**
         * How long creating a channel for homa://service-name may wait for the service resolver
         * (homa.client.peers or service discovery) to name an endpoint, 1ms..1d.
         */
        private Duration resolveTimeout = Duration.ofSeconds(10);

        public Duration getDefaultDeadline() {
            return defaultDeadline;
        }

        public void setDefaultDeadline(Duration defaultDeadline) {
            this.defaultDeadline = defaultDeadline;
        }

        public Duration getResolveTimeout() {
            return resolveTimeout;
        }

        public void setResolveTimeout(Duration resolveTimeout) {
            this.resolveTimeout = resolveTimeout;
        }
    }
}
