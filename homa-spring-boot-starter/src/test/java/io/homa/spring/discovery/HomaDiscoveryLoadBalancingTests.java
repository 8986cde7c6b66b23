package io.homa.spring.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.JsonPayloadCodec;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.RpcMethod;
import io.homa.spring.HomaAutoConfiguration;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.discovery.ReactiveDiscoveryClient;
import org.springframework.cloud.client.discovery.simple.InstanceProperties;
import org.springframework.cloud.client.discovery.simple.reactive.SimpleReactiveDiscoveryProperties;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Three Homa servers on loopback (ephemeral ports), each answering {@code who.name} with its own
 * name, and a client application that finds them through Spring Cloud's simple discovery client
 * and LoadBalancer (with Caffeine's instance cache, its time to live shortened).
 */
class HomaDiscoveryLoadBalancingTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private static final String SERVICE = "who";

    private static final List<Server> servers = new ArrayList<>();

    private final ApplicationContextRunner client = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HomaAutoConfiguration.class, HomaDiscoveryAutoConfiguration.class))
            .withConfiguration(SpringCloudTestConfigurations.DISCOVERY)
            .withConfiguration(SpringCloudTestConfigurations.LOAD_BALANCER)
            .withPropertyValues("homa.server.port=0", "homa.server.bind-address=127.0.0.1",
                    "homa.server.enabled=false", "spring.cloud.loadbalancer.cache.ttl=100ms",
                    // patient on a loaded machine: give up on a silent server after 2s, not 110ms
                    "homa.protocol.resend-interval=50ms", "homa.protocol.peer-silence-timeout=2s");

    @BeforeAll
    static void startServers() {
        for (String name : new String[] {"a", "b", "c"}) {
            servers.add(new Server(name));
        }
    }

    @AfterAll
    static void stopServers() {
        servers.forEach((server) -> server.transport.disposeNow());
        servers.clear();
    }

    @BeforeEach
    void resetCounts() {
        servers.forEach((server) -> server.calls.set(0));
    }

    @Test
    void shouldSpreadCallsOverTheDiscoveredInstances() {
        Server a = servers.get(0);
        Server b = servers.get(1);
        // a is registered with its Homa port; b with an HTTP port and its Homa port in metadata.
        this.client.withPropertyValues(
                "spring.cloud.discovery.client.simple.instances.who[0].uri=http://127.0.0.1:" + a.port(),
                "spring.cloud.discovery.client.simple.instances.who[1].uri=http://127.0.0.1:8080",
                "spring.cloud.discovery.client.simple.instances.who[1].metadata.homa-port=" + b.port())
                .run((context) -> {
                    assertThat(context).hasNotFailed();
                    HomaClient homa = context.getBean(HomaClient.class);
                    Map<String, Integer> answers = call(homa, 20);
                    assertThat(answers).containsOnlyKeys("a", "b");
                    assertThat(answers.get("a")).isEqualTo(10);
                    assertThat(answers.get("b")).isEqualTo(10);
                    assertThat(a.calls).hasValue(10);
                    assertThat(b.calls).hasValue(10);
                });
    }

    @Test
    void shouldSpreadCallsThroughTheBlockingDiscoveryClientWithoutWebFlux() {
        Server a = servers.get(0);
        Server b = servers.get(1);
        // Without WebFlux, Spring Cloud registers only blocking discovery clients; LoadBalancer uses them.
        this.client.withClassLoader(new FilteredClassLoader("org.springframework.web.reactive"))
                .withPropertyValues(
                        "spring.cloud.discovery.client.simple.instances.who[0].uri=http://127.0.0.1:" + a.port(),
                        "spring.cloud.discovery.client.simple.instances.who[1].uri=http://127.0.0.1:" + b.port())
                .run((context) -> {
                    assertThat(context).doesNotHaveBean(ReactiveDiscoveryClient.class);
                    assertThat(context.getBean(DiscoveryServiceResolver.class).discovery())
                            .isEqualTo("Spring Cloud LoadBalancer");
                    Map<String, Integer> answers = call(context.getBean(HomaClient.class), 10);
                    assertThat(answers).containsOnlyKeys("a", "b");
                    assertThat(answers.get("a")).isEqualTo(5);
                });
    }

    @Test
    void shouldSendTrafficToInstancesThatJoinAndNoneToInstancesThatLeave() {
        Server a = servers.get(0);
        Server b = servers.get(1);
        Server c = servers.get(2);
        this.client.withPropertyValues(
                "spring.cloud.discovery.client.simple.instances.who[0].uri=http://127.0.0.1:" + a.port(),
                "spring.cloud.discovery.client.simple.instances.who[1].uri=http://127.0.0.1:" + b.port())
                .run((context) -> {
                    HomaClient homa = context.getBean(HomaClient.class);
                    assertThat(call(homa, 10)).containsOnlyKeys("a", "b");

                    // a leaves, c joins, while the client runs.
                    SimpleReactiveDiscoveryProperties discovery =
                            context.getBean(SimpleReactiveDiscoveryProperties.class);
                    discovery.setInstances(Map.of(SERVICE, List.of(instance(b), instance(c))));
                    await().atMost(WAIT).pollInterval(Duration.ofMillis(20))
                            .until(() -> "c".equals(homa.call(SERVICE, "name", null, String.class).block(WAIT)));

                    resetCounts();
                    Map<String, Integer> answers = call(homa, 20);
                    assertThat(answers).containsOnlyKeys("b", "c");
                    assertThat(answers.get("b")).isEqualTo(10);
                    assertThat(answers.get("c")).isEqualTo(10);
                    assertThat(a.calls).hasValue(0);
                });
    }

    @Test
    void shouldPreferStaticPeersOverDiscovery() {
        Server a = servers.get(0);
        Server b = servers.get(1);
        Server c = servers.get(2);
        this.client.withPropertyValues(
                "homa.client.peers.who=127.0.0.1:" + c.port(),
                "spring.cloud.discovery.client.simple.instances.who[0].uri=http://127.0.0.1:" + a.port(),
                "spring.cloud.discovery.client.simple.instances.who[1].uri=http://127.0.0.1:" + b.port(),
                "spring.cloud.discovery.client.simple.instances.other[0].uri=http://127.0.0.1:" + a.port())
                .run((context) -> {
                    HomaClient homa = context.getBean(HomaClient.class);
                    assertThat(call(homa, 6)).containsExactly(Map.entry("c", 6));
                    assertThat(a.calls).hasValue(0);
                    assertThat(b.calls).hasValue(0);
                    // A service without static peers still goes through discovery.
                    assertThat(homa.call("other", "name", null, String.class).block(WAIT)).isEqualTo("a");
                });
    }

    private static Map<String, Integer> call(HomaClient homa, int count) {
        Map<String, Integer> answers = new HashMap<>();
        for (int i = 0; i < count; i++) {
            String name = homa.call(SERVICE, "name", null, String.class).block(WAIT);
            answers.merge(name, 1, Integer::sum);
        }
        return answers;
    }

    private static InstanceProperties instance(Server server) {
        InstanceProperties instance = new InstanceProperties();
        instance.setServiceId(SERVICE);
        instance.setUri(URI.create("http://127.0.0.1:" + server.port()));
        instance.setMetadata(new LinkedHashMap<>());
        return instance;
    }

    /** A Homa endpoint serving {@code who.name} (and {@code other.name}) with its name. */
    private static final class Server {

        final String name;

        final AtomicInteger calls = new AtomicInteger();

        final HomaTransport transport;

        Server(String name) {
            this.name = name;
            RpcDispatcher dispatcher = new RpcDispatcher(new JsonPayloadCodec(), Schedulers.boundedElastic());
            for (String service : new String[] {SERVICE, "other"}) {
                dispatcher.register(new RpcMethod(service, "name", null, (argument) -> {
                    this.calls.incrementAndGet();
                    return Mono.just(name);
                }));
            }
            this.transport = HomaTransport.bindNow(HomaTransportConfig.builder().bindAddress("127.0.0.1").port(0)
                    .build(), dispatcher, WAIT);
        }

        int port() {
            return this.transport.localAddress().getPort();
        }
    }
}
