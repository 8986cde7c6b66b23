package io.homa.spring.observability;

import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.HomaClientInterceptor;
import io.homa.reactive.rpc.RpcCall;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.core.Ordered;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Times every {@link io.homa.reactive.rpc.HomaClient} call into the timer
 * {@value #CALLS_METRIC} with tags {@code service}, {@code method} and {@code status} (the
 * {@link HomaStatus} name: {@code OK}, {@code UNAVAILABLE}, ...; {@code CANCELLED} when the caller
 * cancels). A call is timed from subscription to its end as the caller sees it, retries and
 * circuit-breaker rejections included; a stream is one sample, from subscription to its last
 * item. The gauge {@value #ACTIVE_METRIC} counts calls in progress.
 */
public class HomaClientMetricsInterceptor implements HomaClientInterceptor, Ordered {

    /** Timer of client calls. */
    public static final String CALLS_METRIC = "homa.client.calls";

    /** Gauge of client calls in progress. */
    public static final String ACTIVE_METRIC = "homa.client.calls.active";

    /** Order among client interceptors: inside the observation, outside logging and resilience. */
    public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 200;

    private final MeterRegistry registry;

    private final AtomicInteger active = new AtomicInteger();

    /** Registers {@value #ACTIVE_METRIC} with {@code registry}. */
    public HomaClientMetricsInterceptor(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry must not be null");
        Gauge.builder(ACTIVE_METRIC, this.active, AtomicInteger::get)
                .description("Homa client calls in progress")
                .strongReference(true)
                .register(registry);
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    @Override
    public <T> Mono<T> interceptUnary(RpcCall call, Mono<T> next) {
        return Mono.defer(() -> {
            Sample sample = start(call);
            return next.doOnSuccess((value) -> sample.stop(HomaStatus.OK))
                    .doOnError((error) -> sample.stop(HomaCallStatuses.of(error)))
                    .doOnCancel(() -> sample.stop(HomaStatus.CANCELLED));
        });
    }

    @Override
    public <T> Flux<T> interceptStream(RpcCall call, Flux<T> next) {
        return Flux.defer(() -> {
            Sample sample = start(call);
            return next.doOnComplete(() -> sample.stop(HomaStatus.OK))
                    .doOnError((error) -> sample.stop(HomaCallStatuses.of(error)))
                    .doOnCancel(() -> sample.stop(HomaStatus.CANCELLED));
        });
    }

    private Sample start(RpcCall call) {
        this.active.incrementAndGet();
        return new Sample(call.service(), call.method(), this.registry.config().clock().monotonicTime());
    }

    /** One call being timed; stops once. */
    private final class Sample {

        private final String service;

        private final String method;

        private final long startNs;

        private final AtomicBoolean stopped = new AtomicBoolean();

        Sample(String service, String method, long startNs) {
            this.service = service;
            this.method = method;
            this.startNs = startNs;
        }

        void stop(HomaStatus status) {
            if (!this.stopped.compareAndSet(false, true)) {
                return;
            }
            HomaClientMetricsInterceptor outer = HomaClientMetricsInterceptor.this;
            outer.active.decrementAndGet();
            long durationNs = outer.registry.config().clock().monotonicTime() - this.startNs;
            Timer.builder(CALLS_METRIC)
                    .description("Homa client calls")
                    .tags("service", this.service, "method", this.method, "status", status.name())
                    .register(outer.registry)
                    .record(durationNs, TimeUnit.NANOSECONDS);
        }
    }
}
