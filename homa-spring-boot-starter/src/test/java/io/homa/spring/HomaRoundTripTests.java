package io.homa.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.rpc.HomaClient;
import io.homa.spring.HomaServiceRegistrarTests.Greeting;
import io.homa.spring.HomaServiceRegistrarTests.GreeterService;
import io.homa.spring.HomaServiceRegistrarTests.Pair;
import io.homa.spring.HomaServiceRegistrarTests.Person;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** A server context exporting a {@code @HomaService} and a client context calling it over loopback UDP. */
class HomaRoundTripTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HomaAutoConfiguration.class))
            .withPropertyValues("homa.server.port=0", "homa.server.bind-address=127.0.0.1");

    @Test
    void shouldCallAHomaServiceThroughTheInjectedClient() {
        this.contextRunner.withUserConfiguration(GreeterService.class).run((server) -> {
            int port = server.getBean(HomaTransport.class).localAddress().getPort();
            this.contextRunner
                    .withPropertyValues("homa.server.enabled=false",
                            "homa.client.peers.GreeterService=127.0.0.1:" + port)
                    .run((client) -> {
                        HomaClient homa = client.getBean(HomaClient.class);
                        assertThat(homa.call("GreeterService", "greet", new Person("Ada"), Greeting.class)
                                .block(WAIT)).isEqualTo(new Greeting("Hello, Ada"));
                        assertThat(homa.call("GreeterService", "greetAsync", new Person("Bob"), Greeting.class)
                                .block(WAIT)).isEqualTo(new Greeting("Hello, Bob"));
                        assertThat(homa.call("GreeterService", "add", new Pair(20, 22), Integer.class).block(WAIT))
                                .isEqualTo(42);
                        assertThat(homa.call("GreeterService", "ping", null, String.class).block(WAIT))
                                .isEqualTo("pong");
                        assertThatThrownBy(() -> homa.call("GreeterService", "fail", "boom", Void.class).block(WAIT))
                                .isInstanceOfSatisfying(HomaRemoteException.class,
                                        (ex) -> assertThat(ex.status()).isEqualTo(HomaStatus.INTERNAL))
                                .hasMessageContaining("boom");
                    });
        });
    }
}
