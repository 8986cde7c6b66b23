package io.homa.spring.discovery;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.util.StringUtils;

/**
 * How Homa clients use Spring Cloud discovery, under {@code homa.client.discovery.*}. Only read
 * when Spring Cloud Commons is on the classpath.
 */
@ConfigurationProperties("homa.client.discovery")
public class HomaDiscoveryProperties implements InitializingBean {

    /** Default {@link #getPortMetadataKey() metadata key} of an instance's Homa port. */
    public static final String DEFAULT_PORT_METADATA_KEY = "homa-port";

    /**
     * Whether services without a static peer (homa.client.peers) are resolved through Spring
     * Cloud discovery and load balancing, when Spring Cloud Commons is on the classpath.
     */
    private boolean enabled = true;

    /**
     * Metadata key of a discovered service instance that holds its Homa (UDP) port, 1..65535;
     * an instance without it is called on its registered port.
     */
    private String portMetadataKey = "homa-port";

    public boolean isEnabled() {
        return this.enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getPortMetadataKey() {
        return this.portMetadataKey;
    }

    public void setPortMetadataKey(String portMetadataKey) {
        this.portMetadataKey = portMetadataKey;
    }

    /**
     * Checks the bound values.
     *
     * @throws InvalidConfigurationPropertyValueException naming
     *     {@code homa.client.discovery.port-metadata-key} if it is empty or blank
     */
    @Override
    public void afterPropertiesSet() {
        if (!StringUtils.hasText(this.portMetadataKey)) {
            throw new InvalidConfigurationPropertyValueException("homa.client.discovery.port-metadata-key",
                    this.portMetadataKey, "must not be empty (the default is " + DEFAULT_PORT_METADATA_KEY + ")");
        }
    }
}
