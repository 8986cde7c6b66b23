package io.homa.spring.observability;

import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.HomaServerInterceptor;
import io.homa.reactive.rpc.RpcEnvelope;
import io.homa.reactive.rpc.ServerCall;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import reactor.core.publisher.Mono;

/**
 * Logs one line at DEBUG per server call answered with a status other than {@code OK}, with
 * service, method, status, duration, peer and the response's message, under the logger
 * {@code io.homa.spring.observability.HomaServerLoggingInterceptor}:
 * <pre>Homa call Echo.echo from /127.0.0.1:4711 failed: status=INTERNAL durationMs=0.8 message=...</pre>
 */
public class HomaServerLoggingInterceptor implements HomaServerInterceptor, Ordered {

    /** Order among the server interceptors this starter adds: innermost. */
    public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 300;

    private static final Logger log = LoggerFactory.getLogger(HomaServerLoggingInterceptor.class);

    @Override
    public int getOrder() {
        return ORDER;
    }

    @Override
    public Mono<RpcEnvelope.Response> intercept(ServerCall call,
            Function<ServerCall, Mono<RpcEnvelope.Response>> next) {
        return Mono.defer(() -> {
            long startNs = System.nanoTime();
            return next.apply(call)
                    .doOnSuccess((response) -> {
                        if (response != null && response.status() != HomaStatus.OK) {
                            logFailure(call, response.status(), response.message(), startNs);
                        }
                    })
                    .doOnError((error) -> logFailure(call, HomaCallStatuses.ofServerError(error), error.toString(),
                            startNs));
        });
    }

    private static void logFailure(ServerCall call, HomaStatus status, String message, long startNs) {
        if (log.isDebugEnabled()) {
            log.debug("Homa call {}.{} from {} failed: status={} durationMs={} message={}", call.service(),
                    call.method(), call.peer(), status, HomaClientLoggingInterceptor.millis(System.nanoTime() - startNs),
                    message);
        }
    }
}
