package io.homa.bench.systems;

import io.grpc.CallOptions;
import io.grpc.Context;
import io.grpc.KnownLength;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The gRPC echo service and its client, shared by every system that runs it whatever carries the
 * calls ({@code grpc} over grpc-netty-shaded, {@code grpc-homa} over Homa): one unary method with
 * a {@code byte[]} marshaller, no protobuf, and S10's streaming methods ({@link GrpcStreams}).
 * Only the channels and the server differ between those systems, so their figures compare the
 * transports, not two services.
 */
final class GrpcEcho {
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

    private GrpcEcho() {}

    /** The unary echo service ({@link #ECHO}); S11's spin requests run on {@link CpuPool}. */
    static ServerServiceDefinition service() {
        return ServerServiceDefinition.builder("bench.Echo")
                .addMethod(ECHO, ServerCalls.asyncUnaryCall((byte[] request, StreamObserver<byte[]> response) -> {
                    if (EchoProtocol.isSpin(request)) {
                        spinOnPool(request, response);
                        return;
                    }
                    response.onNext(EchoProtocol.respond(request));
                    response.onCompleted();
                }))
                .build();
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

    /**
     * A client over one channel per server (target i is {@code channels[i]}), unary calls through
     * the stub's {@code ClientCalls} and streams through {@link GrpcStreams}; closing shuts the
     * channels down, waits for them, then runs {@code afterClose} (what the channels share, e.g. a
     * transport).
     */
    static EchoClient client(ManagedChannel[] channels, Supplier<Map<String, Long>> counters, Runnable afterClose) {
        EchoStreams streams = GrpcStreams.client(channels);
        return new EchoClient() {
            @Override
            public EchoStreams streams() {
                return streams;
            }

            @Override
            public Map<String, Long> counters() {
                return counters.get();
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
                afterClose.run();
            }
        };
    }
}
