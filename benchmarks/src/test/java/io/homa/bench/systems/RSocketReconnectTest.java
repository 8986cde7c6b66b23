package io.homa.bench.systems;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rsocket.RSocket;
import io.rsocket.core.RSocketServer;
import io.rsocket.transport.netty.server.CloseableChannel;
import io.rsocket.transport.netty.server.TcpServerTransport;
import io.rsocket.util.DefaultPayload;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/** The RSocket baseline's client replaces a connection that closed instead of failing every later call. */
class RSocketReconnectTest {
    @Test
    void shouldAnswerAgainAfterTheServerClosedItsConnection() throws Exception {
        SystemSettings settings = SystemSettings.defaults();
        List<RSocket> accepted = new CopyOnWriteArrayList<>();
        RSocket echo = new RSocket() {
            @Override
            public Mono<io.rsocket.Payload> requestResponse(io.rsocket.Payload payload) {
                return Mono.just(DefaultPayload.create(EchoProtocol.respond(RSocketSystem.bytes(payload))));
            }
        };
        CloseableChannel server = RSocketServer.create((setup, sendingSocket) -> {
                    accepted.add(sendingSocket);
                    return Mono.just(echo);
                })
                .bind(TcpServerTransport.create(settings.bindHost(), 0))
                .block(Duration.ofSeconds(10));
        try (EchoClient client = RSocketSystem.connect(List.of(settings.bindSocket(server.address().getPort())))) {
            assertThat(client.call(0, EchoProtocol.echoRequest(100)).get(10, TimeUnit.SECONDS)).hasSize(100);
            assertThat(accepted).hasSize(1);
            accepted.get(0).dispose(); // the server closes the connection
            accepted.get(0).onClose().block(Duration.ofSeconds(10));

            AtomicInteger failed = new AtomicInteger();
            // The client may learn of the close only from a call that fails on it.
            byte[] response = await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> {
                try {
                    return client.call(0, EchoProtocol.echoRequest(100)).get(10, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    failed.incrementAndGet();
                    return null;
                }
            }, Objects::nonNull);
            assertThat(response).as("an answer after %d failed calls", failed.get()).hasSize(100);
            assertThat(client.call(0, EchoProtocol.request(100, 10_000)).get(10, TimeUnit.SECONDS)).hasSize(10_000);
            assertThat(accepted).as("a second connection").hasSize(2);
            assertThat(failed.get()).as("calls failed before the client reconnected").isLessThanOrEqualTo(1);
        } finally {
            server.dispose();
        }
    }
}
