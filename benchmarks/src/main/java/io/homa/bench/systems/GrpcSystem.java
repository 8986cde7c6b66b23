package io.homa.bench.systems;

import io.grpc.CallOptions;
import io.grpc.KnownLength;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** gRPC-java over grpc-netty-shaded: one unary method with a {@code byte[]} marshaller, no protobuf. */
final class GrpcSystem {
    static final int MAX_INBOUND_BYTES = 16 * 1024 * 1024;

    /** Marshals byte arrays as they are; the stream announces its length so gRPC frames without copying twice. */
    static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new KnownLengthStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    static final MethodDescriptor<byte[], byte[]> ECHO = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName("bench.Echo", "Echo"))
            .setRequestMarshaller(BYTES)
            .setResponseMarshaller(BYTES)
            .build();

    private static final class KnownLengthStream extends ByteArrayInputStream implements KnownLength {
        KnownLengthStream(byte[] bytes) {
            super(bytes);
        }
    }

    private GrpcSystem() {}

    static EchoServer startServer(SystemSettings settings) throws IOException {
        ServerServiceDefinition service = ServerServiceDefinition.builder("bench.Echo")
                .addMethod(ECHO, ServerCalls.asyncUnaryCall((byte[] request, StreamObserver<byte[]> response) -> {
                    response.onNext(EchoProtocol.respond(request));
                    response.onCompleted();
                }))
                .build();
        NettyServerBuilder builder = NettyServerBuilder.forAddress(settings.bindSocket(0))
                .maxInboundMessageSize(MAX_INBOUND_BYTES)
                .addService(service);
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
                    .maxInboundMessageSize(MAX_INBOUND_BYTES);
            if (settings.grpcDirectExecutor()) {
                builder.directExecutor();
            }
            return builder.build();
        }).toArray(ManagedChannel[]::new);
        return new EchoClient() {
            @Override
            public CompletableFuture<byte[]> call(int target, byte[] request) {
                CompletableFuture<byte[]> result = new CompletableFuture<>();
                ClientCalls.asyncUnaryCall(channels[target].newCall(ECHO, CallOptions.DEFAULT), request,
                        new StreamObserver<>() {
                            @Override
                            public void onNext(byte[] value) {
                                result.complete(value);
                            }

                            @Override
                            public void onError(Throwable error) {
                                result.completeExceptionally(error);
                            }

                            @Override
                            public void onCompleted() {
                                if (!result.isDone()) {
                                    result.completeExceptionally(new IllegalStateException("gRPC call ended without a response"));
                                }
                            }
                        });
                return result;
            }

            @Override
            public int targets() {
                return channels.length;
            }

            @Override
            public void close() {
                for (ManagedChannel channel : channels) {
                    channel.shutdownNow();
                }
                for (ManagedChannel channel : channels) {
                    try {
                        channel.awaitTermination(5, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        };
    }
}
