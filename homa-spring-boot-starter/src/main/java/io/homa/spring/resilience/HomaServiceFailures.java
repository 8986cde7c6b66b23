package io.homa.spring.resilience;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTimeoutException;
import java.io.IOException;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeoutException;

/**
 * Which call failures say that the target service is unhealthy. Only these count as failures for
 * a circuit breaker and only these are retried:
 * <ul>
 *   <li>{@link HomaException} with status {@link HomaStatus#UNAVAILABLE} (no peer, peer went
 *       silent: {@link HomaTimeoutException}, server shutting down, server overloaded),
 *       {@link HomaStatus#DEADLINE_EXCEEDED} or {@link HomaStatus#INTERNAL} (the handler failed
 *       unexpectedly), local or remote;</li>
 *   <li>{@link TimeoutException} (e.g. from Reactor's {@code timeout} operator) and
 *       {@link IOException}.</li>
 * </ul>
 * Everything else is an answer from a healthy service, or a problem of the caller, and neither
 * opens a circuit breaker nor is retried: {@code INVALID_ARGUMENT}, {@code NOT_FOUND},
 * {@code ALREADY_EXISTS}, {@code PERMISSION_DENIED}, {@code UNAUTHENTICATED},
 * {@code FAILED_PRECONDITION}, {@code ABORTED}, {@code OUT_OF_RANGE}, {@code UNIMPLEMENTED},
 * {@code RESOURCE_EXHAUSTED}, {@code CANCELLED}, {@code UNKNOWN}, {@code DATA_LOSS}, and
 * exceptions that are not {@code HomaException}s (codec and programming errors on the caller's
 * side). A circuit breaker records such a call as a success. Resilience4j's own
 * {@code record-exceptions}/{@code ignore-exceptions} and {@code retry-exceptions} then apply to
 * the failures that do count.
 */
public final class HomaServiceFailures {

    /** The statuses that count as a failure of the service. */
    public static final Set<HomaStatus> SERVICE_FAILURE_STATUSES =
            Set.copyOf(EnumSet.of(HomaStatus.UNAVAILABLE, HomaStatus.DEADLINE_EXCEEDED, HomaStatus.INTERNAL));

    private HomaServiceFailures() {}

    /**
     * Whether {@code error} counts as a failure of the target service.
     *
     * @param error a call's error signal
     * @return {@code true} for the failures listed in the class description
     */
    public static boolean isServiceFailure(Throwable error) {
        if (error instanceof HomaException homa) {
            return SERVICE_FAILURE_STATUSES.contains(homa.status());
        }
        return error instanceof TimeoutException || error instanceof IOException;
    }
}
