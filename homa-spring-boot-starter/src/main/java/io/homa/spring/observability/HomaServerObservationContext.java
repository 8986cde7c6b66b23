package io.homa.spring.observability;

import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.ServerCall;
import io.micrometer.observation.transport.Kind;
import io.micrometer.observation.transport.ReceiverContext;
import org.jspecify.annotations.Nullable;

/**
 * The Observation context of one server call. Its carrier is the {@link ServerCall}: a tracer's
 * propagator reads the caller's trace context from {@link ServerCall#metadata()}, so the server's
 * span continues the client's trace.
 */
public class HomaServerObservationContext extends ReceiverContext<ServerCall> {

    private final ServerCall call;

    private @Nullable HomaStatus status;

    /** A context for {@code call}; remote service address = the client's endpoint. */
    public HomaServerObservationContext(ServerCall call) {
        super((carrier, key) -> carrier != null ? carrier.metadata().get(key) : null, Kind.SERVER);
        this.call = call;
        setCarrier(call);
        setRemoteServiceAddress(call.peer().toString());
    }

    /** The call. */
    public ServerCall getCall() {
        return this.call;
    }

    /** The response's status, once answered; {@code null} before. */
    public @Nullable HomaStatus getStatus() {
        return this.status;
    }

    void setStatus(HomaStatus status) {
        this.status = status;
    }
}
