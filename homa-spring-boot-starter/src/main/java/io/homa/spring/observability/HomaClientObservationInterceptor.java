package io.homa.spring.observability;

import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.HomaClientInterceptor;
import io.homa.reactive.rpc.RpcCall;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * Wraps every client call in a Micrometer {@link Observation} named
 * {@value HomaObservations#CLIENT_OBSERVATION} (contextual name {@code service/method}, low
 * cardinality keys {@code rpc.system=homa}, {@code rpc.service}, {@code rpc.method},
 * {@code status}), with a {@link HomaClientObservationContext} whose carrier is the call: with a
 * tracer (Micrometer Tracing) the call is a CLIENT span and its trace context travels in the
 * request metadata. The parent is the observation in the subscriber's Reactor context (key
 * {@value HomaObservations#REACTOR_CONTEXT_KEY}), else the current one; the call's publisher sees
 * this observation in its Reactor context. Outermost of the starter's client interceptors, so
 * retries are inside one span.
 */
public class HomaClientObservationInterceptor implements HomaClientInterceptor, Ordered {

    /** Order among client interceptors: outermost of the starter's. */
    public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 100;

    private final ObservationRegistry registry;

    public HomaClientObservationInterceptor(ObservationRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry must not be null");
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    @Override
    public <T> Mono<T> interceptUnary(RpcCall call, Mono<T> next) {
        if (this.registry.isNoop()) {
            return next;
        }
        return Mono.deferContextual((view) -> {
            HomaClientObservationContext context = new HomaClientObservationContext(call);
            Observation observation = start(context, view);
            HomaObservations.Stopper stopper = new HomaObservations.Stopper(observation);
            return next.doOnSuccess((value) -> stop(context, stopper, HomaStatus.OK, null))
                    .doOnError((error) -> stop(context, stopper, HomaCallStatuses.of(error), error))
                    .doOnCancel(() -> stop(context, stopper, HomaStatus.CANCELLED, null))
                    .contextWrite((reactorContext) -> reactorContext.put(HomaObservations.REACTOR_CONTEXT_KEY,
                            observation));
        });
    }

    @Override
    public <T> Flux<T> interceptStream(RpcCall call, Flux<T> next) {
        if (this.registry.isNoop()) {
            return next;
        }
        return Flux.deferContextual((view) -> {
            HomaClientObservationContext context = new HomaClientObservationContext(call);
            Observation observation = start(context, view);
            HomaObservations.Stopper stopper = new HomaObservations.Stopper(observation);
            return next.doOnComplete(() -> stop(context, stopper, HomaStatus.OK, null))
                    .doOnError((error) -> stop(context, stopper, HomaCallStatuses.of(error), error))
                    .doOnCancel(() -> stop(context, stopper, HomaStatus.CANCELLED, null))
                    .contextWrite((reactorContext) -> reactorContext.put(HomaObservations.REACTOR_CONTEXT_KEY,
                            observation));
        });
    }

    private Observation start(HomaClientObservationContext context, ContextView view) {
        RpcCall call = context.getCall();
        Observation observation = Observation
                .createNotStarted(HomaObservations.CLIENT_OBSERVATION, () -> context, this.registry)
                .contextualName(call.service() + "/" + call.method())
                .lowCardinalityKeyValue(HomaObservations.RPC_SYSTEM, "homa")
                .lowCardinalityKeyValue(HomaObservations.RPC_SERVICE, call.service())
                .lowCardinalityKeyValue(HomaObservations.RPC_METHOD, call.method());
        Object parent = view.getOrDefault(HomaObservations.REACTOR_CONTEXT_KEY, null);
        if (parent instanceof Observation parentObservation) {
            observation.parentObservation(parentObservation);
        }
        return observation.start();
    }

    private static void stop(HomaClientObservationContext context, HomaObservations.Stopper stopper,
            HomaStatus status, @Nullable Throwable error) {
        context.setStatus(status);
        stopper.stop(status, error);
    }
}
