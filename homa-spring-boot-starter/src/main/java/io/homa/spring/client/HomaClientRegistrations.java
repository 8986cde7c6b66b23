package io.homa.spring.client;

import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Set;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.annotation.AnnotatedBeanDefinition;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.annotation.ClassPathScanningCandidateComponentProvider;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ResourceLoader;
import org.springframework.core.type.filter.AnnotationTypeFilter;
import org.springframework.util.ClassUtils;

/**
 * Finds {@link HomaExchange @HomaExchange} interfaces and registers one bean per interface, named
 * after the interface's fully qualified name; the bean is made by the context's
 * {@link HomaServiceProxyFactory}. An interface already registered is skipped, so the same
 * client may be selected twice.
 */
final class HomaClientRegistrations {

    /**
     * Name of the bean that marks an explicit selection ({@code @EnableHomaClients} or
     * {@code @ImportHomaClients}): while it exists the application's packages are not scanned.
     */
    static final String EXPLICIT_SELECTION_BEAN_NAME = "io.homa.spring.client.explicitHomaClientSelection";

    private HomaClientRegistrations() {
    }

    /** The interfaces annotated {@code @HomaExchange} under the packages, sorted by name. */
    static Set<Class<?>> scan(Collection<String> basePackages, Environment environment, ResourceLoader resourceLoader) {
        ClassPathScanningCandidateComponentProvider scanner = new ClassPathScanningCandidateComponentProvider(false,
                environment) {
            @Override
            protected boolean isCandidateComponent(AnnotatedBeanDefinition definition) {
                return definition.getMetadata().isInterface() && definition.getMetadata().isIndependent()
                        && !definition.getMetadata().isAnnotation();
            }
        };
        scanner.setResourceLoader(resourceLoader);
        scanner.addIncludeFilter(new AnnotationTypeFilter(HomaExchange.class, true, true));
        Set<String> names = new java.util.TreeSet<>();
        for (String basePackage : basePackages) {
            for (BeanDefinition candidate : scanner.findCandidateComponents(basePackage)) {
                names.add(candidate.getBeanClassName());
            }
        }
        Set<Class<?>> types = new LinkedHashSet<>();
        for (String name : names) {
            types.add(ClassUtils.resolveClassName(name, resourceLoader.getClassLoader()));
        }
        return types;
    }

    /**
     * Registers a client bean for each interface.
     *
     * @throws IllegalStateException naming the type if it is not an interface annotated
     *     {@code @HomaExchange}
     */
    static void register(Collection<Class<?>> clients, BeanDefinitionRegistry registry, BeanFactory beanFactory) {
        for (Class<?> client : clients) {
            if (!client.isInterface() || client.isAnnotation()
                    || !AnnotatedElementUtils.hasAnnotation(client, HomaExchange.class)) {
                throw new IllegalStateException("Homa client " + client.getName()
                        + " must be an interface annotated @HomaExchange");
            }
            String beanName = client.getName();
            if (registry.containsBeanDefinition(beanName)) {
                continue;
            }
            registry.registerBeanDefinition(beanName, definition(client, beanFactory));
        }
    }

    private static <T> RootBeanDefinition definition(Class<T> client, BeanFactory beanFactory) {
        RootBeanDefinition definition = new RootBeanDefinition(client,
                () -> beanFactory.getBean(HomaServiceProxyFactory.class).createClient(client));
        definition.setTargetType(client);
        return definition;
    }
}
