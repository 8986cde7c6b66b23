package io.homa.spring.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilience4j.springboot.bulkhead.autoconfigure.BulkheadAutoConfiguration;
import io.github.resilience4j.springboot.circuitbreaker.autoconfigure.CircuitBreakerAutoConfiguration;
import io.github.resilience4j.springboot.ratelimiter.autoconfigure.RateLimiterAutoConfiguration;
import io.github.resilience4j.springboot.retry.autoconfigure.RetryAutoConfiguration;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.rpc.ServiceResolver;
import io.homa.spring.HomaAutoConfiguration;
import io.homa.spring.HomaMethod;
import io.homa.spring.HomaService;
import io.homa.spring.actuate.HomaHealthContributorAutoConfiguration;
import io.homa.spring.client.HomaExchange;
import io.homa.spring.client.HomaServiceProxyFactory;
import io.homa.spring.resilience.HomaResilienceAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.transport.ReceiverContext;
import io.micrometer.observation.transport.SenderContext;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.health.registry.ReactiveHealthContributorRegistry;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

/**
 * The whole starter in one application calling itself over loopback UDP: a {@code @HomaService}, a
 * declarative client with an idempotent method, Resilience4j configured in properties, metrics,
 * tracing through a fake tracer and the health indicator.
 */
class HomaObservabilityApplicationTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HomaAutoConfiguration.class, MetricsAutoConfiguration.class,
                    CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
                    ObservationAutoConfiguration.class, CircuitBreakerAutoConfiguration.class,
                    BulkheadAutoConfiguration.class, RateLimiterAutoConfiguration.class, RetryAutoConfiguration.class,
                    HealthContributorRegistryAutoConfiguration.class, HomaResilienceAutoConfiguration.class,
                    HomaObservabilityAutoConfiguration.class, HomaHealthContributorAutoConfiguration.class))
            .withUserConfiguration(InventoryApplication.class)
            .withPropertyValues(LoopbackRpc.properties())
            .withPropertyValues("resilience4j.retry.instances.homa-client.max-attempts=3",
                    "resilience4j.retry.instances.homa-client.wait-duration=10ms");

    @Test
    void shouldGuardTraceAndMeasureCallsEndToEnd() {
        this.contextRunner.run((context) -> {
            InventoryService service = context.getBean(InventoryService.class);
            InventoryClient client = context.getBean(HomaServiceProxyFactory.class)
                    .createClient(InventoryClient.class);
            FakeTracer tracer = context.getBean(FakeTracer.class);

            assertThat(client.get("a").block(WAIT)).isEqualTo("item-a");
            assertThatThrownBy(() -> client.count("a").block(WAIT)).isInstanceOfSatisfying(
                    HomaRemoteException.class, (error) -> assertThat(error.status()).isEqualTo(HomaStatus.INTERNAL));
            assertThatThrownBy(() -> client.reserve("a").block(WAIT)).isInstanceOf(HomaRemoteException.class);

            // Retry: the idempotent method ran three times, the other one once.
            assertThat(service.countCalls).hasValue(3);
            assertThat(service.reserveCalls).hasValue(1);

            // Metrics: one client sample per call as the caller saw it, one server sample per attempt.
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(count(registry, "homa.client.calls", "get", "OK")).isEqualTo(1);
            assertThat(count(registry, "homa.client.calls", "count", "INTERNAL")).isEqualTo(1);
            assertThat(count(registry, "homa.server.calls", "count", "INTERNAL")).isEqualTo(3);
            assertThat(count(registry, "homa.server.calls", "reserve", "INTERNAL")).isEqualTo(1);
            assertThat(registry.find("homa.packets.sent").functionCounters()).hasSize(io.homa.engine.wire.PacketType.values().length);
            // Boot's meter handler also times the observations (disable: management.metrics.enable.homa.client.rpc=false).
            assertThat(registry.get("homa.client.rpc").tags("rpc.service", "inventory", "rpc.method", "count",
                    "status", "INTERNAL").timer().count()).isEqualTo(1);

            // Tracing: every server call saw the trace context its client call injected.
            assertThat(tracer.injected).hasSize(3);
            assertThat(tracer.extracted).hasSize(5).containsOnly(tracer.injected.toArray(new String[0]));

            ReactiveHealthIndicator health = (ReactiveHealthIndicator) context
                    .getBean(ReactiveHealthContributorRegistry.class).getContributor("homa");
            assertThat(health.health().block(WAIT).getStatus()).isEqualTo(Status.UP);
        });
    }

    private static double count(MeterRegistry registry, String name, String method, String status) {
        return registry.get(name).tags("service", "inventory", "method", method, "status", status).timer().count();
    }

    @HomaService("inventory")
    static class InventoryService {

        final AtomicInteger countCalls = new AtomicInteger();

        final AtomicInteger reserveCalls = new AtomicInteger();

        public String get(String sku) {
            return "item-" + sku;
        }

        public int count(String sku) {
            this.countCalls.incrementAndGet();
            throw new IllegalStateException("database down");
        }

        public int reserve(String sku) {
            this.reserveCalls.incrementAndGet();
            throw new IllegalStateException("database down");
        }
    }

    @HomaExchange(service = "inventory")
    interface InventoryClient {

        Mono<String> get(String sku);

        @HomaMethod(idempotent = true)
        Mono<Integer> count(String sku);

        Mono<Integer> reserve(String sku);
    }

    @Configuration(proxyBeanMethods = false)
    static class InventoryApplication {

        @Bean
        InventoryService inventoryService() {
            return new InventoryService();
        }

        /** Every service lives at this application's own endpoint. */
        @Bean
        ServiceResolver selfResolver(ObjectProvider<HomaTransport> transport) {
            return (service) -> Mono.fromSupplier(() -> transport.getObject().localAddress());
        }

        @Bean
        FakeTracer fakeTracer() {
            return new FakeTracer();
        }
    }

    /** Injects a new trace context per client call; records what server calls extract. */
    static final class FakeTracer implements ObservationHandler<Observation.Context> {

        final Queue<String> injected = new ConcurrentLinkedQueue<>();

        final Queue<String> extracted = new ConcurrentLinkedQueue<>();

        private final AtomicInteger traces = new AtomicInteger();

        @Override
        @SuppressWarnings("unchecked")
        public void onStart(Observation.Context context) {
            if (context instanceof HomaClientObservationContext) {
                SenderContext<Object> sender = (SenderContext<Object>) (SenderContext<?>) context;
                String traceparent = String.format("00-%032x-%016x-01", this.traces.incrementAndGet(), 1);
                this.injected.add(traceparent);
                sender.getSetter().set(sender.getCarrier(), "traceparent", traceparent);
            }
            else if (context instanceof HomaServerObservationContext) {
                ReceiverContext<Object> receiver = (ReceiverContext<Object>) (ReceiverContext<?>) context;
                String traceparent = receiver.getGetter().get(receiver.getCarrier(), "traceparent");
                this.extracted.add(traceparent != null ? traceparent : "none");
            }
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }
    }
}
