package io.homa.spring.discovery;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.cloud.client.discovery.composite.CompositeDiscoveryClientAutoConfiguration;
import org.springframework.cloud.client.discovery.composite.reactive.ReactiveCompositeDiscoveryClientAutoConfiguration;
import org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration;
import org.springframework.cloud.client.discovery.simple.reactive.SimpleReactiveDiscoveryClientAutoConfiguration;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerCacheAutoConfiguration;

/** The Spring Cloud auto-configurations an application with the simple discovery client gets. */
final class SpringCloudTestConfigurations {

    /** Spring Cloud's simple discovery clients (reactive and blocking), without LoadBalancer. */
    static final AutoConfigurations DISCOVERY = AutoConfigurations.of(UtilAutoConfiguration.class,
            SimpleDiscoveryClientAutoConfiguration.class, CompositeDiscoveryClientAutoConfiguration.class,
            SimpleReactiveDiscoveryClientAutoConfiguration.class,
            ReactiveCompositeDiscoveryClientAutoConfiguration.class);

    /** Spring Cloud LoadBalancer with its (Caffeine) instance cache. */
    static final AutoConfigurations LOAD_BALANCER = AutoConfigurations.of(LoadBalancerAutoConfiguration.class,
            LoadBalancerCacheAutoConfiguration.class);

    private SpringCloudTestConfigurations() {
    }
}
