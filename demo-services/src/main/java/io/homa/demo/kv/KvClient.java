package io.homa.demo.kv;

import io.homa.spring.HomaMethod;
import io.homa.spring.client.HomaExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Declarative client of {@link KvService} (service {@value KvService#SERVICE}). The starter
 * implements it and registers it as a bean that calls the peer configured for
 * {@value KvService#SERVICE} ({@code homa.client.peers.kv}); {@link KvShardClients} makes one per
 * shard ({@code kv-0}, {@code kv-1}, ...). Every method is idempotent, so a retry policy may
 * repeat it.
 */
@HomaExchange(service = KvService.SERVICE)
public interface KvClient {

    /**
     * The value of {@code key}; fails with a {@link io.homa.reactive.HomaRemoteException} with
     * status {@code NOT_FOUND} (remote type {@link KeyNotFoundException}) if there is none.
     */
    @HomaMethod(idempotent = true)
    Mono<String> get(String key);

    /** Sets the value of {@code key}. */
    @HomaMethod(idempotent = true)
    Mono<Void> put(String key, String value);

    /** Up to {@code limit} records from {@code fromKey} on, in key order, streamed as demanded. */
    @HomaMethod(idempotent = true)
    Flux<KvRecord> scan(String fromKey, int limit);

    /** Keys under {@code prefix} and the length of their values. */
    @HomaMethod(idempotent = true)
    Mono<KvStats> stats(String prefix);
}
