package io.homa.bench.systems;

import io.homa.reactive.HomaTransport;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.JsonPayloadCodec;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.RpcMethod;
import io.homa.reactive.rpc.StaticServiceResolver;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Homa's RPC layer with the JSON codec: service {@code bench}, method {@code echo}, a
 * {@code byte[]} argument and result (which the codec carries raw, one tag byte before the
 * bytes, not as base64 JSON; the engine's message limit is raised to {@value #MAX_MESSAGE_BYTES}
 * bytes so that the envelope around a 1 MiB payload fits).
 */
final class HomaRpcSystem {
    static final String SERVICE = "bench";
    static final String METHOD = "echo";
    static final int MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

    private HomaRpcSystem() {}

    static EchoServer startServer(SystemSettings settings) {
        RpcDispatcher dispatcher = new RpcDispatcher(new JsonPayloadCodec(), Schedulers.boundedElastic())
                .maxResponseBytes(MAX_MESSAGE_BYTES)
                .register(new RpcMethod(SERVICE, METHOD, byte[].class,
                        argument -> Mono.just(EchoProtocol.respond((byte[]) argument))));
        HomaTransport transport = HomaTransport.bindNow(
                HomaMessageSystem.config(settings, MAX_MESSAGE_BYTES), dispatcher, HomaMessageSystem.BIND_TIMEOUT);
        return HomaMessageSystem.server(transport, settings);
    }

    static EchoClient connect(List<InetSocketAddress> servers, SystemSettings settings) {
        HomaTransport transport = HomaTransport.bindNow(
                HomaMessageSystem.config(settings, MAX_MESSAGE_BYTES), null, HomaMessageSystem.BIND_TIMEOUT);
        JsonPayloadCodec codec = new JsonPayloadCodec();
        HomaClient[] clients = servers.stream()
                .map(server -> new HomaClient(transport, new StaticServiceResolver(Map.of(SERVICE, server)), codec))
                .toArray(HomaClient[]::new);
        return new EchoClient() {
            @Override
            public CompletableFuture<byte[]> call(int target, byte[] request) {
                return clients[target].call(SERVICE, METHOD, request, byte[].class).toFuture();
            }

            @Override
            public Map<String, Long> counters() {
                return HomaMessageSystem.counters(transport);
            }

            @Override
            public int targets() {
                return clients.length;
            }

            @Override
            public void close() {
                HomaMessageSystem.close(transport, settings);
            }
        };
    }
}
