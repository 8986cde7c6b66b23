package io.homa.spring.discovery;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.ServiceResolver;
import io.homa.reactive.rpc.StaticServiceResolver;
import io.netty.util.NetUtil;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.discovery.ReactiveDiscoveryClient;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.DefaultRequestContext;
import org.springframework.cloud.client.loadbalancer.LoadBalancerProperties;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.util.StringUtils;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A {@link ServiceResolver} backed by Spring Cloud. A service with static peers (the
 * {@link StaticServiceResolver} given, built from {@code homa.client.peers}) always goes to them;
 * any other service is looked up through Spring Cloud on every resolution, that is on every call
 * attempt, so instances that join get traffic and instances that leave stop getting it (within
 * the discovery client's and the load balancer's cache lifetimes, for Spring Cloud LoadBalancer
 * {@code spring.cloud.loadbalancer.cache.ttl}, 35s by default).
 *
 * <p>Two ways to pick an instance:
 * <ul>
 *   <li>{@link #loadBalanced}: Spring Cloud LoadBalancer's {@link ReactiveLoadBalancer} for the
 *       service (round robin by default; per-service configuration, hints, health checks, zone
 *       preference and caching as configured under {@code spring.cloud.loadbalancer.*});</li>
 *   <li>{@code roundRobin}: a {@link ReactiveDiscoveryClient} (or a blocking
 *       {@link DiscoveryClient}) asked for the instances on every call, used in turn; for
 *       applications with Spring Cloud Commons but not LoadBalancer.</li>
 * </ul>
 *
 * <p>The Homa (UDP) port of an instance is its metadata entry {@code homa-port} (the key is
 * {@code homa.client.discovery.port-metadata-key}) when present, else
 * {@link ServiceInstance#getPort()}: an application registered with its HTTP port announces its
 * Homa port in metadata. IP literals are used as they are; host names are resolved on
 * {@link Schedulers#boundedElastic()}, never on the caller's thread (which may be an event loop).
 *
 * <p>Errors, all {@link HomaException} with status UNAVAILABLE naming the service: no instance
 * found, discovery failed (the cause attached), an instance without a valid port or whose host
 * does not resolve.
 */
public final class DiscoveryServiceResolver implements ServiceResolver {

    private final StaticServiceResolver staticPeers;

    private final InstanceChooser chooser;

    private final String portMetadataKey;

    private final String discovery;

    private DiscoveryServiceResolver(StaticServiceResolver staticPeers, InstanceChooser chooser,
            String portMetadataKey, String discovery) {
        this.staticPeers = Objects.requireNonNull(staticPeers, "staticPeers must not be null");
        this.chooser = chooser;
        if (!StringUtils.hasText(portMetadataKey)) {
            throw new IllegalArgumentException("portMetadataKey must not be empty, was '" + portMetadataKey + "'");
        }
        this.portMetadataKey = portMetadataKey;
        this.discovery = discovery;
    }

    /**
     * Static peers first, then Spring Cloud LoadBalancer.
     *
     * @param staticPeers services that are never looked up
     * @param loadBalancers Spring Cloud LoadBalancer's per-service load balancers (the
     *     {@code LoadBalancerClientFactory} bean)
     * @param portMetadataKey metadata key of an instance's Homa port, not empty
     * @throws IllegalArgumentException if {@code portMetadataKey} is empty
     */
    public static DiscoveryServiceResolver loadBalanced(StaticServiceResolver staticPeers,
            ReactiveLoadBalancer.Factory<ServiceInstance> loadBalancers, String portMetadataKey) {
        return new DiscoveryServiceResolver(staticPeers, new LoadBalancerChooser(loadBalancers), portMetadataKey,
                "Spring Cloud LoadBalancer");
    }

    /**
     * Static peers first, then {@code discoveryClient}'s instances, in turn.
     *
     * @param staticPeers services that are never looked up
     * @param discoveryClient asked for the instances of a service on every call
     * @param portMetadataKey metadata key of an instance's Homa port, not empty
     * @throws IllegalArgumentException if {@code portMetadataKey} is empty
     */
    public static DiscoveryServiceResolver roundRobin(StaticServiceResolver staticPeers,
            ReactiveDiscoveryClient discoveryClient, String portMetadataKey) {
        Objects.requireNonNull(discoveryClient, "discoveryClient must not be null");
        return new DiscoveryServiceResolver(staticPeers,
                new DiscoveryClientChooser((service) -> discoveryClient.getInstances(service).collectList()),
                portMetadataKey, "discovery client '" + discoveryClient.description() + "'");
    }

    /**
     * Static peers first, then the blocking {@code discoveryClient}'s instances, in turn; the
     * client is called on {@link Schedulers#boundedElastic()}. Spring Cloud offers only the
     * blocking client when Spring WebFlux is not on the classpath.
     *
     * @param staticPeers services that are never looked up
     * @param discoveryClient asked for the instances of a service on every call
     * @param portMetadataKey metadata key of an instance's Homa port, not empty
     * @throws IllegalArgumentException if {@code portMetadataKey} is empty
     */
    public static DiscoveryServiceResolver roundRobin(StaticServiceResolver staticPeers,
            DiscoveryClient discoveryClient, String portMetadataKey) {
        Objects.requireNonNull(discoveryClient, "discoveryClient must not be null");
        return new DiscoveryServiceResolver(staticPeers,
                new DiscoveryClientChooser((service) -> Mono.fromCallable(() -> discoveryClient.getInstances(service))
                        .subscribeOn(Schedulers.boundedElastic())),
                portMetadataKey, "discovery client '" + discoveryClient.description() + "'");
    }

    /**
     * The next endpoint of {@code service}: a static peer if it has any, else a discovered
     * instance. Lazy: the lookup happens on subscription, again on each one.
     *
     * @return the endpoint, or an error {@link HomaException} with status UNAVAILABLE
     */
    @Override
    public Mono<InetSocketAddress> resolve(String service) {
        if (this.staticPeers.peers().containsKey(service)) {
            return this.staticPeers.resolve(service);
        }
        return Mono.defer(() -> this.chooser.choose(service))
                .onErrorMap((error) -> !(error instanceof HomaException), (error) -> new HomaException(
                        HomaStatus.UNAVAILABLE, "discovery of service '" + service + "' through " + this.discovery
                                + " failed: " + error, error))
                .switchIfEmpty(Mono.error(() -> new HomaException(HomaStatus.UNAVAILABLE, "no peer for service '"
                        + service + "': it is not in homa.client.peers and " + this.discovery
                        + " found no instance of it")))
                .flatMap((instance) -> address(instance, this.portMetadataKey));
    }

    /** The static peers, which take precedence over discovery. */
    public StaticServiceResolver staticPeers() {
        return this.staticPeers;
    }

    /** What discovers the other services, e.g. {@code Spring Cloud LoadBalancer}. */
    public String discovery() {
        return this.discovery;
    }

    /**
     * The Homa port of {@code instance}: its metadata entry {@code portMetadataKey} if present,
     * else {@link ServiceInstance#getPort()}.
     *
     * @return a port in 1..65535
     * @throws HomaException with status UNAVAILABLE if the metadata entry is not a port in
     *     1..65535, or there is none and the registered port is not in 1..65535
     */
    public static int homaPort(ServiceInstance instance, String portMetadataKey) {
        Map<String, String> metadata = instance.getMetadata();
        String value = (metadata != null) ? metadata.get(portMetadataKey) : null;
        if (value != null) {
            int port;
            try {
                port = Integer.parseInt(value.trim());
            }
            catch (NumberFormatException ex) {
                port = -1;
            }
            if (port < 1 || port > 65535) {
                throw new HomaException(HomaStatus.UNAVAILABLE, "instance " + describe(instance) + " has metadata "
                        + portMetadataKey + "='" + value + "'; it must be a port between 1 and 65535");
            }
            return port;
        }
        int port = instance.getPort();
        if (port < 1 || port > 65535) {
            throw new HomaException(HomaStatus.UNAVAILABLE, "instance " + describe(instance)
                    + " has no port between 1 and 65535 (" + port + "); register it with its Homa port or put that"
                    + " port in its metadata '" + portMetadataKey + "'");
        }
        return port;
    }

    /**
     * The Homa endpoint of {@code instance}: its host and {@link #homaPort homa port}. An IP
     * literal is used directly; a host name is resolved on {@link Schedulers#boundedElastic()}.
     *
     * @return the resolved endpoint, or an error {@link HomaException} with status UNAVAILABLE
     *     if the port is invalid or the host is missing or does not resolve
     */
    public static Mono<InetSocketAddress> address(ServiceInstance instance, String portMetadataKey) {
        return Mono.defer(() -> {
            int port = homaPort(instance, portMetadataKey);
            String host = instance.getHost();
            if (!StringUtils.hasText(host)) {
                return Mono.error(new HomaException(HomaStatus.UNAVAILABLE,
                        "instance " + describe(instance) + " has no host"));
            }
            String literal = (host.startsWith("[") && host.endsWith("]")) ? host.substring(1, host.length() - 1)
                    : host;
            if (NetUtil.isValidIpV4Address(literal) || NetUtil.isValidIpV6Address(literal)) {
                return Mono.just(new InetSocketAddress(literal, port));
            }
            return Mono.fromCallable(() -> {
                InetSocketAddress address = new InetSocketAddress(literal, port); // DNS lookup
                if (address.isUnresolved()) {
                    throw new HomaException(HomaStatus.UNAVAILABLE,
                            "host '" + literal + "' of instance " + describe(instance) + " does not resolve");
                }
                return address;
            }).subscribeOn(Schedulers.boundedElastic());
        });
    }

    private static String describe(ServiceInstance instance) {
        String id = instance.getInstanceId();
        return ((id != null) ? "'" + id + "' " : "") + "(" + instance.getHost() + ":" + instance.getPort()
                + ") of service '" + instance.getServiceId() + "'";
    }

    @Override
    public String toString() {
        return "DiscoveryServiceResolver[static " + this.staticPeers.peers() + ", then " + this.discovery + "]";
    }

    /** Picks one instance of a service; empty when there is none. */
    @FunctionalInterface
    private interface InstanceChooser {

        Mono<ServiceInstance> choose(String service);
    }

    /** Asks Spring Cloud LoadBalancer's load balancer of the service. */
    private static final class LoadBalancerChooser implements InstanceChooser {

        private final ReactiveLoadBalancer.Factory<ServiceInstance> loadBalancers;

        /** Services whose load balancer exists (its child context was built). */
        private final Set<String> created = ConcurrentHashMap.newKeySet();

        LoadBalancerChooser(ReactiveLoadBalancer.Factory<ServiceInstance> loadBalancers) {
            this.loadBalancers = Objects.requireNonNull(loadBalancers, "loadBalancers must not be null");
        }

        @Override
        public Mono<ServiceInstance> choose(String service) {
            Mono<ReactiveLoadBalancer<ServiceInstance>> loadBalancer =
                    Mono.fromCallable(() -> this.loadBalancers.getInstance(service));
            if (!this.created.contains(service)) {
                // The first lookup builds the service's load balancer context: keep it off event loops.
                loadBalancer = loadBalancer.subscribeOn(Schedulers.boundedElastic())
                        .doOnNext((created) -> this.created.add(service));
            }
            return loadBalancer.flatMap((balancer) -> Mono.from(balancer.choose(request(service))))
                    .handle((response, sink) -> {
                        ServiceInstance instance = response.hasServer() ? response.getServer() : null;
                        if (instance != null) {
                            sink.next(instance);
                        }
                    });
        }

        /** A request with the service's hint ({@code spring.cloud.loadbalancer.hint.*}), as HTTP clients send. */
        private Request<DefaultRequestContext> request(String service) {
            LoadBalancerProperties properties = this.loadBalancers.getProperties(service);
            Map<String, String> hints = (properties != null) ? properties.getHint() : null;
            String hint = "default";
            if (hints != null) {
                hint = hints.getOrDefault(service, hints.getOrDefault("default", "default"));
            }
            return new DefaultRequest<>(new DefaultRequestContext(null, hint));
        }
    }

    /** Asks a discovery client on every call and takes its instances in turn. */
    private static final class DiscoveryClientChooser implements InstanceChooser {

        private final Function<String, Mono<List<ServiceInstance>>> instances;

        private final Map<String, AtomicInteger> next = new ConcurrentHashMap<>();

        DiscoveryClientChooser(Function<String, Mono<List<ServiceInstance>>> instances) {
            this.instances = instances;
        }

        @Override
        public Mono<ServiceInstance> choose(String service) {
            return this.instances.apply(service).handle((instances, sink) -> {
                if (!instances.isEmpty()) {
                    int index = this.next.computeIfAbsent(service, (name) -> new AtomicInteger()).getAndIncrement();
                    sink.next(instances.get(Math.floorMod(index, instances.size())));
                }
            });
        }
    }
}
