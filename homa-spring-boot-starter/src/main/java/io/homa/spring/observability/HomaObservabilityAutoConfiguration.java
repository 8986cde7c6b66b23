package io.homa.spring.observability;

import io.homa.reactive.HomaTransport;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.spring.HomaAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Observability of Homa calls. Every bean backs off when the application defines its own of the
 * same type.
 * <ul>
 *   <li>Always: {@link HomaClientLoggingInterceptor} and {@link HomaServerLoggingInterceptor}
 *       (one DEBUG line per failed call).</li>
 *   <li>With a Micrometer {@link MeterRegistry} bean ({@code homa.metrics.enabled=false} to switch
 *       off): {@link HomaClientMetricsInterceptor} ({@code homa.client.calls}),
 *       {@link HomaServerMetricsInterceptor} ({@code homa.server.calls}) and
 *       {@link HomaTransportMetrics} (protocol meters, a {@code MeterBinder}).</li>
 *   <li>With an {@link ObservationRegistry} bean ({@code homa.observation.enabled=false} to switch
 *       off): {@link HomaClientObservationInterceptor} and
 *       {@link HomaServerObservationInterceptor}; with Micrometer Tracing, spans whose context
 *       travels in the envelope metadata.</li>
 * </ul>
 * The auto-configured {@link HomaClient} and {@link RpcDispatcher} pick up the client and server
 * interceptors in their order: observation outermost, then metrics, then logging (then
 * resilience on the client side), so a call's span covers its retries and the timer records the
 * outcome the caller sees.
 */
@AutoConfiguration(after = HomaAutoConfiguration.class, afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
        "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration" })
@ConditionalOnClass(HomaClient.class)
public final class HomaObservabilityAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    HomaClientLoggingInterceptor homaClientLoggingInterceptor() {
        return new HomaClientLoggingInterceptor();
    }

    @Bean
    @ConditionalOnMissingBean
    HomaServerLoggingInterceptor homaServerLoggingInterceptor() {
        return new HomaServerLoggingInterceptor();
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    @ConditionalOnBean(MeterRegistry.class)
    @ConditionalOnBooleanProperty(name = "homa.metrics.enabled", matchIfMissing = true)
    @EnableConfigurationProperties(HomaMetricsProperties.class)
    static class MetricsConfiguration {

        @Bean
        @ConditionalOnMissingBean
        HomaClientMetricsInterceptor homaClientMetricsInterceptor(MeterRegistry registry) {
            return new HomaClientMetricsInterceptor(registry);
        }

        @Bean
        @ConditionalOnMissingBean
        HomaServerMetricsInterceptor homaServerMetricsInterceptor(MeterRegistry registry) {
            return new HomaServerMetricsInterceptor(registry);
        }

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnSingleCandidate(HomaTransport.class)
        HomaTransportMetrics homaTransportMetrics(HomaTransport transport, HomaMetricsProperties properties) {
            return new HomaTransportMetrics(transport, properties.getProtocolSampleInterval());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ObservationRegistry.class)
    @ConditionalOnBean(ObservationRegistry.class)
    @ConditionalOnBooleanProperty(name = "homa.observation.enabled", matchIfMissing = true)
    @EnableConfigurationProperties(HomaObservationProperties.class)
    static class ObservationConfiguration {

        @Bean
        @ConditionalOnMissingBean
        HomaClientObservationInterceptor homaClientObservationInterceptor(ObservationRegistry registry) {
            return new HomaClientObservationInterceptor(registry);
        }

        @Bean
        @ConditionalOnMissingBean
        HomaServerObservationInterceptor homaServerObservationInterceptor(ObservationRegistry registry) {
            return new HomaServerObservationInterceptor(registry);
        }
    }
}
