package io.homa.spring.observability;

import io.homa.reactive.HomaStatus;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The meters of one side's calls: a timer tagged {@code service}, {@code method} and
 * {@code status} (a {@link HomaStatus} name), and a gauge of calls in progress. Shared by
 * {@link HomaClientMetricsInterceptor} and {@link HomaServerMetricsInterceptor}.
 */
final class HomaCallTimer {

    private final MeterRegistry registry;

    private final String callsMetric;

    private final String description;

    private final AtomicInteger active = new AtomicInteger();

    /** Registers the gauge {@code activeMetric} with {@code registry}. */
    HomaCallTimer(MeterRegistry registry, String callsMetric, String activeMetric, String description) {
        this.registry = Objects.requireNonNull(registry, "registry must not be null");
        this.callsMetric = callsMetric;
        this.description = description;
        Gauge.builder(activeMetric, this.active, AtomicInteger::get)
                .description(description + " in progress")
                .strongReference(true)
                .register(registry);
    }

    /**
     * Starts timing one call.
     *
     * @return what stops it with the call's status; only its first use counts
     */
    Consumer<HomaStatus> start(String service, String method) {
        this.active.incrementAndGet();
        long startNs = this.registry.config().clock().monotonicTime();
        AtomicBoolean stopped = new AtomicBoolean();
        return (status) -> {
            if (!stopped.compareAndSet(false, true)) {
                return;
            }
            this.active.decrementAndGet();
            Timer.builder(this.callsMetric)
                    .description(this.description)
                    .tags("service", service, "method", method, "status", status.name())
                    .register(this.registry)
                    .record(this.registry.config().clock().monotonicTime() - startNs, TimeUnit.NANOSECONDS);
        };
    }
}
