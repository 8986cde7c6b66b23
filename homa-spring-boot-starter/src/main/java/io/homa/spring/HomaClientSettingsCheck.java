package io.homa.spring;

import io.homa.spring.client.HomaExchange;
import io.homa.spring.client.HomaServiceProxyFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/**
 * Once all singletons exist, logs a WARN for each {@code homa.client.services.<service>.methods.<method>}
 * key that names a method no declarative client of that service declares (a typo, or a method
 * renamed since), with the methods that do exist. The declarative clients are the beans whose type
 * is a {@link HomaExchange @HomaExchange} interface; their method names are the ones
 * {@link HomaServiceProxyFactory} calls. A service no declarative client calls is not checked: a
 * program may call any method of it through {@code HomaClient}, which applies the same keys.
 */
final class HomaClientSettingsCheck implements SmartInitializingSingleton {

    private static final Logger logger = LoggerFactory.getLogger(HomaClientSettingsCheck.class);

    private final ListableBeanFactory beanFactory;

    private final HomaProperties.Client properties;

    private final HomaServiceProxyFactory proxyFactory;

    HomaClientSettingsCheck(ListableBeanFactory beanFactory, HomaProperties.Client properties,
            HomaServiceProxyFactory proxyFactory) {
        this.beanFactory = beanFactory;
        this.properties = properties;
        this.proxyFactory = proxyFactory;
    }

    @Override
    public void afterSingletonsInstantiated() {
        unusedMethodSettings().forEach(logger::warn);
    }

    /** One message per method key that no declarative client of its service declares. */
    List<String> unusedMethodSettings() {
        List<String> messages = new ArrayList<>();
        if (this.properties.getServices().values().stream().allMatch((settings) -> settings.getMethods().isEmpty())) {
            return messages;
        }
        Map<String, Set<String>> declared = declaredMethods();
        this.properties.getServices().forEach((service, settings) -> {
            Set<String> methods = declared.get(service);
            if (methods == null) {
                return;
            }
            settings.getMethods().forEach((method, methodSettings) -> {
                if (!methods.contains(method)) {
                    String key = "homa.client.services" + segment(service) + ".methods" + segment(method)
                            + ((methodSettings.getTimeout() != null) ? ".timeout" : "");
                    messages.add(key + ": no declarative client of service '" + service + "' declares a method '"
                            + method + "' (declared: " + String.join(", ", methods) + "); the setting is unused"
                            + " unless a HomaClient call names that method");
                }
            });
        });
        return messages;
    }

    /** Service to the methods its declarative clients declare, over every client bean. */
    private Map<String, Set<String>> declaredMethods() {
        Map<String, Set<String>> declared = new TreeMap<>();
        for (String beanName : this.beanFactory.getBeanNamesForAnnotation(HomaExchange.class)) {
            Class<?> beanType = this.beanFactory.getType(beanName);
            if (beanType == null) {
                continue;
            }
            // The interface itself, or, for a client already created, the interfaces of its proxy class.
            Set<Class<?>> types = beanType.isInterface() ? Set.of(beanType)
                    : ClassUtils.getAllInterfacesForClassAsSet(beanType);
            for (Class<?> type : types) {
                if (!AnnotatedElementUtils.hasAnnotation(type, HomaExchange.class)) {
                    continue;
                }
                String service;
                try {
                    service = this.proxyFactory.serviceName(type);
                } catch (IllegalStateException ex) {
                    continue; // a lazy client that will fail when created, saying why
                }
                declared.computeIfAbsent(service, (name) -> new TreeSet<>())
                        .addAll(this.proxyFactory.methodNames(type));
            }
        }
        return declared;
    }

    /** A map key as a property name segment: {@code .name}, or {@code [name]} when it holds a dot. */
    private static String segment(String name) {
        return name.contains(".") ? "[" + name + "]" : "." + name;
    }
}
