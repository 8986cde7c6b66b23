package io.homa.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.PayloadCodecs;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.RpcMethod;
import java.lang.reflect.Type;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** {@code homa.client.local-services}: calls to the application's own services go to its own endpoint. */
class LocalServicesTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HomaAutoConfiguration.class))
            .withPropertyValues("homa.server.port=0", "homa.server.bind-address=127.0.0.1")
            .withUserConfiguration(EchoConfiguration.class);

    @Test
    void shouldCallAnExportedServiceOnTheOwnEndpointWithoutAPeer() {
        this.contextRunner.withPropertyValues("homa.client.local-services=*").run((context) -> {
            assertThat(context).hasNotFailed();
            HomaClient client = context.getBean(HomaClient.class);
            assertThat(client.call("echo", "echo", "a", String.class).block(WAIT)).isEqualTo("local a");
        });
    }

    @Test
    void shouldResolveAServiceThisApplicationDoesNotExportAsUsual() {
        this.contextRunner.withPropertyValues("homa.client.local-services=*").run((context) -> {
            HomaClient client = context.getBean(HomaClient.class);
            assertThatThrownBy(() -> client.call("elsewhere", "echo", "a", String.class).block(WAIT))
                    .isInstanceOfSatisfying(HomaException.class,
                            (e) -> assertThat(e.status()).isEqualTo(HomaStatus.UNAVAILABLE))
                    .hasMessageContaining("no peer for service 'elsewhere'");
        });
    }

    @Test
    void shouldCallTheConfiguredPeerOfAnExportedService() {
        HomaTransport peer = echoServer("peer");
        try {
            this.contextRunner.withPropertyValues("homa.client.local-services=*",
                    "homa.client.peers.echo=127.0.0.1:" + peer.localAddress().getPort()).run((context) -> {
                        HomaClient client = context.getBean(HomaClient.class);
                        assertThat(client.call("echo", "echo", "a", String.class).block(WAIT)).isEqualTo("peer a");
                    });
        } finally {
            peer.disposeNow(WAIT);
        }
    }

    @Test
    void shouldRouteOnlyTheListedServices() {
        this.contextRunner.withPropertyValues("homa.client.local-services=other").run((context) -> {
            HomaClient client = context.getBean(HomaClient.class);
            assertThatThrownBy(() -> client.call("echo", "echo", "a", String.class).block(WAIT))
                    .isInstanceOfSatisfying(HomaException.class,
                            (e) -> assertThat(e.status()).isEqualTo(HomaStatus.UNAVAILABLE))
                    .hasMessageContaining("no peer for service 'echo'");
        });
    }

    @Test
    void shouldNotRouteLocallyByDefault() {
        this.contextRunner.run((context) -> {
            HomaClient client = context.getBean(HomaClient.class);
            assertThatThrownBy(() -> client.call("echo", "echo", "a", String.class).block(WAIT))
                    .isInstanceOf(HomaException.class)
                    .hasMessageContaining("no peer for service 'echo'");
        });
    }

    @Test
    void shouldFailStartUpOnABlankEntry() {
        this.contextRunner.withPropertyValues("homa.client.local-services[0]=echo", "homa.client.local-services[1]= ")
                .run((context) -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                            .hasMessageContaining("homa.client.local-services")
                            .hasMessageContaining("must list service names, or *");
                });
    }

    @Test
    void shouldCallTheLoopbackAddressOfAWildcardBind() {
        assertThat(LocalServiceResolver.reachable(new InetSocketAddress("0.0.0.0", 4000)))
                .isEqualTo(new InetSocketAddress("127.0.0.1", 4000));
        assertThat(LocalServiceResolver.reachable(new InetSocketAddress("::", 4000)))
                .isEqualTo(new InetSocketAddress("::1", 4000));
        assertThat(LocalServiceResolver.reachable(new InetSocketAddress("127.0.0.2", 4000)))
                .isEqualTo(new InetSocketAddress("127.0.0.2", 4000));
    }

    private static HomaTransport echoServer(String prefix) {
        RpcDispatcher dispatcher = new RpcDispatcher(PayloadCodecs.defaults(), Schedulers.boundedElastic());
        dispatcher.register(RpcMethod.unary("echo", "echo", new Type[] {String.class},
                (arguments) -> Mono.just(prefix + " " + arguments[0])));
        return HomaTransport.bindNow(HomaTransportConfig.builder().bindAddress("127.0.0.1").port(0).build(),
                dispatcher, WAIT);
    }

    @HomaService("echo")
    static class EchoService {

        public String echo(String text) {
            return "local " + text;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class EchoConfiguration {

        @Bean
        EchoService echoService() {
            return new EchoService();
        }
    }
}
