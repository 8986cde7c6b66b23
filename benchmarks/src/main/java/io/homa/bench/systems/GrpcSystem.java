package io.homa.bench.systems;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * gRPC-java over grpc-netty-shaded: {@link GrpcEcho}'s service and client (one unary method with a
 * {@code byte[]} marshaller, no protobuf, and S10's streaming methods of {@link GrpcStreams}) on
 * Netty's server and channels, one HTTP/2 connection per server.
 */
final class GrpcSystem {
    private GrpcSystem() {}

    static EchoServer startServer(SystemSettings settings) throws IOException {
        NettyServerBuilder builder = NettyServerBuilder.forAddress(settings.bindSocket(0))
                .maxInboundMessageSize(GrpcEcho.MAX_INBOUND_BYTES)
                .addService(GrpcEcho.service())
                .addService(GrpcStreams.service());
        if (settings.grpcDirectExecutor()) {
            builder.directExecutor();
        }
        Server server = builder.build().start();
        return new EchoServer() {
            @Override
            public int port() {
                return server.getPort();
            }

            @Override
            public void close() {
                server.shutdownNow();
                try {
                    server.awaitTermination(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
    }

    static EchoClient connect(List<InetSocketAddress> servers, SystemSettings settings) {
        ManagedChannel[] channels = servers.stream().map(server -> {
            NettyChannelBuilder builder = NettyChannelBuilder.forAddress(server)
                    .usePlaintext()
                    .maxInboundMessageSize(GrpcEcho.MAX_INBOUND_BYTES);
            if (settings.grpcDirectExecutor()) {
                builder.directExecutor();
            }
            return builder.build();
        }).toArray(ManagedChannel[]::new);
        return GrpcEcho.client(channels, Map::of, () -> { });
    }
}
