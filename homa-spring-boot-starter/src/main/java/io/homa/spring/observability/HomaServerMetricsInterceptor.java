package io.homa.spring.observability;

import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.HomaServerInterceptor;
import io.homa.reactive.rpc.RpcEnvelope;
import io.homa.reactive.rpc.RpcMetadata;
import io.homa.reactive.rpc.ServerCall;
import io.micrometer.core.instrument.MeterRegistry;
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

    private final HomaCallTimer timer;

    /** Registers {@value #ACTIVE_METRIC} with {@code registry}. */
    public HomaServerMetricsInterceptor(MeterRegistry registry) {
        this.timer = new HomaCallTimer(registry, CALLS_METRIC, ACTIVE_METRIC, "Homa server calls");
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
            Consumer<HomaStatus> stop = this.timer.start(call.service(), call.method());
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
}
