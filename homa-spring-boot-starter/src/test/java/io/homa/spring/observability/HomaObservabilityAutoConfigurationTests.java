package io.homa.spring.observability;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.reactive.HomaTransport;
import io.homa.reactive.rpc.CallOptions;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.HomaClientInterceptor;
import io.homa.reactive.rpc.HomaServerInterceptor;
import io.homa.reactive.rpc.JsonPayloadCodec;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.RpcMethod;
import io.homa.reactive.rpc.StaticServiceResolver;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** {@link HomaObservabilityAutoConfiguration} with Boot's metrics and observation auto-configuration. */
class HomaObservabilityAutoConfigurationTests {

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                    CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
                    ObservationAutoConfiguration.class, HomaObservabilityAutoConfiguration.class))
            .withUserConfiguration(EndpointConfiguration.class);

    @Test
    void shouldProvideEveryBeanWithItsLibraryPresent() {
        this.contextRunner.run((context) -> {
            assertThat(context).hasSingleBean(HomaClientMetricsInterceptor.class);
            assertThat(context).hasSingleBean(HomaServerMetricsInterceptor.class);
            assertThat(context).hasSingleBean(HomaTransportMetrics.class);
            assertThat(context).hasSingleBean(HomaClientObservationInterceptor.class);
            assertThat(context).hasSingleBean(HomaServerObservationInterceptor.class);
            assertThat(context).hasSingleBean(HomaClientLoggingInterceptor.class);
            assertThat(context).hasSingleBean(HomaServerLoggingInterceptor.class);
            assertThat(context.getBeanProvider(HomaClientInterceptor.class).orderedStream().map(Object::getClass))
                    .containsExactly(HomaClientObservationInterceptor.class, HomaClientMetricsInterceptor.class,
                            HomaClientLoggingInterceptor.class);
            // Boot bound the protocol meters (a MeterBinder bean) to its registry.
            assertThat(context.getBean(MeterRegistry.class).find("homa.packets.sent").functionCounters())
                    .hasSize(io.homa.engine.wire.PacketType.values().length);
        });
    }

    @Test
    void shouldRecordCallsThroughTheInterceptorBeans() {
        this.contextRunner.run((context) -> {
            HomaClient client = context.getBean(HomaClient.class);
            assertThat(client.<String>call("kv", "get", new Object[] { "k" }, String.class, CallOptions.defaults())
                    .block(Duration.ofSeconds(10))).isEqualTo("v");
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.get("homa.server.calls").tags("service", "kv", "method", "get", "status", "OK")
                    .timer().count()).isEqualTo(1);
            assertThat(registry.get("homa.client.calls").tags("service", "kv", "method", "get", "status", "OK")
                    .timer().count()).isEqualTo(1);
        });
    }

    @Test
    void shouldBackOffWhenUserDefinesBeans() {
        this.contextRunner.withUserConfiguration(UserBeansConfiguration.class).run((context) -> {
            assertThat(context).hasSingleBean(HomaClientMetricsInterceptor.class);
            assertThat(context).hasBean("myClientMetrics");
            assertThat(context).hasSingleBean(HomaServerObservationInterceptor.class);
            assertThat(context).hasBean("myServerObservation");
            assertThat(context).hasSingleBean(HomaTransportMetrics.class);
            assertThat(context).hasBean("myTransportMetrics");
        });
    }

    @Test
    void shouldSwitchOffMetricsAndObservationByProperty() {
        this.contextRunner.withPropertyValues("homa.metrics.enabled=false", "homa.observation.enabled=false")
                .run((context) -> {
                    assertThat(context).doesNotHaveBean(HomaClientMetricsInterceptor.class);
                    assertThat(context).doesNotHaveBean(HomaServerMetricsInterceptor.class);
                    assertThat(context).doesNotHaveBean(HomaTransportMetrics.class);
                    assertThat(context).doesNotHaveBean(HomaClientObservationInterceptor.class);
                    assertThat(context).doesNotHaveBean(HomaServerObservationInterceptor.class);
                    assertThat(context).hasSingleBean(HomaClientLoggingInterceptor.class);
                });
    }

    @Test
    void shouldLogOnlyWithoutMicrometer() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HomaObservabilityAutoConfiguration.class))
                .withClassLoader(new FilteredClassLoader(MeterRegistry.class, ObservationRegistry.class))
                .run((context) -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).hasSingleBean(HomaClientLoggingInterceptor.class);
                    assertThat(context).hasSingleBean(HomaServerLoggingInterceptor.class);
                    assertThat(context).doesNotHaveBean(HomaClientMetricsInterceptor.class);
                    assertThat(context).doesNotHaveBean(HomaClientObservationInterceptor.class);
                });
    }

    @Test
    void shouldNeedRegistryBeans() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(HomaObservabilityAutoConfiguration.class))
                .run((context) -> {
                    assertThat(context).doesNotHaveBean(HomaClientMetricsInterceptor.class);
                    assertThat(context).doesNotHaveBean(HomaServerObservationInterceptor.class);
                    assertThat(context).hasSingleBean(HomaClientLoggingInterceptor.class);
                });
    }

    @Test
    void shouldFailOnBadSampleInterval() {
        this.contextRunner.withPropertyValues("homa.metrics.protocol-sample-interval=10ms").run((context) -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining("homa.metrics.protocol-sample-interval");
        });
    }

    /** A server endpoint and a client of it, taking the interceptor beans as the starter's core does. */
    @Configuration(proxyBeanMethods = false)
    static class EndpointConfiguration {

        @Bean
        RpcDispatcher rpcDispatcher(
                org.springframework.beans.factory.ObjectProvider<HomaServerInterceptor> interceptors) {
            RpcDispatcher dispatcher = new RpcDispatcher(new JsonPayloadCodec(), Schedulers.boundedElastic())
                    .register(RpcMethod.unary("kv", "get", new Type[] { String.class }, (args) -> Mono.just("v")));
            interceptors.orderedStream().forEach(dispatcher::addInterceptor);
            return dispatcher;
        }

        @Bean(destroyMethod = "disposeNow")
        HomaTransport homaTransport(RpcDispatcher dispatcher) {
            return HomaTransport.bindNow(LoopbackRpc.config(), dispatcher, Duration.ofSeconds(10));
        }

        @Bean
        HomaClient homaClient(HomaTransport transport,
                org.springframework.beans.factory.ObjectProvider<HomaClientInterceptor> interceptors) {
            return HomaClient.builder(transport)
                    .resolver(new StaticServiceResolver(Map.of("kv", transport.localAddress())))
                    .interceptors(interceptors.orderedStream().toList())
                    .build();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class UserBeansConfiguration {

        @Bean
        HomaClientMetricsInterceptor myClientMetrics() {
            return new HomaClientMetricsInterceptor(new SimpleMeterRegistry());
        }

        @Bean
        HomaServerObservationInterceptor myServerObservation() {
            return new HomaServerObservationInterceptor(ObservationRegistry.NOOP);
        }

        @Bean
        HomaTransportMetrics myTransportMetrics(HomaTransport transport) {
            return new HomaTransportMetrics(transport, Duration.ofMinutes(1));
        }
    }
}
