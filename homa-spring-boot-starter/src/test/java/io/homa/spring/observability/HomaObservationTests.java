package io.homa.spring.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.CallOptions;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.RpcMethod;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.ReceiverContext;
import io.micrometer.observation.transport.SenderContext;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * Observations around real calls: a test handler plays the tracer, injecting a trace context on
 * the client side and extracting it on the server side, as Micrometer Tracing's propagating
 * handlers do.
 */
class HomaObservationTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private static final String TRACEPARENT = "traceparent";

    private final ObservationRegistry registry = ObservationRegistry.create();

    private final Queue<Observation.Context> stopped = new ConcurrentLinkedQueue<>();

    private final Queue<String> extracted = new ConcurrentLinkedQueue<>();

    private final Queue<Map<String, String>> serverMetadata = new ConcurrentLinkedQueue<>();

    private final AtomicInteger traces = new AtomicInteger();

    private LoopbackRpc rpc;

    private HomaClient client;

    @BeforeEach
    void start() {
        this.registry.observationConfig().observationHandler(new FakeTracer());
        this.rpc = new LoopbackRpc();
        this.rpc.dispatcher()
                .register(RpcMethod.unary("kv", "get", new Type[] { String.class }, (args) -> Mono.just("v")))
                .register(RpcMethod.unary("kv", "put", new Type[] { String.class },
                        (args) -> Mono.error(new HomaException(HomaStatus.ALREADY_EXISTS, "exists"))))
                .addInterceptor(new HomaServerObservationInterceptor(this.registry))
                .addInterceptor((call, next) -> {
                    this.serverMetadata.add(call.metadata());
                    return next.apply(call);
                });
        this.client = this.rpc.client(List.of(new HomaClientObservationInterceptor(this.registry)), "kv");
    }

    @AfterEach
    void stop() {
        this.rpc.close();
    }

    @Test
    void shouldCarryTraceContextInTheEnvelopeMetadataToTheServer() {
        assertThat(call("get")).isEqualTo("v");

        assertThat(this.serverMetadata).singleElement()
                .satisfies((metadata) -> assertThat(metadata).containsEntry(TRACEPARENT, traceparent(1)));
        assertThat(this.extracted).containsExactly(traceparent(1));
        HomaClientObservationContext client = only(HomaClientObservationContext.class);
        HomaServerObservationContext server = only(HomaServerObservationContext.class);
        assertThat(client.getName()).isEqualTo("homa.client.rpc");
        assertThat(client.getContextualName()).isEqualTo("kv/get");
        assertThat(client.getRemoteServiceName()).isEqualTo("kv");
        assertThat(client.getStatus()).isEqualTo(HomaStatus.OK);
        assertThat(client.getLowCardinalityKeyValues()).contains(KeyValue.of("rpc.system", "homa"),
                KeyValue.of("rpc.service", "kv"), KeyValue.of("rpc.method", "get"), KeyValue.of("status", "OK"));
        assertThat(server.getName()).isEqualTo("homa.server.rpc");
        assertThat(server.getContextualName()).isEqualTo("kv/get");
        assertThat(server.getLowCardinalityKeyValues()).contains(KeyValue.of("status", "OK"));
        assertThat(server.getRemoteServiceAddress()).contains("127.0.0.1");
    }

    @Test
    void shouldRecordErrorsAndStatus() {
        assertThatThrownBy(() -> call("put")).isInstanceOf(HomaException.class);

        HomaClientObservationContext client = only(HomaClientObservationContext.class);
        assertThat(client.getStatus()).isEqualTo(HomaStatus.ALREADY_EXISTS);
        assertThat(client.getError()).isInstanceOf(HomaException.class);
        assertThat(client.getLowCardinalityKeyValues()).contains(KeyValue.of("status", "ALREADY_EXISTS"));
        assertThat(only(HomaServerObservationContext.class).getStatus()).isEqualTo(HomaStatus.ALREADY_EXISTS);
    }

    @Test
    void shouldUseTheObservationInTheReactorContextAsParent() {
        Observation parent = Observation.start("checkout", this.registry);
        String result = this.client
                .<String>call("kv", "get", new Object[] { "k" }, String.class, CallOptions.defaults())
                .contextWrite((context) -> context.put(HomaObservations.REACTOR_CONTEXT_KEY, parent))
                .block(WAIT);
        parent.stop();

        assertThat(result).isEqualTo("v");
        assertThat(only(HomaClientObservationContext.class).getParentObservation()).isSameAs(parent);
    }

    private String call(String method) {
        return this.client.<String>call("kv", method, new Object[] { "k" }, String.class, CallOptions.defaults())
                .block(WAIT);
    }

    private <C extends Observation.Context> C only(Class<C> type) {
        List<C> contexts = this.stopped.stream().filter(type::isInstance).map(type::cast).toList();
        assertThat(contexts).hasSize(1);
        return contexts.get(0);
    }

    private static String traceparent(int trace) {
        return String.format("00-%032x-%016x-01", trace, trace);
    }

    /** Injects on send, extracts on receive, records stopped contexts. */
    private final class FakeTracer implements ObservationHandler<Observation.Context> {

        @Override
        @SuppressWarnings("unchecked")
        public void onStart(Observation.Context context) {
            if (context instanceof SenderContext<?> sender) {
                SenderContext<Object> typed = (SenderContext<Object>) sender;
                typed.getSetter().set(typed.getCarrier(), TRACEPARENT,
                        traceparent(HomaObservationTests.this.traces.incrementAndGet()));
            }
            else if (context instanceof ReceiverContext<?> receiver) {
                ReceiverContext<Object> typed = (ReceiverContext<Object>) receiver;
                String value = typed.getGetter().get(typed.getCarrier(), TRACEPARENT);
                HomaObservationTests.this.extracted.add(value != null ? value : "none");
            }
        }

        @Override
        public void onStop(Observation.Context context) {
            HomaObservationTests.this.stopped.add(context);
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }
    }
}
