package io.homa.reactive.rpc;

import java.net.InetSocketAddress;
import reactor.core.publisher.Mono;

/** Finds an endpoint that serves a service; asked once per call attempt. */
@FunctionalInterface
public interface ServiceResolver {
    /**
     * @param service the service name
     * @return the server endpoint (may differ per subscription, e.g. round robin), or an error:
     *     {@link io.homa.reactive.HomaException} with status UNAVAILABLE naming the service if no
     *     endpoint is known
     */
    Mono<InetSocketAddress> resolve(String service);
}
