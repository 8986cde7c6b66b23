/**
 * Resilience4j for Homa clients: a {@link io.homa.reactive.rpc.HomaClientInterceptor} applying a
 * circuit breaker per target service, a bulkhead and a rate limiter per client, and retries for
 * idempotent calls only, configured under {@code resilience4j.*} as Resilience4j users know it.
 */
@NullMarked
package io.homa.spring.resilience;

import org.jspecify.annotations.NullMarked;
