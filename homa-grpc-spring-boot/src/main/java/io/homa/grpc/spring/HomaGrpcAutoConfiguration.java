package io.homa.grpc.spring;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

import io.grpc.BindableService;
import io.grpc.ClientInterceptor;
import io.homa.grpc.HomaManagedChannel;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.ServiceResolver;
import io.homa.spring.HomaAutoConfiguration;
import io.homa.spring.HomaProperties;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.grpc.client.ClientInterceptorFilter;
import org.springframework.grpc.client.GlobalClientInterceptor;
import org.springframework.grpc.client.GrpcChannelFactory;
import org.springframework.grpc.server.service.DefaultGrpcServiceConfigurer;
import org.springframework.grpc.server.service.DefaultGrpcServiceDiscoverer;
import org.springframework.grpc.server.service.GrpcServiceConfigurer;
import org.springframework.grpc.server.service.GrpcServiceDiscoverer;
import org.springframework.grpc.server.service.ServerInterceptorFilter;

/**
 * gRPC over the Homa endpoint of {@link HomaAutoConfiguration}, for spring-grpc applications:
 * <ul>
 *   <li>a {@link HomaGrpcChannelFactory} for {@code homa://} targets (beside Spring Boot's
 *       grpc-netty channel factory, if any, in its {@code CompositeGrpcChannelFactory});</li>
 *   <li>when the application has {@link BindableService} beans and {@code homa.grpc.server.enabled}
 *       is true (the default), a {@link HomaGrpcServerFactory} serving them, with spring-grpc's
 *       global and per-service interceptors, on the endpoint's dispatcher and port; being a
 *       {@code GrpcServerFactory} bean, it makes Spring Boot's grpc-netty server back off.</li>
 * </ul>
 * Runs before Spring Boot's gRPC auto-configurations so that theirs back off where ours exist. A
 * {@code homa.grpc.*} value out of range fails start-up with an
 * {@code InvalidConfigurationPropertyValueException} naming the property and its range.
 */
@AutoConfiguration(after = HomaAutoConfiguration.class, beforeName = {
        "org.springframework.boot.grpc.server.autoconfigure.GrpcServerAutoConfiguration",
        "org.springframework.boot.grpc.client.autoconfigure.GrpcClientAutoConfiguration",
        "org.springframework.boot.grpc.client.autoconfigure.CompositeChannelFactoryAutoConfiguration" })
@ConditionalOnClass({ GrpcChannelFactory.class, HomaManagedChannel.class, HomaTransport.class })
@ConditionalOnBean(HomaTransport.class)
@EnableConfigurationProperties(HomaGrpcProperties.class)
public final class HomaGrpcAutoConfiguration {

    /**
     * Channels for {@code homa://host:port} and {@code homa://service-name} on the application's
     * endpoint, with the {@link GlobalClientInterceptor @GlobalClientInterceptor} beans and
     * {@code homa.grpc.client.default-deadline}.
     */
    @Bean
    @ConditionalOnMissingBean
    HomaGrpcChannelFactory homaGrpcChannelFactory(HomaTransport transport, ServiceResolver resolver,
            HomaGrpcProperties properties, ApplicationContext context,
            ObjectProvider<ClientInterceptorFilter> interceptorFilter) {
        properties.validate();
        HomaGrpcChannelFactory factory = new HomaGrpcChannelFactory(transport, resolver,
                () -> globalClientInterceptors(context), properties.getClient().getDefaultDeadline(),
                properties.getClient().getResolveTimeout());
        factory.setInterceptorFilter(interceptorFilter.getIfUnique());
        return factory;
    }

    /** The {@code @GlobalClientInterceptor} beans, in {@code @Order}. */
    private static List<ClientInterceptor> globalClientInterceptors(ApplicationContext context) {
        Set<Object> global = Collections.newSetFromMap(new IdentityHashMap<>());
        global.addAll(context.getBeansWithAnnotation(GlobalClientInterceptor.class).values());
        return context.getBeanProvider(ClientInterceptor.class).orderedStream().filter(global::contains).toList();
    }

    /** Serves the {@link BindableService} beans over Homa. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "homa.grpc.server.enabled", matchIfMissing = true)
    @ConditionalOnBean(BindableService.class)
    static class HomaGrpcServerConfiguration {

        /** The BindableService beans (with their {@code @GrpcService} settings), as Spring Boot finds them. */
        @Bean
        @ConditionalOnMissingBean(GrpcServiceDiscoverer.class)
        DefaultGrpcServiceDiscoverer grpcServiceDiscoverer(ApplicationContext context) {
            return new DefaultGrpcServiceDiscoverer(context);
        }

        /** Applies the global and per-service server interceptors, as Spring Boot does. */
        @Bean
        @ConditionalOnMissingBean(GrpcServiceConfigurer.class)
        DefaultGrpcServiceConfigurer grpcServiceConfigurer(ApplicationContext context) {
            return new DefaultGrpcServiceConfigurer(context);
        }

        @Bean
        @ConditionalOnMissingBean
        HomaGrpcServerFactory homaGrpcServerFactory(RpcDispatcher dispatcher, HomaTransport transport,
                GrpcServiceDiscoverer discoverer, GrpcServiceConfigurer configurer,
                ObjectProvider<ServerInterceptorFilter> interceptorFilter) {
            HomaGrpcServerFactory factory = new HomaGrpcServerFactory(dispatcher, transport::localAddress);
            factory.setInterceptorFilter(interceptorFilter.getIfUnique());
            discoverer.findServices().stream()
                    .map((spec) -> configurer.configure(spec, factory))
                    .forEach(factory::addService);
            return factory;
        }

        @Bean
        @ConditionalOnMissingBean(name = "homaGrpcServerLifecycle")
        HomaGrpcServerLifecycle homaGrpcServerLifecycle(HomaGrpcServerFactory factory, HomaProperties properties,
                ApplicationEventPublisher publisher) {
            return new HomaGrpcServerLifecycle(factory, properties.getServer().getShutdownGracePeriod(), publisher);
        }
    }
}
