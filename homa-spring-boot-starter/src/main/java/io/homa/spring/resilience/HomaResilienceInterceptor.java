package io.homa.spring.resilience;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterRegistry;
import io.github.resilience4j.ratelimiter.RequestNotPermitted;
import io.github.resilience4j.reactor.bulkhead.operator.BulkheadOperator;
import io.github.resilience4j.reactor.circuitbreaker.operator.CircuitBreakerOperator;
import io.github.resilience4j.reactor.ratelimiter.operator.RateLimiterOperator;
import io.github.resilience4j.reactor.retry.RetryOperator;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryRegistry;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.CallOptions;
import io.homa.reactive.rpc.HomaClientInterceptor;
import io.homa.reactive.rpc.RpcCall;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.core.Ordered;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SynchronousSink;

/**
 * Guards {@link io.homa.reactive.rpc.HomaClient} calls with Resilience4j, using its Reactor
 * operators. From the outside in:
 * <ol>
 *   <li><b>Retry</b> ({@link RetryOperator}), instance {@code homa.client.resilience.retry.instance}
 *       (default {@code homa-client}; Resilience4j's default config, 3 attempts 500 ms apart, if
 *       not configured), for unary calls: a unary call whose {@link CallOptions#idempotent()} is
 *       set ({@code @HomaMethod(idempotent = true)}, per-method idempotent in yml) after any
 *       service failure, and <em>every</em> unary call after a refusal the server made without
 *       executing it ({@link HomaException#notExecuted()}: UNAVAILABLE "server overloaded: not
 *       executed", or "server is shutting down"), with the retry's backoff. Homa executes each
 *       request at most once; a retry is a new request, so retrying a call that is not
 *       idempotent after any other failure could execute it twice (e.g. a timeout after the
 *       server applied a {@code put} or a transfer): such calls are not retried then, and streams
 *       never are.
 *       Each retry re-resolves the service, so it may go to another instance, and gets the
 *       call's full deadline ({@code HomaClient} applies it per attempt): a call may take up to
 *       attempts &times; timeout plus the waits.</li>
 *   <li><b>Rate limiter</b> ({@link RateLimiterOperator}), instance
 *       {@code homa.client.resilience.rate-limiter.instance}, and</li>
 *   <li><b>bulkhead</b> ({@link BulkheadOperator}), instance
 *       {@code homa.client.resilience.bulkhead.instance}: per client, applied only when that
 *       instance exists in its registry (configured under
 *       {@code resilience4j.ratelimiter.instances.<name>} / {@code resilience4j.bulkhead.instances.<name>}
 *       or created by the application), since Resilience4j's defaults (e.g. 25 concurrent calls)
 *       would throttle every client that did not ask for it.</li>
 *   <li><b>Circuit breaker</b> ({@link CircuitBreakerOperator}), one per target service, named
 *       after the service ({@code resilience4j.circuitbreaker.instances.<service>}, else the
 *       default config). Only {@link HomaServiceFailures#isServiceFailure service failures}
 *       (UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL, timeouts) count as failures; other errors
 *       (INVALID_ARGUMENT, NOT_FOUND, ...) are answers of a healthy service and count as
 *       successes.</li>
 * </ol>
 * Only service failures are retried (a refusal unexecuted is one: UNAVAILABLE).
 *
 * <p>Rejections reach the caller as {@link HomaException}s, so callers handle one exception type
 * by status, with Resilience4j's exception as the cause: an open circuit breaker
 * ({@link CallNotPermittedException}) gives {@link HomaStatus#UNAVAILABLE} and the call fails fast
 * without a request being sent; a full bulkhead ({@link BulkheadFullException}) and an exhausted
 * rate limiter ({@link RequestNotPermitted}) give {@link HomaStatus#RESOURCE_EXHAUSTED}.
 */
public class HomaResilienceInterceptor implements HomaClientInterceptor, Ordered {

    /**
     * Order among the client's interceptors: inside observation, metrics and logging (so they see
     * one call with its final outcome), outside plain interceptors (order 0 to
     * {@link Ordered#LOWEST_PRECEDENCE}).
     */
    public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 1000;

    private final @Nullable CircuitBreakerRegistry circuitBreakers;

    private final @Nullable BulkheadRegistry bulkheads;

    private final @Nullable RateLimiterRegistry rateLimiters;

    private final @Nullable RetryRegistry retries;

    private final HomaResilienceProperties properties;

    private final Predicate<Throwable> serviceFailure;

    /**
     * @param circuitBreakers per-service circuit breakers, or {@code null} for none
     * @param bulkheads the bulkhead registry, or {@code null} for none
     * @param rateLimiters the rate limiter registry, or {@code null} for none
     * @param retries the retry registry, or {@code null} for none
     * @param properties instance names and switches
     */
    public HomaResilienceInterceptor(@Nullable CircuitBreakerRegistry circuitBreakers,
            @Nullable BulkheadRegistry bulkheads, @Nullable RateLimiterRegistry rateLimiters,
            @Nullable RetryRegistry retries, HomaResilienceProperties properties) {
        this(circuitBreakers, bulkheads, rateLimiters, retries, properties, HomaServiceFailures::isServiceFailure);
    }

