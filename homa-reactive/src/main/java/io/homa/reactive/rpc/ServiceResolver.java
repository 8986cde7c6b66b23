package io.homa.reactive.rpc;

import java.net.InetSocketAddress;

/** Finds the endpoint that serves a service. */
@FunctionalInterface
public interface ServiceResolver {
    /**
     * @param service the service name
     * @return the server endpoint
     * @throws io.homa.reactive.HomaException with status UNAVAILABLE if no endpoint is known
     */
    InetSocketAddress resolve(String service);
}
