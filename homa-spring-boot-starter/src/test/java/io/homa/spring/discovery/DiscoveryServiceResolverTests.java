package io.homa.spring.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.StaticServiceResolver;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.discovery.ReactiveDiscoveryClient;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.EmptyResponse;
import org.springframework.cloud.client.loadbalancer.HintRequestContext;
import org.springframework.cloud.client.loadbalancer.LoadBalancerProperties;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** {@link DiscoveryServiceResolver} over fake Spring Cloud load balancers and discovery clients. */
class DiscoveryServiceResolverTests {

    private static final Duration WAIT = Duration.ofSeconds(5);

    private static final String KEY = HomaDiscoveryProperties.DEFAULT_PORT_METADATA_KEY;

    private static final StaticServiceResolver NO_STATIC_PEERS = StaticServiceResolver.ofPeers(Map.of());

    @Test
    void shouldTakeTheHomaPortFromMetadataWhenPresent() {
        assertThat(DiscoveryServiceResolver.homaPort(instance("10.0.0.1", 8080, Map.of(KEY, " 4100 ")), KEY))
                .isEqualTo(4100);
        assertThat(DiscoveryServiceResolver.homaPort(instance("10.0.0.1", 8080, Map.of("grpc-port", "9090")),
                "grpc-port")).isEqualTo(9090);
    }

    @Test
    void shouldFallBackToTheRegisteredPort() {
        assertThat(DiscoveryServiceResolver.homaPort(instance("10.0.0.1", 8080, Map.of()), KEY)).isEqualTo(8080);
        assertThat(DiscoveryServiceResolver.homaPort(instance("10.0.0.1", 8080, Map.of("other", "1")), KEY))
                .isEqualTo(8080);
    }

    @Test
    void shouldRejectAHomaPortThatIsNotAPort() {
        for (String bad : new String[] {"abc", "0", "65536", ""}) {
            assertThatThrownBy(() -> DiscoveryServiceResolver.homaPort(instance("10.0.0.1", 8080, Map.of(KEY, bad)),
                    KEY))
                    .isInstanceOfSatisfying(HomaException.class,
                            (ex) -> assertThat(ex.status()).isEqualTo(HomaStatus.UNAVAILABLE))
                    .hasMessageContaining("homa-port='" + bad + "'")
                    .hasMessageContaining("between 1 and 65535")
                    .hasMessageContaining("of service 'who'");
        }
    }

    @Test
    void shouldRejectAnInstanceWithoutAPort() {
        assertThatThrownBy(() -> DiscoveryServiceResolver.homaPort(instance("10.0.0.1", -1, Map.of()), KEY))
                .isInstanceOf(HomaException.class)
                .hasMessageContaining("has no port between 1 and 65535 (-1)")
                .hasMessageContaining("metadata 'homa-port'");
    }

    @Test
    void shouldUseIpLiteralsAsTheyAre() {
        InetSocketAddress v4 = DiscoveryServiceResolver.address(instance("127.0.0.1", 4100, Map.of()), KEY)
                .block(WAIT);
        assertThat(v4).isEqualTo(new InetSocketAddress("127.0.0.1", 4100));
        assertThat(v4.isUnresolved()).isFalse();
        InetSocketAddress v6 = DiscoveryServiceResolver.address(instance("[::1]", 8080, Map.of(KEY, "4200")), KEY)
                .block(WAIT);
        assertThat(v6).isEqualTo(new InetSocketAddress("::1", 4200));
    }

    @Test
    void shouldResolveHostNamesOffTheCallersThread() {
        AtomicReference<String> thread = new AtomicReference<>();
        InetSocketAddress address = DiscoveryServiceResolver.address(instance("localhost", 4100, Map.of()), KEY)
                .doOnNext((resolved) -> thread.set(Thread.currentThread().getName()))
                .block(WAIT);
        assertThat(address.isUnresolved()).isFalse();
        assertThat(address.getAddress().isLoopbackAddress()).isTrue();
        assertThat(thread.get()).startsWith("boundedElastic");
    }

    @Test
    void shouldSendServicesWithStaticPeersToThemAndNeverAskTheLoadBalancer() {
        InetSocketAddress staticPeer = new InetSocketAddress("127.0.0.1", 4001);
        FakeLoadBalancers loadBalancers = new FakeLoadBalancers(Map.of("who",
                (request) -> Mono.just(new DefaultResponse(instance("127.0.0.1", 4100, Map.of())))));
        DiscoveryServiceResolver resolver = DiscoveryServiceResolver.loadBalanced(
                StaticServiceResolver.ofPeers(Map.of("who", List.of(staticPeer))), loadBalancers, KEY);
        for (int i = 0; i < 3; i++) {
            assertThat(resolver.resolve("who").block(WAIT)).isEqualTo(staticPeer);
        }
        assertThat(loadBalancers.lookups).hasValue(0);
    }

