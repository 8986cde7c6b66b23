package io.homa.spring.discovery;

import io.homa.reactive.HomaTransport;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.cloud.client.serviceregistry.Registration;
import org.springframework.util.StringUtils;

/**
 * Publishes the Homa (UDP) port of this application's endpoint in its Spring Cloud service
 * registration: metadata entry {@code homa-port} (the key is
 * {@code homa.client.discovery.port-metadata-key}, the one {@link DiscoveryServiceResolver} reads)
 * = the port the endpoint bound, so also the port picked when {@code homa.server.port} is 0. A
 * registration carries the application's HTTP port (or {@code server.port}'s default when there is
 * no web server); with this entry the clients that discover the application call its Homa endpoint.
 *
 * <p>Runs once every singleton exists (the endpoint binds when its bean is created) and before
 * any lifecycle starts, so before Spring Cloud's auto-registration registers the instance (Eureka,
 * Consul and Zookeeper register when their lifecycle starts or the web server is up). An entry
 * that the application already set (e.g. {@code eureka.instance.metadata-map.homa-port}) is left
 * as it is.
 */
public final class HomaRegistrationMetadata implements SmartInitializingSingleton {

    private static final Logger logger = LoggerFactory.getLogger(HomaRegistrationMetadata.class);

    private final Supplier<@Nullable Registration> registration;

    private final Supplier<@Nullable HomaTransport> transport;

    private final String portMetadataKey;

    /**
     * @param registration the application's registration, or {@code null} when it has none
     * @param transport the Homa endpoint, or {@code null} when there is none
     * @param portMetadataKey the metadata key, not empty
     * @throws IllegalArgumentException if {@code portMetadataKey} is empty
     */
    public HomaRegistrationMetadata(Supplier<@Nullable Registration> registration,
            Supplier<@Nullable HomaTransport> transport, String portMetadataKey) {
        if (!StringUtils.hasText(portMetadataKey)) {
            throw new IllegalArgumentException("portMetadataKey must not be empty, was '" + portMetadataKey + "'");
        }
        this.registration = Objects.requireNonNull(registration, "registration must not be null");
        this.transport = Objects.requireNonNull(transport, "transport must not be null");
        this.portMetadataKey = portMetadataKey;
    }

    @Override
    public void afterSingletonsInstantiated() {
        publish();
    }

    /**
     * Puts the endpoint's bound port into the registration's metadata unless the entry is there.
     *
     * @return the port now in the registration's metadata (1..65535), or -1 when there is no
     *     registration, no endpoint, or the registration's metadata cannot be changed (logged as a
     *     warning naming the property to set instead)
     */
    public int publish() {
        Registration target = this.registration.get();
        HomaTransport endpoint = this.transport.get();
        if (target == null || endpoint == null) {
            return -1;
        }
        Map<String, String> metadata = target.getMetadata();
        String present = (metadata != null) ? metadata.get(this.portMetadataKey) : null;
        if (present != null) {
            logger.debug("Registration of '{}' already has {}={}", target.getServiceId(), this.portMetadataKey,
                    present);
            return parsePort(present);
        }
        int port = endpoint.localAddress().getPort();
        try {
            Objects.requireNonNull(metadata, "metadata").put(this.portMetadataKey, Integer.toString(port));
        }
        catch (UnsupportedOperationException | NullPointerException ex) {
            logger.warn("Cannot publish the Homa port {} in the registration of '{}' ({} has no modifiable metadata):"
                    + " set its metadata '{}' yourself, or discovered clients call its registered port {}", port,
                    target.getServiceId(), target.getClass().getName(), this.portMetadataKey, target.getPort());
            return -1;
        }
        logger.info("Registration of '{}' publishes its Homa port: {}={}", target.getServiceId(),
                this.portMetadataKey, port);
        return port;
    }

    private static int parsePort(String value) {
        try {
            int port = Integer.parseInt(value.trim());
            return (port >= 1 && port <= 65535) ? port : -1;
        }
        catch (NumberFormatException ex) {
            return -1;
        }
    }
}
