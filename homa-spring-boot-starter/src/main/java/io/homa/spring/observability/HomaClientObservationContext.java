package io.homa.spring.observability;

import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.RpcCall;
import io.micrometer.observation.transport.Kind;
import io.micrometer.observation.transport.SenderContext;
import org.jspecify.annotations.Nullable;

/**
 * The Observation context of one client call. Its carrier is the {@link RpcCall}: a tracer's
 * propagator writes the trace context ({@code traceparent}, {@code b3}, ...) into
 * {@link RpcCall#metadata()}, which travels in the request envelope.
 */
public class HomaClientObservationContext extends SenderContext<RpcCall> {

    private final RpcCall call;

    private @Nullable HomaStatus status;

    /** A context for {@code call}, remote service name = the call's service. */
    public HomaClientObservationContext(RpcCall call) {
        super((carrier, key, value) -> {
            if (carrier != null) {
                carrier.metadata().put(key, value);
            }
        }, Kind.CLIENT);
        this.call = call;
        setCarrier(call);
        setRemoteServiceName(call.service());
    }

    /** The call. */
    public RpcCall getCall() {
        return this.call;
    }

    /** The call's outcome, once it has ended; {@code null} before. */
    public @Nullable HomaStatus getStatus() {
        return this.status;
    }

    void setStatus(HomaStatus status) {
        this.status = status;
    }
}
