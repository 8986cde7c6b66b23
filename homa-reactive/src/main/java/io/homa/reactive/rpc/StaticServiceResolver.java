package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import java.net.InetSocketAddress;
import java.util.Map;

/** A {@link ServiceResolver} over a fixed map from service name to endpoint. */
public final class StaticServiceResolver implements ServiceResolver {
    private final Map<String, InetSocketAddress> endpoints;

    /**
     * @param endpoints service name to server endpoint; copied
     * @throws NullPointerException if the map, a name or an endpoint is null
     */
    public StaticServiceResolver(Map<String, InetSocketAddress> endpoints) {
        this.endpoints = Map.copyOf(endpoints);
    }

    /** A resolver that knows one service. */
    public static StaticServiceResolver of(String service, InetSocketAddress endpoint) {
        return new StaticServiceResolver(Map.of(service, endpoint));
    }

    /**
     * @throws HomaException with status UNAVAILABLE if {@code service} is not in the map
     */
    @Override
    public InetSocketAddress resolve(String service) {
        InetSocketAddress endpoint = endpoints.get(service);
        if (endpoint == null) {
            throw new HomaException(HomaStatus.UNAVAILABLE, "no endpoint configured for service '" + service + "'");
        }
        return endpoint;
    }

    /** The configured endpoints (unmodifiable). */
    public Map<String, InetSocketAddress> endpoints() {
        return endpoints;
    }

    @Override
    public String toString() {
        return "StaticServiceResolver" + endpoints;
    }
}
