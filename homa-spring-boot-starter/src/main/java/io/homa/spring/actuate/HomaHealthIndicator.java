package io.homa.spring.actuate;

import io.homa.engine.EngineCounters;
import io.homa.reactive.HomaTransport;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeoutException;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import reactor.core.publisher.Mono;

/**
 * Health of the Homa endpoint, contributed as {@code homa}: UP when the transport is bound and
 * its engine's event loop answers ({@link HomaTransport#counters()} within the timeout), with
 * details {@code address} (the bound address), {@code engineLoop} ({@code alive}) and a few
 * counters ({@code rpcsStarted}, {@code rpcsCompleted}, {@code requestsDelivered},
 * {@code timeouts}); DOWN when the transport is disposed or its loop does not answer in time,
 * with details {@code address} and {@code error}. Never blocks: the check runs on the event loop
 * and the answer is awaited asynchronously.
 */
public class HomaHealthIndicator implements ReactiveHealthIndicator {

    /** Default time the event loop has to answer. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(1);

    private final HomaTransport transport;

    private final Duration timeout;

    /**
     * @param transport the endpoint
     * @param timeout how long the event loop has to answer, positive
     * @throws IllegalArgumentException if {@code timeout} is not positive
     */
    public HomaHealthIndicator(HomaTransport transport, Duration timeout) {
        this.transport = Objects.requireNonNull(transport, "transport must not be null");
        Objects.requireNonNull(timeout, "timeout must not be null");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, was " + timeout);
        }
        this.timeout = timeout;
    }

    @Override
    public Mono<Health> health() {
        String address = String.valueOf(this.transport.localAddress());
        if (this.transport.isDisposed()) {
            return Mono.just(Health.down().withDetail("address", address)
                    .withDetail("error", "transport disposed").build());
        }
        return Mono.defer(this.transport::counters)
                .timeout(this.timeout)
                .map((counters) -> up(address, counters))
                .onErrorResume((error) -> Mono.just(Health.down()
                        .withDetail("address", address)
                        .withDetail("error", describe(error))
                        .build()));
    }

    private static Health up(String address, EngineCounters counters) {
        return Health.up()
                .withDetail("address", address)
                .withDetail("engineLoop", "alive")
                .withDetail("rpcsStarted", counters.rpcsStarted())
                .withDetail("rpcsCompleted", counters.rpcsCompleted())
                .withDetail("requestsDelivered", counters.requestsDelivered())
                .withDetail("timeouts", counters.timeouts())
                .build();
    }

    private String describe(Throwable error) {
        if (error instanceof TimeoutException) {
            return "engine loop did not answer within " + this.timeout.toMillis() + " ms";
        }
        return error.getClass().getName() + ": " + error.getMessage();
    }
}
