package io.homa.spring.resilience;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTimeoutException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.EnumSet;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** Which failures count against a service. */
class HomaServiceFailuresTests {

    @Test
    void shouldCountOnlyUnavailableDeadlineExceededInternalAndTimeouts() {
        EnumSet<HomaStatus> counted = EnumSet.noneOf(HomaStatus.class);
        for (HomaStatus status : HomaStatus.values()) {
            if (HomaServiceFailures.isServiceFailure(new HomaRemoteException(status, "x", null))) {
                counted.add(status);
            }
            assertThat(HomaServiceFailures.isServiceFailure(new HomaException(status, "x")))
                    .as(status.name()).isEqualTo(counted.contains(status));
        }
        assertThat(counted).containsExactlyInAnyOrder(HomaStatus.UNAVAILABLE, HomaStatus.DEADLINE_EXCEEDED,
                HomaStatus.INTERNAL);
        assertThat(HomaServiceFailures.isServiceFailure(
                new HomaTimeoutException(new InetSocketAddress("127.0.0.1", 4000), 2, "silent"))).isTrue();
        assertThat(HomaServiceFailures.isServiceFailure(new TimeoutException())).isTrue();
        assertThat(HomaServiceFailures.isServiceFailure(new IOException("reset"))).isTrue();
        assertThat(HomaServiceFailures.isServiceFailure(new IllegalArgumentException("caller bug"))).isFalse();
    }
}
