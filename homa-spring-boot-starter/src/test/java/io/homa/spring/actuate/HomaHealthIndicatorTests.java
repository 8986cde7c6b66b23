package io.homa.spring.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.homa.reactive.HomaTransport;
import io.homa.spring.observability.LoopbackRpc;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/** {@link HomaHealthIndicator} against a real transport. */
class HomaHealthIndicatorTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void shouldBeUpWhileBoundAndDownAfterDispose() {
        HomaTransport transport = HomaTransport.bindNow(
                LoopbackRpc.config(), null, WAIT);
        HomaHealthIndicator indicator = new HomaHealthIndicator(transport, Duration.ofSeconds(2));
        try {
            Health up = indicator.health().block(WAIT);
            assertThat(up.getStatus()).isEqualTo(Status.UP);
            assertThat(up.getDetails()).containsEntry("address", transport.localAddress().toString())
                    .containsEntry("engineLoop", "alive").containsKeys("rpcsStarted", "requestsDelivered");
        }
        finally {
            transport.disposeNow();
        }
        Health down = indicator.health().block(WAIT);
        assertThat(down.getStatus()).isEqualTo(Status.DOWN);
        assertThat(down.getDetails()).containsEntry("address", transport.localAddress().toString())
                .containsKey("error");
    }

    @Test
    void shouldRejectNonPositiveTimeout() {
        HomaTransport transport = HomaTransport.bindNow(
                LoopbackRpc.config(), null, WAIT);
        try {
            assertThatIllegalArgumentException().isThrownBy(() -> new HomaHealthIndicator(transport, Duration.ZERO))
                    .withMessageContaining("timeout");
        }
        finally {
            transport.disposeNow();
        }
    }
}
