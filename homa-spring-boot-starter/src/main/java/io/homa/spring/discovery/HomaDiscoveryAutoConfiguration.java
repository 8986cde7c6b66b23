package io.homa.spring.discovery;

import io.homa.reactive.HomaTransport;
import io.homa.reactive.rpc.ServiceResolver;
import io.homa.reactive.rpc.StaticServiceResolver;
import io.homa.spring.HomaAutoConfiguration;
import io.homa.spring.HomaProperties;
import io.homa.spring.internal.HomaPropertiesConverters;
import io.homa.spring.internal.HomaSettingsMapper;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.discovery.ReactiveDiscoveryClient;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * Resolves Homa services through Spring Cloud when Spring Cloud Commons is on the classpath: the
 * {@link ServiceResolver} bean becomes a {@link DiscoveryServiceResolver} that sends a service
 * listed in {@code homa.client.peers} to its static peers and looks any other up on every call,
 * through Spring Cloud LoadBalancer when its {@code LoadBalancerClientFactory} is present, else
 * through the application's {@link ReactiveDiscoveryClient}, else its blocking
 * {@link DiscoveryClient} (both round robin). With none of them it is the plain
 * {@link StaticServiceResolver}.
 *
 * <p>Spring Cloud's own conditions apply: its reactive discovery clients need Spring WebFlux on
 * the classpath (without it Spring Cloud registers only blocking ones, which LoadBalancer and
 * this resolver also use), and Spring Cloud LoadBalancer 5.0 needs {@code spring-web}.
 *
 * <p>Runs before {@link HomaAutoConfiguration}, whose static resolver then backs off; backs off
 * itself when the application defines a {@link ServiceResolver}, and is switched off with
 * {@code homa.client.discovery.enabled=false}.
 */
@AutoConfiguration(before = HomaAutoConfiguration.class)
@ConditionalOnClass({HomaTransport.class, DiscoveryClient.class, ReactiveDiscoveryClient.class})
@ConditionalOnBooleanProperty(name = "homa.client.discovery.enabled", matchIfMissing = true)
@EnableConfigurationProperties({HomaProperties.class, HomaDiscoveryProperties.class})
@Import(HomaPropertiesConverters.class)
public final class HomaDiscoveryAutoConfiguration {

    /**
     * Static peers first, then Spring Cloud LoadBalancer, else a discovery client. The
     * Spring Cloud beans are looked up when this bean is created, so the order of Spring Cloud's
     * auto-configurations does not matter.
     */
    @Bean
    @ConditionalOnMissingBean
    ServiceResolver homaDiscoveryServiceResolver(HomaProperties properties, HomaDiscoveryProperties discovery,
            ObjectProvider<ReactiveLoadBalancer.Factory<ServiceInstance>> loadBalancers,
            ObjectProvider<ReactiveDiscoveryClient> reactiveDiscoveryClients,
            ObjectProvider<DiscoveryClient> blockingDiscoveryClients) {
        StaticServiceResolver staticPeers = StaticServiceResolver.ofPeers(HomaSettingsMapper.peerAddresses(properties.getClient()));
        ReactiveLoadBalancer.Factory<ServiceInstance> loadBalancerFactory = loadBalancers.getIfUnique();
        if (loadBalancerFactory != null) {
            return DiscoveryServiceResolver.loadBalanced(staticPeers, loadBalancerFactory,
                    discovery.getPortMetadataKey());
        }
        ReactiveDiscoveryClient reactiveClient = reactiveDiscoveryClients.getIfUnique();
        if (reactiveClient != null) {
            return DiscoveryServiceResolver.roundRobin(staticPeers, reactiveClient, discovery.getPortMetadataKey());
        }
        DiscoveryClient blockingClient = blockingDiscoveryClients.getIfUnique();
        if (blockingClient != null) {
            return DiscoveryServiceResolver.roundRobin(staticPeers, blockingClient, discovery.getPortMetadataKey());
        }
        return staticPeers;
    }
}
