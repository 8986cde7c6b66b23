package io.homa.spring.client;

import java.util.List;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfigurationPackages;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Registers every {@link HomaExchange @HomaExchange} interface in the application's packages
 * ({@link AutoConfigurationPackages}), unless {@link EnableHomaClients @EnableHomaClients} or
 * {@link ImportHomaClients @ImportHomaClients} made an explicit selection (user configuration is
 * processed before auto-configuration, so its marker is already registered). Imported by the
 * starter's auto-configuration.
 */
public final class AutoConfiguredHomaClientsRegistrar extends HomaClientsRegistrarSupport {

    @Override
    public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
        if (registry.containsBeanDefinition(HomaClientRegistrations.EXPLICIT_SELECTION_BEAN_NAME)
                || !AutoConfigurationPackages.has(this.beanFactory)) {
            return;
        }
        List<String> packages = AutoConfigurationPackages.get(this.beanFactory);
        HomaClientRegistrations.register(
                HomaClientRegistrations.scan(packages, this.environment, this.resourceLoader), registry,
                this.beanFactory);
    }
}
