package io.homa.demo;

import io.homa.demo.greeting.GreetingService;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.rpc.ServiceResolver;
import io.homa.reactive.rpc.StaticServiceResolver;
import io.homa.spring.HomaProperties;
import java.net.InetSocketAddress;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** How the demo's {@code HomaClient} finds services; replaces the starter's resolver. */
@Configuration(proxyBeanMethods = false)
public class DemoHomaConfiguration {

    /**
     * Services in {@code homa.client.peers} resolve as configured. {@value GreetingService#SERVICE}
     * without a configured peer resolves to this application's own Homa endpoint (loopback, at the
     * port it actually bound) in {@code local} and {@code server} mode, and in {@code client} mode
     * to the {@code --peer} host at {@value DemoEnvironmentPostProcessor#SERVER_MODE_HOMA_PORT}, the
     * port a {@code --mode=server} demo serves it on.
     */
    @Bean
    ServiceResolver demoServiceResolver(
            HomaProperties homaProperties, DemoProperties demoProperties, ObjectProvider<HomaTransport> transport) {
        Map<String, InetSocketAddress> peers = homaProperties.getClient().peerAddresses();
        StaticServiceResolver configured = new StaticServiceResolver(peers);
        return service -> {
            if (peers.containsKey(service) || !GreetingService.SERVICE.equals(service)) {
                return configured.resolve(service);
            }
            if (demoProperties.mode() == DemoProperties.Mode.CLIENT) {
                return new InetSocketAddress(
                        demoProperties.peerAddress().getHostString(), DemoEnvironmentPostProcessor.SERVER_MODE_HOMA_PORT);
            }
            return new InetSocketAddress("127.0.0.1", transport.getObject().localAddress().getPort());
        };
    }
}
