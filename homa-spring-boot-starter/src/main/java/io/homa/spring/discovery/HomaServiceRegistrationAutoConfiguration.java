package io.homa.spring.discovery;

import com.netflix.appinfo.ApplicationInfoManager;
import io.homa.reactive.HomaTransport;
import io.homa.spring.HomaAutoConfiguration;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cloud.client.serviceregistry.Registration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * When the application registers itself with a Spring Cloud service registry (a
 * {@link Registration} bean: Eureka, Consul, Zookeeper...), publishes its Homa port in the
 * registration's metadata ({@link HomaRegistrationMetadata}), unless {@code homa.server.enabled}
 * is false (it exports no service then).
 *
 * <p>Eureka copies the metadata into the instance it registers when its
 * {@code ApplicationInfoManager} is created, which may be before the Homa endpoint has bound; with
 * Eureka on the classpath the port is therefore also put into that manager's runtime metadata,
 * which goes to the registry with the next registration or heartbeat.
 */
@AutoConfiguration(after = HomaAutoConfiguration.class)
@ConditionalOnClass({HomaTransport.class, Registration.class})
@ConditionalOnBooleanProperty(name = "homa.server.enabled", matchIfMissing = true)
@EnableConfigurationProperties(HomaDiscoveryProperties.class)
public final class HomaServiceRegistrationAutoConfiguration {

    /** Publishes the bound Homa port in the registration's metadata, if there is a registration. */
    @Bean
    @ConditionalOnMissingBean
    HomaRegistrationMetadata homaRegistrationMetadata(ObjectProvider<Registration> registration,
            ObjectProvider<HomaTransport> transport, HomaDiscoveryProperties discovery) {
        return new HomaRegistrationMetadata(registration::getIfUnique, transport::getIfUnique,
                discovery.getPortMetadataKey());
    }

    /** Eureka: the same entry in the instance that Eureka's client sends to the registry. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "com.netflix.appinfo.ApplicationInfoManager")
    static class EurekaInstanceMetadataConfiguration {

        @Bean
        SmartInitializingSingleton homaEurekaInstanceMetadata(ObjectProvider<ApplicationInfoManager> manager,
                HomaRegistrationMetadata registrationMetadata, HomaDiscoveryProperties discovery) {
            return () -> {
                ApplicationInfoManager eureka = manager.getIfUnique();
                int port = registrationMetadata.publish();
                if (eureka != null && port > 0) {
                    eureka.registerAppMetadata(Map.of(discovery.getPortMetadataKey(), Integer.toString(port)));
                }
            };
        }
    }
}