    /**
     * @param serviceFailure which errors count for circuit breakers and are retried (default
     *     {@link HomaServiceFailures#isServiceFailure})
     */
    public HomaResilienceInterceptor(@Nullable CircuitBreakerRegistry circuitBreakers,
            @Nullable BulkheadRegistry bulkheads, @Nullable RateLimiterRegistry rateLimiters,
            @Nullable RetryRegistry retries, HomaResilienceProperties properties,
            Predicate<Throwable> serviceFailure) {
        this.circuitBreakers = circuitBreakers;
        this.bulkheads = bulkheads;
        this.rateLimiters = rateLimiters;
        this.retries = retries;
        this.properties = Objects.requireNonNull(properties, "properties must not be null");
        this.serviceFailure = Objects.requireNonNull(serviceFailure, "serviceFailure must not be null");
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    @Override
    public <T> Mono<T> interceptUnary(RpcCall call, Mono<T> next) {
        Mono<Object> guarded = shield(next.map(Object.class::cast));
        for (UnaryOperator<Publisher<Object>> guard : guards(call)) {
            guarded = guarded.transform(guard);
        }
        Retry retry = retry();
        if (retry != null) {
            // A call the server refused unexecuted (overloaded, shutting down) did not run: sending
            // it again cannot run it twice, whatever the method. Anything else may have run, so
            // only an idempotent call is sent again after it.
            Predicate<Throwable> retried = call.options().idempotent() ? this.serviceFailure
                    : HomaResilienceInterceptor::notExecuted;
            guarded = shield(guarded, retried).transform(RetryOperator.of(retry));
        }
        return guarded.<T>handle(HomaResilienceInterceptor::unshield).onErrorMap(this::translate);
    }

    @Override
    public <T> Flux<T> interceptStream(RpcCall call, Flux<T> next) {
        Flux<Object> guarded = next.map(Object.class::cast)
                .onErrorResume(error -> !this.serviceFailure.test(error), error -> Flux.just(new Passed(error)));
        for (UnaryOperator<Publisher<Object>> guard : guards(call)) {
            guarded = guarded.transform(guard);
        }
        return guarded.<T>handle(HomaResilienceInterceptor::unshield).onErrorMap(this::translate);
    }

    /** The call's circuit breaker, then the client's bulkhead and rate limiter, those that apply. */
    private List<UnaryOperator<Publisher<Object>>> guards(RpcCall call) {
        List<UnaryOperator<Publisher<Object>>> guards = new ArrayList<>(3);
        CircuitBreaker circuitBreaker = circuitBreaker(call);
        if (circuitBreaker != null) {
            guards.add(CircuitBreakerOperator.of(circuitBreaker));
        }
        Bulkhead bulkhead = bulkhead();
        if (bulkhead != null) {
            guards.add(BulkheadOperator.of(bulkhead));
        }
        RateLimiter rateLimiter = rateLimiter();
        if (rateLimiter != null) {
            guards.add(RateLimiterOperator.of(rateLimiter));
        }
        return guards;
    }

    private @Nullable CircuitBreaker circuitBreaker(RpcCall call) {
        if (this.circuitBreakers == null || !this.properties.getCircuitBreaker().isEnabled()) {
            return null;
        }
        return this.circuitBreakers.circuitBreaker(call.service());
    }

    private @Nullable Bulkhead bulkhead() {
        HomaResilienceProperties.Bulkhead settings = this.properties.getBulkhead();
        if (this.bulkheads == null || !settings.isEnabled()) {
            return null;
        }
        return this.bulkheads.find(settings.getInstance()).orElse(null);
    }

    private @Nullable RateLimiter rateLimiter() {
        HomaResilienceProperties.RateLimiter settings = this.properties.getRateLimiter();
        if (this.rateLimiters == null || !settings.isEnabled()) {
            return null;
        }
        return this.rateLimiters.find(settings.getInstance()).orElse(null);
    }

    private @Nullable Retry retry() {
        HomaResilienceProperties.Retry settings = this.properties.getRetry();
        if (this.retries == null || !settings.isEnabled()) {
            return null;
        }
        return this.retries.retry(settings.getInstance());
    }

    /** Errors that do not count travel as values through the Resilience4j operators. */
    private Mono<Object> shield(Mono<Object> source) {
        return shield(source, this.serviceFailure);
    }

    /** Errors that {@code counts} rejects travel as values through the Resilience4j operators. */
    private static Mono<Object> shield(Mono<Object> source, Predicate<Throwable> counts) {
        return source.onErrorResume(error -> !counts.test(error), error -> Mono.just(new Passed(error)));
    }

    /**
     * Whether the server refused the call without executing it ({@link HomaException#notExecuted()}:
     * overloaded or shutting down), so that a retry cannot execute it twice. Such a refusal is
     * UNAVAILABLE, a service failure, so the circuit breaker counts it too.
     */
    static boolean notExecuted(Throwable error) {
        return error instanceof HomaException homa && homa.notExecuted();
    }

    @SuppressWarnings("unchecked")
    private static <T> void unshield(Object value, SynchronousSink<T> sink) {
        if (value instanceof Passed passed) {
            sink.error(passed.error());
        }
        else {
            sink.next((T) value);
        }
    }

    private Throwable translate(Throwable error) {
        if (error instanceof CallNotPermittedException rejected) {
            return new HomaException(HomaStatus.UNAVAILABLE, rejected.getMessage(), rejected);
        }
        if (error instanceof BulkheadFullException full) {
            return new HomaException(HomaStatus.RESOURCE_EXHAUSTED, full.getMessage(), full);
        }
        if (error instanceof RequestNotPermitted rejected) {
            return new HomaException(HomaStatus.RESOURCE_EXHAUSTED, rejected.getMessage(), rejected);
        }
        return error;
    }

    /** An error that neither counts for a circuit breaker nor is retried, carried as a value. */
    private record Passed(Throwable error) {}
}
