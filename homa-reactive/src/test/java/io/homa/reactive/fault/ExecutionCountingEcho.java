package io.homa.reactive.fault;

import io.homa.reactive.HomaRequest;
import io.homa.reactive.HomaRequestHandler;
import io.netty.buffer.ByteBuf;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;

/**
 * An echo handler that counts how often it runs for each (client, rpcId): at-most-once means
 * every count stays at 1, however many packets the network drops, duplicates or delays.
 */
final class ExecutionCountingEcho implements HomaRequestHandler {
    /** One RPC as the server knows it. */
    record RpcKey(InetSocketAddress client, long rpcId) {}

    private final Map<RpcKey, AtomicInteger> executions = new ConcurrentHashMap<>();

    @Override
    public Mono<ByteBuf> handle(HomaRequest request) {
        executions.computeIfAbsent(new RpcKey(request.client(), request.rpcId()), k -> new AtomicInteger())
                .incrementAndGet();
        return Mono.just(request.payload().retain());
    }

    /** Forgets every execution so far. */
    void reset() {
        executions.clear();
    }

    /** Distinct (client, rpcId) pairs executed. */
    int distinctRpcs() {
        return executions.size();
    }

    /** Executions in all. */
    long executions() {
        return executions.values().stream().mapToLong(AtomicInteger::get).sum();
    }

    /** The RPCs executed more than once, with their counts (empty when at-most-once held). */
    Map<RpcKey, Integer> executedMoreThanOnce() {
        Map<RpcKey, Integer> repeated = new ConcurrentHashMap<>();
        executions.forEach((key, count) -> {
            if (count.get() > 1) {
                repeated.put(key, count.get());
            }
        });
        return repeated;
    }

    /** Distinct clients seen. */
    long distinctClients() {
        return executions.keySet().stream().map(RpcKey::client).distinct().count();
    }
}
