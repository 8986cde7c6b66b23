package io.homa.reactive.internal.transport;

import io.homa.reactive.HomaRequestHandler;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.HomaTransportSpec;
import io.homa.reactive.NanoClock;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.netty.resources.LoopResources;

/**
 * What a transport binds with, as a {@link HomaTransportSpec} holds it: the spec's values handed
 * to the implementation, so that the spec itself needs no getters beyond its public ones.
 *
 * @param config where to bind and protocol settings
 * @param handler the server side, or null for a client-only endpoint
 * @param handlerScheduler where the handler runs, or null for the event loop
 * @param loops the caller's event loops, or null for loops of the transport's own
 * @param clock the clock of the engine, the pacer and the timers
 * @param holdRequests whether requests wait for {@code startServing}
 */
public record TransportSettings(HomaTransportConfig config, @Nullable HomaRequestHandler handler,
        @Nullable Scheduler handlerScheduler, @Nullable LoopResources loops, NanoClock clock, boolean holdRequests) {}
