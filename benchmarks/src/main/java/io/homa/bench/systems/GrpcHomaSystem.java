package io.homa.bench.systems;

import io.grpc.ManagedChannel;
import io.homa.grpc.HomaGrpcRegistrar;
import io.homa.grpc.HomaManagedChannel;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.rpc.JsonPayloadCodec;
import io.homa.reactive.rpc.RpcDispatcher;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.Executor;
import reactor.core.scheduler.Schedulers;

/**
 * gRPC-java over Homa ({@code homa-grpc}): the {@code grpc} system's service and client
 * ({@link GrpcEcho}, {@link GrpcStreams}), unchanged, served by {@link HomaGrpcRegistrar} on an
 * {@link RpcDispatcher} and called through one {@link HomaManagedChannel} per server. Every
 * transport is configured as the {@code homa-rpc} system's ({@link HomaMessageSystem#config}: loops,
 * busy poll, MTU, link rate, security and priorities from {@link SystemSettings}), with its message
 * limit ({@value HomaRpcSystem#MAX_MESSAGE_BYTES} bytes), so the figures differ from
 * {@code homa-rpc}'s by the gRPC layer only, and from {@code grpc}'s by the transport only.
 *
 * <p>Listeners and handlers run where {@code grpc}'s do: on the transport's event loop with
 * {@link SystemSettings#grpcDirectExecutor()} (both the registrar and the channels), else on
 * homa-grpc's default pool, as grpc-java's default executor.
 */
final class GrpcHomaSystem {
    private GrpcHomaSystem() {}

    static EchoServer startServer(SystemSettings settings) {
        // The registrar on a dispatcher of our own rather than HomaGrpcServer: the benchmark binds
        // the transport itself, as for homa-rpc, to read its counters and write its timetrace.
        // The dispatcher's scheduler is homa-rpc's; gRPC methods are reactive RPC methods (they
        // never block the loop themselves), so it only serves what the RPC layer runs there.
        RpcDispatcher dispatcher = new RpcDispatcher(new JsonPayloadCodec(),
                        Schedulers.newBoundedElastic(CpuPool.THREADS, 100_000, "grpc-homa-server", 60, true))
                .maxResponseBytes(HomaRpcSystem.MAX_MESSAGE_BYTES);
        HomaGrpcRegistrar registrar = HomaGrpcRegistrar.on(dispatcher);
        if (settings.grpcDirectExecutor()) {
            registrar.executor(direct());
        }
        registrar.addService(GrpcEcho.service()).addService(GrpcStreams.service());
        HomaTransport transport = HomaTransport.bindNow(
                HomaMessageSystem.config(settings, HomaRpcSystem.MAX_MESSAGE_BYTES), dispatcher, HomaMessageSystem.BIND_TIMEOUT);
        // Deadlines (S11's grpc-timeout) are measured on the transport's clock, as HomaGrpcServer does.
        dispatcher.clock(transport.clock());
        return HomaMessageSystem.server(transport, settings);
    }

    static EchoClient connect(List<InetSocketAddress> servers, SystemSettings settings) {
        // One client endpoint for every server, as homa-rpc's client: Homa has no connection per peer.
        HomaTransport transport = HomaTransport.bindNow(
                HomaMessageSystem.config(settings, HomaRpcSystem.MAX_MESSAGE_BYTES), null, HomaMessageSystem.BIND_TIMEOUT);
        ManagedChannel[] channels = servers.stream().map(server -> {
            HomaManagedChannel.Builder builder = HomaManagedChannel.builder(transport, server);
            if (settings.grpcDirectExecutor()) {
                builder.directExecutor();
            }
            return builder.build();
        }).toArray(ManagedChannel[]::new);
        return GrpcEcho.client(channels, () -> HomaMessageSystem.counters(transport),
                () -> HomaMessageSystem.close(transport, settings));
    }

    private static Executor direct() {
        return Runnable::run;
    }
}