    @Test
    void shouldAskTheLoadBalancerOnEverySubscription() {
        AtomicReference<ServiceInstance> current = new AtomicReference<>(instance("127.0.0.1", 4100, Map.of()));
        FakeLoadBalancers loadBalancers = new FakeLoadBalancers(
                Map.of("who", (request) -> Mono.fromSupplier(() -> new DefaultResponse(current.get()))));
        DiscoveryServiceResolver resolver = DiscoveryServiceResolver.loadBalanced(NO_STATIC_PEERS, loadBalancers,
                KEY);
        Mono<InetSocketAddress> resolution = resolver.resolve("who");
        assertThat(loadBalancers.lookups).as("lazy").hasValue(0);
        assertThat(resolution.block(WAIT)).isEqualTo(new InetSocketAddress("127.0.0.1", 4100));
        current.set(instance("127.0.0.2", 8080, Map.of(KEY, "4200")));
        assertThat(resolution.block(WAIT)).isEqualTo(new InetSocketAddress("127.0.0.2", 4200));
        assertThat(loadBalancers.lookups).hasValue(2);
        assertThat(resolver.discovery()).isEqualTo("Spring Cloud LoadBalancer");
    }

    @Test
    void shouldPassTheServicesLoadBalancerHint() {
        List<Request<?>> requests = new CopyOnWriteArrayList<>();
        FakeLoadBalancers loadBalancers = new FakeLoadBalancers(Map.of(
                "who", (request) -> {
                    requests.add(request);
                    return Mono.just(new DefaultResponse(instance("127.0.0.1", 4100, Map.of())));
                },
                "other", (request) -> {
                    requests.add(request);
                    return Mono.just(new DefaultResponse(instance("127.0.0.1", 4100, Map.of())));
                }));
        loadBalancers.properties.setHint(Map.of("who", "zone-a", "default", "zone-b"));
        DiscoveryServiceResolver resolver = DiscoveryServiceResolver.loadBalanced(NO_STATIC_PEERS, loadBalancers,
                KEY);
        resolver.resolve("who").block(WAIT);
        resolver.resolve("other").block(WAIT);
        assertThat(requests).extracting((request) -> ((HintRequestContext) request.getContext()).getHint())
                .containsExactly("zone-a", "zone-b");
    }

    @Test
    void shouldFailUnavailableWhenTheLoadBalancerHasNoInstance() {
        FakeLoadBalancers loadBalancers = new FakeLoadBalancers(Map.of("who", (request) -> Mono.just(
                new EmptyResponse())));
        DiscoveryServiceResolver resolver = DiscoveryServiceResolver.loadBalanced(NO_STATIC_PEERS, loadBalancers,
                KEY);
        for (String service : new String[] {"who", "unknown"}) {
            assertThatThrownBy(() -> resolver.resolve(service).block(WAIT))
                    .isInstanceOfSatisfying(HomaException.class,
                            (ex) -> assertThat(ex.status()).isEqualTo(HomaStatus.UNAVAILABLE))
                    .hasMessage("no peer for service '" + service + "': it is not in homa.client.peers and Spring"
                            + " Cloud LoadBalancer found no instance of it");
        }
    }

    @Test
    void shouldFailUnavailableWithTheCauseWhenDiscoveryFails() {
        IllegalStateException down = new IllegalStateException("registry down");
        FakeLoadBalancers loadBalancers = new FakeLoadBalancers(Map.of("who", (request) -> Mono.error(down)));
        DiscoveryServiceResolver resolver = DiscoveryServiceResolver.loadBalanced(NO_STATIC_PEERS, loadBalancers,
                KEY);
        assertThatThrownBy(() -> resolver.resolve("who").block(WAIT))
                .isInstanceOfSatisfying(HomaException.class,
                        (ex) -> assertThat(ex.status()).isEqualTo(HomaStatus.UNAVAILABLE))
                .hasMessageContaining("discovery of service 'who' through Spring Cloud LoadBalancer failed")
                .hasMessageContaining("registry down")
                .hasCause(down);
    }

