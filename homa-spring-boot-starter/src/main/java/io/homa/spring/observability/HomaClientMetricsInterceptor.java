package io.homa.spring.observability;

import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.HomaClientInterceptor;
import io.homa.reactive.rpc.RpcCall;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.Consumer;
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

    private final HomaCallTimer timer;

    /** Registers {@value #ACTIVE_METRIC} with {@code registry}. */
    public HomaClientMetricsInterceptor(MeterRegistry registry) {
        this.timer = new HomaCallTimer(registry, CALLS_METRIC, ACTIVE_METRIC, "Homa client calls");
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    @Override
    public <T> Mono<T> interceptUnary(RpcCall call, Mono<T> next) {
        return Mono.defer(() -> {
            Consumer<HomaStatus> stop = this.timer.start(call.service(), call.method());
            return next.doOnSuccess((value) -> stop.accept(HomaStatus.OK))
                    .doOnError((error) -> stop.accept(HomaCallStatuses.of(error)))
                    .doOnCancel(() -> stop.accept(HomaStatus.CANCELLED));
        });
    }

    @Override
    public <T> Flux<T> interceptStream(RpcCall call, Flux<T> next) {
        return Flux.defer(() -> {
            Consumer<HomaStatus> stop = this.timer.start(call.service(), call.method());
            return next.doOnComplete(() -> stop.accept(HomaStatus.OK))
                    .doOnError((error) -> stop.accept(HomaCallStatuses.of(error)))
                    .doOnCancel(() -> stop.accept(HomaStatus.CANCELLED));
        });
    }
}
