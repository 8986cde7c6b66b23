package io.homa.spring.observability;

import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.HomaClientInterceptor;
import io.homa.reactive.rpc.RpcCall;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Logs one line at DEBUG per failed client call, with service, method, status, duration and the
 * error's message, under the logger {@code io.homa.spring.observability.HomaClientLoggingInterceptor}:
 * <pre>Homa call Echo.echo failed: status=UNAVAILABLE durationMs=12.3 error=...</pre>
 * Costs nothing beyond a clock read per call while DEBUG is off.
 */
public class HomaClientLoggingInterceptor implements HomaClientInterceptor, Ordered {

    /** Order among client interceptors: inside metrics, outside resilience (logs the final outcome). */
    public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 300;

    private static final Logger log = LoggerFactory.getLogger(HomaClientLoggingInterceptor.class);

    @Override
    public int getOrder() {
        return ORDER;
    }

    @Override
    public <T> Mono<T> interceptUnary(RpcCall call, Mono<T> next) {
        return Mono.defer(() -> {
            long startNs = System.nanoTime();
            return next.doOnError((error) -> logFailure(call, error, startNs));
        });
    }

    @Override
    public <T> Flux<T> interceptStream(RpcCall call, Flux<T> next) {
        return Flux.defer(() -> {
            long startNs = System.nanoTime();
            return next.doOnError((error) -> logFailure(call, error, startNs));
        });
    }

    private static void logFailure(RpcCall call, Throwable error, long startNs) {
        if (log.isDebugEnabled()) {
            HomaStatus status = HomaCallStatuses.of(error);
            log.debug("Homa call {}.{} failed: status={} durationMs={} error={}", call.service(), call.method(),
                    status, millis(System.nanoTime() - startNs), error.toString());
        }
    }

    static String millis(long durationNs) {
        return String.format(java.util.Locale.ROOT, "%.3f", durationNs / (double) TimeUnit.MILLISECONDS.toNanos(1));
    }
}
