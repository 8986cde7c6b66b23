package io.homa.spring.observability;

import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.HomaServerInterceptor;
import io.homa.reactive.rpc.RpcEnvelope;
import io.homa.reactive.rpc.RpcMetadata;
import io.homa.reactive.rpc.ServerCall;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import org.springframework.core.Ordered;
import reactor.core.publisher.Mono;

/**
 * Times every call the {@link io.homa.reactive.rpc.RpcDispatcher} answers into the timer
 * {@value #CALLS_METRIC} with tags {@code service}, {@code method} and {@code status} (the
 * response's {@link HomaStatus} name), from the decoded request to the response. A stream counts
 * once, for its opening RPC (until its first batch); the RPCs that fetch its further batches and
 * cancel it are not timed. The gauge {@value #ACTIVE_METRIC} counts the timed calls in progress.
 */
public class HomaServerMetricsInterceptor implements HomaServerInterceptor, Ordered {

    /** Timer of server calls. */
    public static final String CALLS_METRIC = "homa.server.calls";

    /** Gauge of server calls in progress. */
    public static final String ACTIVE_METRIC = "homa.server.calls.active";

    /** Order among the server interceptors this starter adds: inside the observation. */
    public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 200;

    private final MeterRegistry registry;

    private final AtomicInteger active = new AtomicInteger();

    /** Registers {@value #ACTIVE_METRIC} with {@code registry}. */
    public HomaServerMetricsInterceptor(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry must not be null");
        Gauge.builder(ACTIVE_METRIC, this.active, AtomicInteger::get)
                .description("Homa server calls in progress")
                .strongReference(true)
                .register(registry);
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    @Override
    public Mono<RpcEnvelope.Response> intercept(ServerCall call,
            Function<ServerCall, Mono<RpcEnvelope.Response>> next) {
        if (!isTimed(call)) {
            return next.apply(call);
        }
        return Mono.defer(() -> {
            this.active.incrementAndGet();
            long startNs = this.registry.config().clock().monotonicTime();
            AtomicBoolean stopped = new AtomicBoolean();
            Consumer<HomaStatus> stop = (status) -> {
                if (stopped.compareAndSet(false, true)) {
                    this.active.decrementAndGet();
                    record(call, status, this.registry.config().clock().monotonicTime() - startNs);
                }
            };
            return next.apply(call)
                    .doOnSuccess((response) -> stop.accept(response != null ? response.status() : HomaStatus.OK))
                    .doOnError((error) -> stop.accept(HomaCallStatuses.ofServerError(error)))
                    .doOnCancel(() -> stop.accept(HomaStatus.CANCELLED));
        });
    }

    /** Unary calls and the opening RPC of a stream. */
    static boolean isTimed(ServerCall call) {
        String phase = call.streamPhase();
        return phase == null || RpcMetadata.STREAM_OPEN.equals(phase);
    }

    private void record(ServerCall call, HomaStatus status, long durationNs) {
        Timer.builder(CALLS_METRIC)
                .description("Homa server calls")
                .tags("service", call.service(), "method", call.method(), "status", status.name())
                .register(this.registry)
                .record(durationNs, TimeUnit.NANOSECONDS);
    }
}
