package io.homa.bench.systems;

import io.grpc.CallOptions;
import io.grpc.Context;
import io.grpc.KnownLength;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
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
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * gRPC-java over grpc-netty-shaded: one unary method with a {@code byte[]} marshaller, no protobuf,
 * and S10's streaming methods on the same marshaller ({@link GrpcStreams}).
 */
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
                    if (EchoProtocol.isSpin(request)) {
                        spinOnPool(request, response);
                        return;
                    }
                    response.onNext(EchoProtocol.respond(request));
                    response.onCompleted();
                }))
                .build();
        NettyServerBuilder builder = NettyServerBuilder.forAddress(settings.bindSocket(0))
                .maxInboundMessageSize(MAX_INBOUND_BYTES)
                .addService(service)
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

    /**
     * Runs a spin request on {@link CpuPool}, in the call's context: a call cancelled before its
     * turn (its deadline passed, or the client cancelled) is not started, as gRPC itself skips
     * a cancelled call's handler when handlers run on its executor.
     */
    private static void spinOnPool(byte[] request, StreamObserver<byte[]> response) {
        Context context = Context.current();
        try {
            CpuPool.executor().execute(context.wrap(() -> {
                if (context.isCancelled()) {
                    return; // gRPC has closed the call (DEADLINE_EXCEEDED or CANCELLED)
                }
                byte[] answer = EchoProtocol.respond(request);
                try {
                    response.onNext(answer);
                    response.onCompleted();
                } catch (RuntimeException e) {
                    // cancelled while it ran: gRPC has answered the call already
                }
            }));
        } catch (RejectedExecutionException e) {
            response.onError(Status.RESOURCE_EXHAUSTED.withDescription("CPU pool rejected the call").asRuntimeException());
        }
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
        EchoStreams streams = GrpcStreams.client(channels);
        return new EchoClient() {
            @Override
            public EchoStreams streams() {
                return streams;
            }

            @Override
            public CompletableFuture<byte[]> call(int target, byte[] request) {
                return call(target, request, CallOptions.DEFAULT);
            }

            @Override
            public CompletableFuture<byte[]> call(int target, byte[] request, long timeoutMs) {
                // gRPC's deadline: sent to the server (grpc-timeout), which cancels the call when it passes.
                return call(target, request, CallOptions.DEFAULT.withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS));
            }

            private CompletableFuture<byte[]> call(int target, byte[] request, CallOptions options) {
                CompletableFuture<byte[]> result = new CompletableFuture<>();
                ClientCalls.asyncUnaryCall(channels[target].newCall(ECHO, options), request,
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
