package io.homa.demo;

import io.homa.demo.aggregator.AggregatorService;
import io.homa.demo.greeting.GreetingService;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.rpc.ServiceResolver;
import io.homa.reactive.rpc.StaticServiceResolver;
import io.homa.spring.HomaProperties;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

/** How the demo's {@code HomaClient} finds services; replaces the starter's resolver. */
@Configuration(proxyBeanMethods = false)
public class DemoHomaConfiguration {

    /** Services this application serves itself (on its own endpoint) unless a peer is configured for them. */
    static final Set<String> OWN_SERVICES = Set.of(GreetingService.SERVICE, AggregatorService.SERVICE);

    /**
     * The demo's resolver:
     * <ul>
     *   <li>{@value GreetingService#SERVICE} and {@value AggregatorService#SERVICE} without a
     *       configured peer: this application's own Homa endpoint (loopback, at the port it
     *       actually bound) in {@code local} and {@code server} mode, and in {@code client} mode the
     *       {@code --peer} host at {@value DemoEnvironmentPostProcessor#SERVER_MODE_HOMA_PORT}, the
     *       port a {@code --mode=server} demo serves them on;</li>
     *   <li>any other service: {@code homa.client.peers} (several comma-separated peers are used
     *       in turn).</li>
     * </ul>
     * Unknown services fail with a {@code HomaException} with status UNAVAILABLE. (The key-value
     * shards have resolvers of their own: {@link io.homa.demo.kv.KvShardClients}.)
     */
    @Bean
    ServiceResolver demoServiceResolver(HomaProperties homaProperties, DemoProperties demoProperties,
            ObjectProvider<HomaTransport> transport) {
        Map<String, List<InetSocketAddress>> peers = homaProperties.getClient().peerAddresses();
        StaticServiceResolver configured = StaticServiceResolver.ofPeers(peers);
        return service -> {
            if (peers.containsKey(service) || !OWN_SERVICES.contains(service)) {
                return configured.resolve(service);
            }
            return Mono.fromCallable(() -> {
                if (demoProperties.mode() == DemoProperties.Mode.CLIENT) {
                    return new InetSocketAddress(demoProperties.peerAddress().getHostString(),
                            DemoEnvironmentPostProcessor.SERVER_MODE_HOMA_PORT);
                }
                // The address the endpoint actually bound (--homa.server.bind-address), loopback for a wildcard.
                InetSocketAddress bound = transport.getObject().localAddress();
                return bound.getAddress() == null || bound.getAddress().isAnyLocalAddress()
                        ? new InetSocketAddress("127.0.0.1", bound.getPort())
                        : new InetSocketAddress(bound.getAddress(), bound.getPort());
            });
        };
    }
}
