package io.homa.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.reactive.HomaRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

class HomaRequestGateTests {

    private final AtomicInteger handled = new AtomicInteger();

    private final HomaRequestGate gate = new HomaRequestGate((request) -> {
        this.handled.incrementAndGet();
        return Mono.just(Unpooled.copiedBuffer("re:" + request.rpcId(), StandardCharsets.UTF_8));
    });

    private final HomaRequest request = new HomaRequest(new InetSocketAddress("127.0.0.1", 5000), 42,
            Unpooled.EMPTY_BUFFER);

    @Test
    void shouldHoldRequestsUntilStarted() {
        AtomicReference<ByteBuf> response = new AtomicReference<>();
        this.gate.handle(this.request).subscribe(response::set);
        assertThat(this.handled).hasValue(0);
        assertThat(response).hasValue(null);
        assertThat(this.gate.isRunning()).isFalse();

        this.gate.start();

        assertThat(this.handled).hasValue(1);
        assertThat(response.get().toString(StandardCharsets.UTF_8)).isEqualTo("re:42");
    }

    @Test
    void shouldDispatchDirectlyOnceStartedAndStayOpenAfterStop() {
        this.gate.start();
        this.gate.stop();
        assertThat(this.gate.isRunning()).isFalse();
        ByteBuf response = this.gate.handle(this.request).block(Duration.ofSeconds(1));
        assertThat(response.toString(StandardCharsets.UTF_8)).isEqualTo("re:42");
        assertThat(this.handled).hasValue(1);
    }
}