    @Test
    void shouldTakeDiscoveredInstancesInTurnAndSeeChanges() {
        List<ServiceInstance> instances = new CopyOnWriteArrayList<>(List.of(
                instance("127.0.0.1", 4101, Map.of()), instance("127.0.0.1", 4102, Map.of())));
        DiscoveryServiceResolver resolver = DiscoveryServiceResolver.roundRobin(NO_STATIC_PEERS,
                new FakeDiscoveryClient(instances), KEY);
        List<Integer> ports = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            ports.add(resolver.resolve("who").block(WAIT).getPort());
        }
        assertThat(ports).containsExactly(4101, 4102, 4101, 4102);
        instances.remove(0);
        instances.add(instance("127.0.0.1", 4103, Map.of()));
        ports.clear();
        for (int i = 0; i < 4; i++) {
            ports.add(resolver.resolve("who").block(WAIT).getPort());
        }
        assertThat(ports).containsOnly(4102, 4103).contains(4102, 4103);
        instances.clear();
        assertThatThrownBy(() -> resolver.resolve("who").block(WAIT)).isInstanceOf(HomaException.class)
                .hasMessageContaining("discovery client 'fake' found no instance");
        assertThat(resolver.discovery()).isEqualTo("discovery client 'fake'");
    }

    @Test
    void shouldAskABlockingDiscoveryClientOffTheCallersThread() {
        List<String> threads = new CopyOnWriteArrayList<>();
        DiscoveryClient blocking = new DiscoveryClient() {
            @Override
            public String description() {
                return "blocking";
            }

            @Override
            public List<ServiceInstance> getInstances(String serviceId) {
                threads.add(Thread.currentThread().getName());
                return List.of(instance("127.0.0.1", 4101, Map.of()), instance("127.0.0.1", 8080, Map.of(KEY, "4102")));
            }

            @Override
            public List<String> getServices() {
                return List.of("who");
            }
        };
        DiscoveryServiceResolver resolver = DiscoveryServiceResolver.roundRobin(NO_STATIC_PEERS, blocking, KEY);
        List<Integer> ports = List.of(resolver.resolve("who").block(WAIT).getPort(),
                resolver.resolve("who").block(WAIT).getPort());
        assertThat(ports).containsExactly(4101, 4102);
        assertThat(threads).hasSize(2).allMatch((name) -> name.startsWith("boundedElastic"));
        assertThat(resolver.discovery()).isEqualTo("discovery client 'blocking'");
    }

    @Test
    void shouldRejectAnEmptyPortMetadataKey() {
        assertThatThrownBy(() -> DiscoveryServiceResolver.roundRobin(NO_STATIC_PEERS,
                new FakeDiscoveryClient(List.of()), " "))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("portMetadataKey");
    }

    private static ServiceInstance instance(String host, int port, Map<String, String> metadata) {
        return new DefaultServiceInstance("who-" + host + "-" + port, "who", host, port, false, metadata);
    }

    /** Spring Cloud LoadBalancer's factory with fixed load balancers per service. */
    static final class FakeLoadBalancers implements ReactiveLoadBalancer.Factory<ServiceInstance> {

        final Map<String, ReactiveLoadBalancer<ServiceInstance>> balancers;

        final AtomicInteger lookups = new AtomicInteger();

        final LoadBalancerProperties properties = new LoadBalancerProperties();

        FakeLoadBalancers(Map<String, ReactiveLoadBalancer<ServiceInstance>> balancers) {
            this.balancers = balancers;
        }

        @Override
        public ReactiveLoadBalancer<ServiceInstance> getInstance(String serviceId) {
            this.lookups.incrementAndGet();
            ReactiveLoadBalancer<ServiceInstance> balancer = this.balancers.get(serviceId);
            return (balancer != null) ? balancer : (request) -> Mono.just(new EmptyResponse());
        }

        @Override
        public <X> Map<String, X> getInstances(String name, Class<X> type) {
            return Map.of();
        }

        @Override
        public <X> X getInstance(String name, Class<?> clazz, Class<?>... generics) {
            throw new UnsupportedOperationException();
        }

        @Override
        public LoadBalancerProperties getProperties(String serviceId) {
            return this.properties;
        }
    }

    /** A discovery client over a list the test changes. */
    record FakeDiscoveryClient(List<ServiceInstance> instances) implements ReactiveDiscoveryClient {

        @Override
        public String description() {
            return "fake";
        }

        @Override
        public Flux<ServiceInstance> getInstances(String serviceId) {
            return Flux.defer(() -> Flux.fromIterable(List.copyOf(this.instances)));
        }

        @Override
        public Flux<String> getServices() {
            return Flux.just("who");
        }
    }
}
