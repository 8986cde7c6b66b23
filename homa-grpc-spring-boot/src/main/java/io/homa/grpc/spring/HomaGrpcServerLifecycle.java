package io.homa.grpc.spring;

import java.time.Duration;

import io.homa.spring.HomaEndpointLifecycle;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.grpc.server.GrpcServerFactory;
import org.springframework.grpc.server.lifecycle.GrpcServerLifecycle;

/**
 * spring-grpc's server lifecycle (with its {@code GrpcServerStartedEvent}, whose port is the Homa
 * port) in the phase just before {@link HomaEndpointLifecycle}: the gRPC services are on the
 * dispatcher before the endpoint starts serving the requests it held, so an early call never gets
 * UNIMPLEMENTED; and it stops after the endpoint has drained.
 */
public class HomaGrpcServerLifecycle extends GrpcServerLifecycle {

    /** {@link HomaEndpointLifecycle#PHASE} less one. */
    public static final int PHASE = HomaEndpointLifecycle.PHASE - 1;

    /**
     * @param factory the Homa server factory
     * @param shutdownGracePeriod how long stopping waits for the server to terminate (it terminates at once)
     * @param publisher where the lifecycle events go
     */
    public HomaGrpcServerLifecycle(GrpcServerFactory factory, Duration shutdownGracePeriod,
            ApplicationEventPublisher publisher) {
        super(factory, shutdownGracePeriod, publisher);
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
