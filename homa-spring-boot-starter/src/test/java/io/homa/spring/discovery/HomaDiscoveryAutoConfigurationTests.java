package io.homa.spring.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.reactive.rpc.ServiceResolver;
import io.homa.reactive.rpc.StaticServiceResolver;
import io.homa.spring.HomaAutoConfiguration;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.discovery.ReactiveDiscoveryClient;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

/** Which {@link ServiceResolver} the application gets with and without Spring Cloud. */
class HomaDiscoveryAutoConfigurationTests {

    private static final Duration WAIT = Duration.ofSeconds(5);

    /** Spring Cloud's reactive discovery (simple client) and LoadBalancer, no Homa endpoint (nothing binds). */
    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HomaDiscoveryAutoConfiguration.class))
            .withConfiguration(SpringCloudTestConfigurations.DISCOVERY)
            .withConfiguration(SpringCloudTestConfigurations.LOAD_BALANCER);

    @Test
    void shouldResolveThroughSpringCloudLoadBalancerWhenPresent() {
        this.contextRunner.withPropertyValues("homa.client.peers.static-one=127.0.0.1:4001,127.0.0.1:4002")
                .run((context) -> {
                    assertThat(context).hasSingleBean(ServiceResolver.class);
                    DiscoveryServiceResolver resolver = context.getBean(DiscoveryServiceResolver.class);
                    assertThat(resolver.discovery()).isEqualTo("Spring Cloud LoadBalancer");
                    assertThat(resolver.staticPeers().peers()).containsOnlyKeys("static-one");
                    assertThat(resolver.staticPeers().peers().get("static-one")).containsExactly(
                            new InetSocketAddress("127.0.0.1", 4001), new InetSocketAddress("127.0.0.1", 4002));
                });
    }

    @Test
    void shouldUseTheReactiveDiscoveryClientWithoutLoadBalancer() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HomaDiscoveryAutoConfiguration.class))
                .withConfiguration(SpringCloudTestConfigurations.DISCOVERY)
                .run((context) -> assertThat(context.getBean(DiscoveryServiceResolver.class).discovery())
                        .isEqualTo("discovery client 'Composite Reactive Discovery Client'"));
    }

    @Test
    void shouldUseTheBlockingDiscoveryClientWithoutWebFlux() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HomaDiscoveryAutoConfiguration.class))
                .withConfiguration(SpringCloudTestConfigurations.DISCOVERY)
                .withClassLoader(new FilteredClassLoader("org.springframework.web.reactive"))
                .run((context) -> {
                    assertThat(context).doesNotHaveBean(ReactiveDiscoveryClient.class);
                    assertThat(context.getBean(DiscoveryServiceResolver.class).discovery())
                            .isEqualTo("discovery client 'Composite Discovery Client'");
                });
    }

    @Test
    void shouldKeepTheStaticResolverWhenSpringCloudHasNoDiscoveryClient() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(HomaDiscoveryAutoConfiguration.class))
                .withPropertyValues("homa.client.peers.who=127.0.0.1:4001")
                .run((context) -> {
                    assertThat(context).hasSingleBean(ServiceResolver.class);
                    assertThat(context.getBean(ServiceResolver.class)).isExactlyInstanceOf(StaticServiceResolver.class);
                });
    }

    @Test
    void shouldBackOffWithoutSpringCloudOnTheClasspath() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HomaDiscoveryAutoConfiguration.class,
                        HomaAutoConfiguration.class))
                .withClassLoader(new FilteredClassLoader("org.springframework.cloud"))
                .withPropertyValues("homa.server.port=0", "homa.server.bind-address=127.0.0.1",
                        "homa.client.peers.who=127.0.0.1:4001,127.0.0.1:4002")
                .run((context) -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(HomaDiscoveryAutoConfiguration.class);
                    ServiceResolver resolver = context.getBean(ServiceResolver.class);
                    assertThat(resolver).isExactlyInstanceOf(StaticServiceResolver.class);
                    assertThat(List.of(resolver.resolve("who").block(WAIT), resolver.resolve("who").block(WAIT)))
                            .containsExactly(new InetSocketAddress("127.0.0.1", 4001),
                                    new InetSocketAddress("127.0.0.1", 4002));
                });
    }

    @Test
    void shouldBackOffWhenDisabled() {
        this.contextRunner.withPropertyValues("homa.client.discovery.enabled=false").run((context) -> {
            assertThat(context).doesNotHaveBean(HomaDiscoveryAutoConfiguration.class);
            assertThat(context).doesNotHaveBean(ServiceResolver.class);
        });
    }

    @Test
    void shouldBackOffFromTheApplicationsResolver() {
        this.contextRunner.withUserConfiguration(OwnResolver.class).run((context) -> {
            assertThat(context).hasSingleBean(ServiceResolver.class);
            assertThat(context.getBean(ServiceResolver.class)).isSameAs(OwnResolver.RESOLVER);
        });
    }

    @Test
    void shouldTakeThePortMetadataKeyFromProperties() {
        this.contextRunner.withPropertyValues("homa.client.discovery.port-metadata-key=udp-port").run((context) ->
                assertThat(context.getBean(HomaDiscoveryProperties.class).getPortMetadataKey()).isEqualTo("udp-port"));
    }

    @Test
    void shouldFailToStartWithAnEmptyPortMetadataKey() {
        this.contextRunner.withPropertyValues("homa.client.discovery.port-metadata-key= ").run((context) -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining("homa.client.discovery.port-metadata-key")
                    .hasMessageContaining("must not be empty");
        });
    }

    @Test
    void shouldFailToStartWithABadStaticPeer() {
        this.contextRunner.withPropertyValues("homa.client.peers.who=127.0.0.1:4001,nohost").run((context) -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining("homa.client.peers.who");
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnResolver {

        static final ServiceResolver RESOLVER = (service) -> Mono.just(new InetSocketAddress("127.0.0.1", 1));

        @Bean
        ServiceResolver ownResolver() {
            return RESOLVER;
        }
    }
}
