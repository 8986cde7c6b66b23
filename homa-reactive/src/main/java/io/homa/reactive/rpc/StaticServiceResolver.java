package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;

/**
 * A {@link ServiceResolver} over a fixed map from service name to endpoints; several endpoints
 * of one service are used in turn (round robin, per resolution).
 */
public final class StaticServiceResolver implements ServiceResolver {
    private final Map<String, List<InetSocketAddress>> peers;
    private final Map<String, AtomicInteger> next = new ConcurrentHashMap<>();
    /** The answer for each service with one endpoint, made once (not a Mono per call). */
    private final Map<String, Mono<InetSocketAddress>> singleEndpoints;

    /**
     * One endpoint per service.
     *
     * @param endpoints service name to server endpoint; copied
     * @throws NullPointerException if the map, a name or an endpoint is null
     */
    public StaticServiceResolver(Map<String, InetSocketAddress> endpoints) {
        this(new Peers(toLists(endpoints)));
    }

    private StaticServiceResolver(Peers peers) {
        this.peers = peers.byService();
        Map<String, Mono<InetSocketAddress>> single = new LinkedHashMap<>();
        this.peers.forEach((service, endpoints) -> {
            if (endpoints.size() == 1) {
                single.put(service, Mono.just(endpoints.get(0)));
            }
        });
        this.singleEndpoints = Map.copyOf(single);
    }

    /** Validated, immutable peer lists (a record, so the constructors do not clash by erasure). */
    private record Peers(Map<String, List<InetSocketAddress>> byService) {}

    /**
     * Several endpoints per service, used round robin.
     *
     * @param peers service name to its endpoints; copied
     * @throws IllegalArgumentException if a service has no endpoints
     * @throws NullPointerException if the map, a name, a list or an endpoint is null
     */
    public static StaticServiceResolver ofPeers(Map<String, ? extends List<InetSocketAddress>> peers) {
        Objects.requireNonNull(peers, "peers must not be null");
        Map<String, List<InetSocketAddress>> copy = new LinkedHashMap<>();
        peers.forEach((service, endpoints) -> {
            Objects.requireNonNull(service, "service names must not be null");
            List<InetSocketAddress> list = List.copyOf(
                    Objects.requireNonNull(endpoints, () -> "endpoints of '" + service + "' must not be null"));
            if (list.isEmpty()) {
                throw new IllegalArgumentException("service '" + service + "' must have at least one endpoint");
            }
            copy.put(service, list);
        });
        return new StaticServiceResolver(new Peers(Map.copyOf(copy)));
    }

    /** A resolver that knows one service. */
    public static StaticServiceResolver of(String service, InetSocketAddress endpoint) {
        return new StaticServiceResolver(Map.of(service, endpoint));
    }

    private static Map<String, List<InetSocketAddress>> toLists(Map<String, InetSocketAddress> endpoints) {
        Objects.requireNonNull(endpoints, "endpoints must not be null");
        Map<String, List<InetSocketAddress>> lists = new LinkedHashMap<>();
        endpoints.forEach((service, endpoint) -> lists.put(
                Objects.requireNonNull(service, "service names must not be null"),
                List.of(Objects.requireNonNull(endpoint, () -> "endpoint of '" + service + "' must not be null"))));
        return Map.copyOf(lists);
    }

    /**
     * The next endpoint of {@code service}, or an error {@link HomaException} with status
     * UNAVAILABLE if {@code service} is not in the map.
     */
    @Override
    public Mono<InetSocketAddress> resolve(String service) {
        Mono<InetSocketAddress> single = singleEndpoints.get(service);
        return single != null ? single : Mono.fromCallable(() -> resolveNow(service));
    }

    /**
     * {@link #resolve} without a {@code Mono}.
     *
     * @throws HomaException with status UNAVAILABLE if {@code service} is not in the map
     */
    public InetSocketAddress resolveNow(String service) {
        List<InetSocketAddress> endpoints = peers.get(service);
        if (endpoints == null) {
            throw new HomaException(HomaStatus.UNAVAILABLE, "no peer for service '" + service + "' (configured: "
                    + String.join(", ", peers.keySet()) + ")");
        }
        if (endpoints.size() == 1) {
            return endpoints.get(0);
        }
        int index = next.computeIfAbsent(service, s -> new AtomicInteger()).getAndIncrement();
        return endpoints.get(Math.floorMod(index, endpoints.size()));
    }

    /** The first configured endpoint of each service (unmodifiable). */
    public Map<String, InetSocketAddress> endpoints() {
        Map<String, InetSocketAddress> first = new LinkedHashMap<>();
        peers.forEach((service, endpoints) -> first.put(service, endpoints.get(0)));
        return Map.copyOf(first);
    }

    /** Every configured endpoint of each service (unmodifiable). */
    public Map<String, List<InetSocketAddress>> peers() {
        return peers;
    }

    @Override
    public String toString() {
        return "StaticServiceResolver" + peers;
    }
}
