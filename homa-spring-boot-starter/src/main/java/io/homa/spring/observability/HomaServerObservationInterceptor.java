package io.homa.spring.observability;

import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.HomaServerInterceptor;
import io.homa.reactive.rpc.RpcEnvelope;
import io.homa.reactive.rpc.ServerCall;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import reactor.core.publisher.Mono;

/**
 * Wraps every server call (unary calls and the opening RPC of a stream) in a Micrometer
 * {@link Observation} named {@value HomaObservations#SERVER_OBSERVATION} (contextual name
 * {@code service/method}, low cardinality keys {@code rpc.system=homa}, {@code rpc.service},
 * {@code rpc.method}, {@code status}) with a {@link HomaServerObservationContext} whose carrier is
 * the call: with a tracer the call is a SERVER span that continues the trace whose context the
 * client put in the request metadata. The method's publisher is assembled in the observation's
 * scope and sees the observation in its Reactor context (key
 * {@value HomaObservations#REACTOR_CONTEXT_KEY}).
 */
public class HomaServerObservationInterceptor implements HomaServerInterceptor, Ordered {

    /** Order among the server interceptors this starter adds: outermost. */
    public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 100;

    private final ObservationRegistry registry;

    public HomaServerObservationInterceptor(ObservationRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry must not be null");
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    @Override
    public Mono<RpcEnvelope.Response> intercept(ServerCall call,
            Function<ServerCall, Mono<RpcEnvelope.Response>> next) {
        if (this.registry.isNoop() || !HomaServerMetricsInterceptor.isTimed(call)) {
            return next.apply(call);
        }
        return Mono.defer(() -> {
            HomaServerObservationContext context = new HomaServerObservationContext(call);
            Observation observation = Observation
                    .createNotStarted(HomaObservations.SERVER_OBSERVATION, () -> context, this.registry)
                    .contextualName(call.service() + "/" + call.method())
                    .lowCardinalityKeyValue(HomaObservations.RPC_SYSTEM, "homa")
                    .lowCardinalityKeyValue(HomaObservations.RPC_SERVICE, call.service())
                    .lowCardinalityKeyValue(HomaObservations.RPC_METHOD, call.method())
                    .start();
            HomaObservations.Stopper stopper = new HomaObservations.Stopper(observation);
            Mono<RpcEnvelope.Response> response;
            try {
                response = observation.scoped(() -> next.apply(call));
            }
            catch (RuntimeException ex) {
                stop(context, stopper, HomaCallStatuses.ofServerError(ex), ex);
                return Mono.error(ex);
            }
            return response
                    .doOnSuccess((answer) -> stop(context, stopper, answer != null ? answer.status() : HomaStatus.OK,
                            null))
                    .doOnError((error) -> stop(context, stopper, HomaCallStatuses.ofServerError(error), error))
                    .doOnCancel(() -> stop(context, stopper, HomaStatus.CANCELLED, null))
                    .contextWrite((reactorContext) -> reactorContext.put(HomaObservations.REACTOR_CONTEXT_KEY,
                            observation));
        });
    }

    private static void stop(HomaServerObservationContext context, HomaObservations.Stopper stopper,
            HomaStatus status, @Nullable Throwable error) {
        context.setStatus(status);
        stopper.stop(status, error);
    }
}
