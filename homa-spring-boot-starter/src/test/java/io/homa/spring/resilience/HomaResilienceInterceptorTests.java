package io.homa.spring.resilience;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.RateLimiterRegistry;
import io.github.resilience4j.ratelimiter.RequestNotPermitted;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.retry.RetryRegistry;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.CallOptions;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.RpcMethod;
import io.homa.spring.observability.LoopbackRpc;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** {@link HomaResilienceInterceptor} around real calls over loopback UDP. */
class HomaResilienceInterceptorTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private static final Object[] ARGS = { "x" };

    private final AtomicInteger failInvocations = new AtomicInteger();

    private final AtomicInteger rejectInvocations = new AtomicInteger();

    private final AtomicInteger echoInvocations = new AtomicInteger();

    private final AtomicInteger scanInvocations = new AtomicInteger();

    private final AtomicInteger transferInvocations = new AtomicInteger();

    /** Holds the blocking method "hold" until released. */
    private final java.util.concurrent.CountDownLatch releaseHold = new java.util.concurrent.CountDownLatch(1);

    private LoopbackRpc rpc;

    @BeforeEach
    void startServer() {
        this.rpc = new LoopbackRpc();
        this.rpc.dispatcher()
                .register(RpcMethod.unary("flaky", "fail", new java.lang.reflect.Type[] { String.class }, (args) -> {
                    this.failInvocations.incrementAndGet();
                    return Mono.error(new IllegalStateException("boom"));
                }))
                .register(RpcMethod.unary("flaky", "reject", new java.lang.reflect.Type[] { String.class }, (args) -> {
                    this.rejectInvocations.incrementAndGet();
                    return Mono.error(new HomaException(HomaStatus.INVALID_ARGUMENT, "bad key"));
                }))
                .register(RpcMethod.stream("flaky", "scan", new java.lang.reflect.Type[] { String.class }, (args) -> {
                    this.scanInvocations.incrementAndGet();
                    return Flux.just("a", "b").concatWith(Flux.error(new IllegalStateException("disk gone")));
                }))
                .register(RpcMethod.unary("flaky", "hold", new java.lang.reflect.Type[] { String.class },
                        (args) -> Mono.fromCallable(() -> {
                            this.releaseHold.await(WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
                            return "held";
                        })).withBlocking(true))
                .register(RpcMethod.unary("flaky", "transfer", new java.lang.reflect.Type[] { String.class }, (args) -> {
                    this.transferInvocations.incrementAndGet();
                    return Mono.just("moved " + args[0]);
                }))
                .register(RpcMethod.unary("flaky", "echo", new java.lang.reflect.Type[] { String.class }, (args) -> {
                    this.echoInvocations.incrementAndGet();
                    return Mono.just(args[0]).delayElement(Duration.ofMillis(300));
                }));
    }

    @AfterEach
    void stopServer() {
        this.rpc.close();
    }

    @Test
    void shouldOpenCircuitBreakerOfServiceAfterFailuresAndThenFailFast() {
        CircuitBreakerRegistry circuitBreakers = CircuitBreakerRegistry.of(CircuitBreakerConfig.custom()
                .slidingWindowSize(4).minimumNumberOfCalls(4).failureRateThreshold(50)
                .waitDurationInOpenState(Duration.ofMinutes(1)).build());
        HomaClient client = client(new HomaResilienceInterceptor(circuitBreakers, null, null, null, properties()));

        for (int i = 0; i < 4; i++) {
            assertThatThrownBy(() -> call(client, "fail", CallOptions.defaults()))
                    .isInstanceOfSatisfying(HomaRemoteException.class,
                            (error) -> assertThat(error.status()).isEqualTo(HomaStatus.INTERNAL));
        }
        assertThat(circuitBreakers.circuitBreaker("flaky").getState()).isEqualTo(CircuitBreaker.State.OPEN);

        assertThatThrownBy(() -> call(client, "fail", CallOptions.defaults()))
                .isInstanceOfSatisfying(HomaException.class,
                        (error) -> assertThat(error.status()).isEqualTo(HomaStatus.UNAVAILABLE))
                .hasCauseInstanceOf(CallNotPermittedException.class);
        assertThatThrownBy(() -> call(client, "echo", CallOptions.defaults()))
                .hasCauseInstanceOf(CallNotPermittedException.class);
        assertThat(this.failInvocations).hasValue(4);
        assertThat(this.echoInvocations).hasValue(0);
    }

    @Test
    void shouldCountErrorsOfAHealthyServiceAsSuccesses() {
        CircuitBreakerRegistry circuitBreakers = CircuitBreakerRegistry.of(CircuitBreakerConfig.custom()
                .slidingWindowSize(4).minimumNumberOfCalls(4).failureRateThreshold(50).build());
        HomaClient client = client(new HomaResilienceInterceptor(circuitBreakers, null, null, null, properties()));

        for (int i = 0; i < 6; i++) {
            assertThatThrownBy(() -> call(client, "reject", CallOptions.defaults()))
                    .isInstanceOfSatisfying(HomaRemoteException.class,
                            (error) -> assertThat(error.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT));
        }
        CircuitBreaker circuitBreaker = circuitBreakers.circuitBreaker("flaky");
        assertThat(circuitBreaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
        assertThat(circuitBreaker.getMetrics().getNumberOfFailedCalls()).isZero();
        assertThat(circuitBreaker.getMetrics().getNumberOfSuccessfulCalls()).isEqualTo(4);
        assertThat(this.rejectInvocations).hasValue(6);
    }

    @Test
    void shouldRetryOnlyIdempotentCalls() {
        RetryRegistry retries = RetryRegistry.of(RetryConfig.custom().maxAttempts(3)
                .waitDuration(Duration.ofMillis(10)).build());
        HomaClient client = client(new HomaResilienceInterceptor(null, null, null, retries, properties()));

        assertThatThrownBy(() -> call(client, "fail", CallOptions.defaults().withIdempotent(true)))
                .isInstanceOfSatisfying(HomaRemoteException.class,
                        (error) -> assertThat(error.status()).isEqualTo(HomaStatus.INTERNAL));
        assertThat(this.failInvocations).hasValue(3);

        this.failInvocations.set(0);
        assertThatThrownBy(() -> call(client, "fail", CallOptions.defaults()))
                .isInstanceOf(HomaRemoteException.class);
        assertThat(this.failInvocations).hasValue(1);
    }

    @Test
    void shouldRetryACallThatIsNotIdempotentWhenTheServerRefusedItOverloaded() {
        RetryRegistry retries = RetryRegistry.of(RetryConfig.custom().maxAttempts(50)
                .waitDuration(Duration.ofMillis(20)).build());
        // The server has room again once it has refused the first attempt.
        retries.retry(properties().getRetry().getInstance()).getEventPublisher()
                .onRetry((event) -> this.releaseHold.countDown());
        HomaClient client = client(new HomaResilienceInterceptor(null, null, null, retries, properties()));
        this.rpc.dispatcher().maxCallsInService(1);
        Mono<String> held = callLater(client, "hold").cache();
        held.subscribe((value) -> { }, (error) -> { });
        org.awaitility.Awaitility.await().atMost(WAIT).until(() -> this.rpc.dispatcher().callsInService() == 1);

        assertThat(call(client, "transfer", CallOptions.defaults())).isEqualTo("moved x");

        assertThat(this.transferInvocations).as("ran once, after its refusals").hasValue(1);
        assertThat(this.rpc.server().refusedOverloadedRequests()).isPositive();
        assertThat(retries.retry(properties().getRetry().getInstance()).getMetrics()
                .getNumberOfSuccessfulCallsWithRetryAttempt()).isEqualTo(1);
        assertThat(held.block(WAIT)).isEqualTo("held");
    }

    @Test
    void shouldCountAnOverloadRefusalAsAFailureOfTheService() {
        CircuitBreakerRegistry circuitBreakers = CircuitBreakerRegistry.ofDefaults();
        HomaClient client = client(new HomaResilienceInterceptor(circuitBreakers, null, null, null, properties()));
        this.rpc.dispatcher().maxCallsInService(1);
        Mono<String> held = callLater(client, "hold").cache();
        held.subscribe((value) -> { }, (error) -> { });
        org.awaitility.Awaitility.await().atMost(WAIT).until(() -> this.rpc.dispatcher().callsInService() == 1);

        assertThatThrownBy(() -> call(client, "transfer", CallOptions.defaults()))
                .isInstanceOfSatisfying(HomaException.class, (error) -> {
                    assertThat(error.status()).isEqualTo(HomaStatus.UNAVAILABLE);
                    assertThat(error.refusal()).isEqualTo(HomaException.Refusal.OVERLOADED);
                })
                .hasMessageContaining("server overloaded: not executed");
        assertThat(this.transferInvocations).hasValue(0);
        this.releaseHold.countDown();
        assertThat(held.block(WAIT)).isEqualTo("held");
        CircuitBreaker circuitBreaker = circuitBreakers.circuitBreaker("flaky");
        assertThat(circuitBreaker.getMetrics().getNumberOfFailedCalls()).isEqualTo(1);
        assertThat(circuitBreaker.getMetrics().getNumberOfSuccessfulCalls()).as("the held call").isEqualTo(1);
    }

    @Test
    void shouldNotRetryErrorsOfAHealthyService() {
        RetryRegistry retries = RetryRegistry.of(RetryConfig.custom().maxAttempts(3)
                .waitDuration(Duration.ofMillis(10)).build());
        HomaClient client = client(new HomaResilienceInterceptor(null, null, null, retries, properties()));

        assertThatThrownBy(() -> call(client, "reject", CallOptions.defaults().withIdempotent(true)))
                .isInstanceOf(HomaRemoteException.class);
        assertThat(this.rejectInvocations).hasValue(1);
    }

    @Test
    void shouldGuardStreamsWithTheCircuitBreakerButNeverRetryThem() {
        CircuitBreakerRegistry circuitBreakers = CircuitBreakerRegistry.ofDefaults();
        RetryRegistry retries = RetryRegistry.of(RetryConfig.custom().maxAttempts(3)
                .waitDuration(Duration.ofMillis(10)).build());
        HomaClient client = client(new HomaResilienceInterceptor(circuitBreakers, null, null, retries, properties()));
        List<String> items = new java.util.concurrent.CopyOnWriteArrayList<>();

        assertThatThrownBy(() -> client.<String>stream("flaky", "scan", ARGS, String.class,
                CallOptions.defaults().withIdempotent(true)).doOnNext(items::add).blockLast(WAIT))
                .isInstanceOfSatisfying(HomaRemoteException.class,
                        (error) -> assertThat(error.status()).isEqualTo(HomaStatus.INTERNAL));
        assertThat(items).containsExactly("a", "b");
        assertThat(this.scanInvocations).hasValue(1);
        assertThat(circuitBreakers.circuitBreaker("flaky").getMetrics().getNumberOfFailedCalls()).isEqualTo(1);
    }

    @Test
    void shouldApplyClientBulkheadOnlyWhenItsInstanceIsConfigured() {
        BulkheadRegistry bulkheads = BulkheadRegistry.of(BulkheadConfig.custom().maxConcurrentCalls(1)
                .maxWaitDuration(Duration.ZERO).build());
        HomaClient unguarded = client(new HomaResilienceInterceptor(null, bulkheads, null, null, properties()));
        assertThat(Mono.zip(callLater(unguarded), callLater(unguarded)).block(WAIT)).isNotNull();

        bulkheads.bulkhead(HomaResilienceProperties.DEFAULT_INSTANCE);
        HomaClient guarded = client(new HomaResilienceInterceptor(null, bulkheads, null, null, properties()));
        assertThatThrownBy(() -> Mono.zip(callLater(guarded), callLater(guarded)).block(WAIT))
                .isInstanceOfSatisfying(HomaException.class,
                        (error) -> assertThat(error.status()).isEqualTo(HomaStatus.RESOURCE_EXHAUSTED))
                .hasCauseInstanceOf(BulkheadFullException.class);
    }

    @Test
    void shouldApplyClientRateLimiterOnlyWhenItsInstanceIsConfigured() {
        RateLimiterRegistry rateLimiters = RateLimiterRegistry.of(RateLimiterConfig.custom().limitForPeriod(1)
                .limitRefreshPeriod(Duration.ofMinutes(1)).timeoutDuration(Duration.ZERO).build());
        HomaResilienceProperties properties = properties();
        properties.getRateLimiter().setInstance("echo-limit");
        HomaClient client = client(new HomaResilienceInterceptor(null, null, rateLimiters, null, properties));
        assertThat(call(client, "echo", CallOptions.defaults())).isEqualTo("x");
        assertThat(call(client, "echo", CallOptions.defaults())).isEqualTo("x");

        rateLimiters.rateLimiter("echo-limit");
        assertThat(call(client, "echo", CallOptions.defaults())).isEqualTo("x");
        assertThatThrownBy(() -> call(client, "echo", CallOptions.defaults()))
                .isInstanceOfSatisfying(HomaException.class,
                        (error) -> assertThat(error.status()).isEqualTo(HomaStatus.RESOURCE_EXHAUSTED))
                .hasCauseInstanceOf(RequestNotPermitted.class);
        assertThat(this.echoInvocations).hasValue(3);
    }

    @Test
    void shouldSwitchOffPartsByProperty() {
        CircuitBreakerRegistry circuitBreakers = CircuitBreakerRegistry.of(CircuitBreakerConfig.custom()
                .slidingWindowSize(2).minimumNumberOfCalls(2).waitDurationInOpenState(Duration.ofMinutes(1)).build());
        RetryRegistry retries = RetryRegistry.of(RetryConfig.custom().maxAttempts(3)
                .waitDuration(Duration.ofMillis(10)).build());
        HomaResilienceProperties properties = properties();
        properties.getCircuitBreaker().setEnabled(false);
        properties.getRetry().setEnabled(false);
        HomaClient client = client(new HomaResilienceInterceptor(circuitBreakers, null, null, retries, properties));
        for (int i = 0; i < 3; i++) {
            assertThatThrownBy(() -> call(client, "fail", CallOptions.defaults().withIdempotent(true)))
                    .isInstanceOf(HomaRemoteException.class);
        }
        assertThat(this.failInvocations).hasValue(3);
        assertThat(circuitBreakers.getAllCircuitBreakers()).isEmpty();
    }

    private HomaClient client(HomaResilienceInterceptor interceptor) {
        return this.rpc.client(List.of(interceptor), "flaky");
    }

    private static HomaResilienceProperties properties() {
        return new HomaResilienceProperties();
    }

    private static String call(HomaClient client, String method, CallOptions options) {
        return client.<String>call("flaky", method, ARGS, String.class, options).block(WAIT);
    }

    private static Mono<String> callLater(HomaClient client, String method) {
        return client.call("flaky", method, ARGS, String.class, CallOptions.defaults());
    }

    private static Mono<String> callLater(HomaClient client) {
        return client.call("flaky", "echo", ARGS, String.class, CallOptions.defaults());
    }
}
