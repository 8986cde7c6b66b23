package io.homa.spring.observability;

import io.homa.reactive.HomaStatus;
import io.micrometer.observation.Observation;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/** Names and keys of the Homa observations. */
public final class HomaObservations {

    /** Observation of a client call. */
    public static final String CLIENT_OBSERVATION = "homa.client.rpc";

    /** Observation of a server call. */
    public static final String SERVER_OBSERVATION = "homa.server.rpc";

    /** Low-cardinality key: always {@code homa}. */
    public static final String RPC_SYSTEM = "rpc.system";

    /** Low-cardinality key: the service name. */
    public static final String RPC_SERVICE = "rpc.service";

    /** Low-cardinality key: the method name. */
    public static final String RPC_METHOD = "rpc.method";

    /** Low-cardinality key: the call's {@link HomaStatus} name. */
    public static final String STATUS = "status";

    /**
     * Key of the current Observation in the Reactor {@code Context} (the value of Micrometer's
     * {@code ObservationThreadLocalAccessor.KEY}, written out so context-propagation is not needed).
     */
    public static final String REACTOR_CONTEXT_KEY = "micrometer.observation";

    private HomaObservations() {}

    /** Stops an observation once, with its status and error. */
    static final class Stopper {

        private final Observation observation;

        private final AtomicBoolean stopped = new AtomicBoolean();

        Stopper(Observation observation) {
            this.observation = observation;
        }

        boolean stop(HomaStatus status, @Nullable Throwable error) {
            if (!this.stopped.compareAndSet(false, true)) {
                return false;
            }
            this.observation.lowCardinalityKeyValue(STATUS, status.name());
            if (error != null) {
                this.observation.error(error);
            }
            this.observation.stop();
            return true;
        }
    }
}
