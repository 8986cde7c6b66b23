package io.homa.spring.observability;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeoutException;

/** The status a failed call is reported with. */
final class HomaCallStatuses {

    private HomaCallStatuses() {}

    /**
     * A {@link HomaException}'s status; {@code DEADLINE_EXCEEDED} for a {@link TimeoutException},
     * {@code CANCELLED} for a {@link CancellationException}, else {@code UNKNOWN}.
     */
    static HomaStatus of(Throwable error) {
        if (error instanceof HomaException homa) {
            return homa.status();
        }
        if (error instanceof TimeoutException) {
            return HomaStatus.DEADLINE_EXCEEDED;
        }
        if (error instanceof CancellationException) {
            return HomaStatus.CANCELLED;
        }
        return HomaStatus.UNKNOWN;
    }

    /** Server side: an error signal of the chain is answered as a method's error would be. */
    static HomaStatus ofServerError(Throwable error) {
        return error instanceof HomaException homa ? homa.status() : HomaStatus.INTERNAL;
    }
}
