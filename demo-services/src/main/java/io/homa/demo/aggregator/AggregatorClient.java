package io.homa.demo.aggregator;

import io.homa.demo.kv.KvRecord;
import io.homa.spring.HomaMethod;
import io.homa.spring.client.HomaExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Declarative client of {@link AggregatorService} (service {@value AggregatorService#SERVICE}),
 * implemented and registered as a bean by the starter.
 */
@HomaExchange(service = AggregatorService.SERVICE)
public interface AggregatorClient {

    /** Sets the value of {@code key} on its shard. */
    @HomaMethod(idempotent = true)
    Mono<Void> put(String key, String value);

    /**
     * The value of {@code key}; fails with a {@link io.homa.reactive.HomaRemoteException} with
     * status {@code NOT_FOUND} if there is none.
     */
    @HomaMethod(idempotent = true)
    Mono<String> get(String key);

    /** Up to {@code limit} records from {@code fromKey} on, in key order, merged from all shards. */
    @HomaMethod(idempotent = true)
    Flux<KvRecord> scan(String fromKey, int limit);

    /** Keys under {@code prefix}, and their values' length, summed over all shards. */
    @HomaMethod(idempotent = true)
    Mono<AggregateStats> stats(String prefix);
}
