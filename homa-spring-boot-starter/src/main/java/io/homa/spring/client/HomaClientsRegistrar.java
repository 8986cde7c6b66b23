package io.homa.spring.client;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

/**
 * Registers the clients that {@link EnableHomaClients @EnableHomaClients} and
 * {@link ImportHomaClients @ImportHomaClients} on one configuration class select, and marks the
 * selection as explicit so that the application's packages are not scanned.
 */
final class HomaClientsRegistrar extends HomaClientsRegistrarSupport {

    @Override
    public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
        if (!registry.containsBeanDefinition(HomaClientRegistrations.EXPLICIT_SELECTION_BEAN_NAME)) {
            RootBeanDefinition marker = new RootBeanDefinition(ExplicitSelection.class);
            marker.setRole(RootBeanDefinition.ROLE_INFRASTRUCTURE);
            registry.registerBeanDefinition(HomaClientRegistrations.EXPLICIT_SELECTION_BEAN_NAME, marker);
        }
        Set<Class<?>> clients = new LinkedHashSet<>();
        Set<String> packages = new LinkedHashSet<>();
        List<MergedAnnotation<?>> selections = new ArrayList<>();
        metadata.getAnnotations().stream(EnableHomaClients.class).forEach(selections::add);
        metadata.getAnnotations().stream(ImportHomaClients.class).forEach(selections::add);
        // Repeated @ImportHomaClients sit in their container, which class metadata does not unwrap.
        metadata.getAnnotations().stream(ImportHomaClients.Container.class).forEach((container) ->
                selections.addAll(List.of(container.getAnnotationArray("value", ImportHomaClients.class))));
        boolean anything = false;
        for (MergedAnnotation<?> selection : selections) {
            Class<?>[] listed = selection.getClassArray(
                    selection.getType() == EnableHomaClients.class ? "clients" : "value");
            String[] basePackages = selection.getStringArray("basePackages");
            Class<?>[] basePackageClasses = (selection.getType() == EnableHomaClients.class)
                    ? selection.getClassArray("basePackageClasses") : new Class<?>[0];
            clients.addAll(Arrays.asList(listed));
            for (String basePackage : basePackages) {
                if (StringUtils.hasText(basePackage)) {
                    packages.add(this.environment.resolveRequiredPlaceholders(basePackage.trim()));
                }
            }
            for (Class<?> type : basePackageClasses) {
                packages.add(ClassUtils.getPackageName(type));
            }
            anything |= listed.length > 0 || basePackages.length > 0 || basePackageClasses.length > 0;
        }
        if (!anything) {
            packages.add(ClassUtils.getPackageName(metadata.getClassName()));
        }
        clients.addAll(HomaClientRegistrations.scan(packages, this.environment, this.resourceLoader));
        HomaClientRegistrations.register(clients, registry, this.beanFactory);
    }

    /** Marks an explicit selection of clients; holds nothing. */
    static final class ExplicitSelection {
    }
}
