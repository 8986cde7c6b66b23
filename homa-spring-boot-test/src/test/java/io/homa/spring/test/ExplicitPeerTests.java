package io.homa.spring.test;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.rpc.PayloadCodecs;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.RpcMethod;
import io.homa.spring.test.app.GreetingApplication;
import io.homa.spring.test.app.GreetingClient;
import io.homa.spring.test.app.GreetingService;
import java.lang.reflect.Type;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** A {@code homa.client.peers} entry still wins over the application's own endpoint. */
@SpringBootTest(classes = GreetingApplication.class)
@AutoConfigureHomaTest
@DirtiesContext
class ExplicitPeerTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    /** Another endpoint serving the same service, answering differently. */
    private static final HomaTransport PEER = peer();

    @Autowired
    private GreetingClient greetingClient;

    @DynamicPropertySource
    static void peers(DynamicPropertyRegistry registry) {
        registry.add("homa.client.peers.greeting", () -> "127.0.0.1:" + PEER.localAddress().getPort());
    }

    @AfterAll
    static void stopPeer() {
        PEER.disposeNow(WAIT);
    }

    @Test
    void shouldCallTheConfiguredPeer() {
        assertThat(this.greetingClient.greet("Ada").block(WAIT)).isEqualTo("Hello from the peer, Ada");
    }

    private static HomaTransport peer() {
        RpcDispatcher dispatcher = new RpcDispatcher(PayloadCodecs.defaults(), Schedulers.boundedElastic());
        dispatcher.register(RpcMethod.unary(GreetingService.SERVICE, "greet", new Type[] {String.class},
                (arguments) -> Mono.just("Hello from the peer, " + arguments[0])));
        return HomaTransport.bindNow(HomaTransportConfig.builder().bindAddress("127.0.0.1").port(0).build(),
                dispatcher, WAIT);
    }
}
