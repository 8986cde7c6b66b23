package io.homa.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.StringValue;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.homa.engine.EngineConfig;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.JsonPayloadCodec;
import io.homa.reactive.rpc.PayloadCodecs;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.RpcMethod;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * gRPC services on the same dispatcher and port as the framework's own methods, the cancel of a
 * bidirectional call from each side, and {@link HomaGrpcServer}'s lifecycle.
 */
class HomaGrpcRegistrarTest {
    private static final long WAIT_SECONDS = 30;
    private static final HomaTransportConfig CONFIG = HomaTransportConfig.builder()
            .bindAddress("127.0.0.1")
            .engine(EngineConfig.builder().resendIntervalNs(50_000_000L).build())
            .build();

    private final Scheduler scheduler = Schedulers.newBoundedElastic(4, 100, "registrar-test");
    private final CountDownLatch bidiCancelled = new CountDownLatch(1);
    private final CountDownLatch bidiContextCancelled = new CountDownLatch(1);
    private RpcDispatcher dispatcher;
    private HomaTransport serverTransport;
    private HomaTransport clientTransport;
    private InetSocketAddress server;

    /** A bidi method that answers the first message, closes with CANCELLED on "stop", and otherwise waits. */
    private ServerServiceDefinition bidiService() {
        return ServerServiceDefinition.builder(TestService.SERVICE)
                .addMethod(TestService.PING_PONG, ServerCalls.asyncBidiStreamingCall((StreamObserver<StringValue> observer) -> {
                    io.grpc.stub.ServerCallStreamObserver<StringValue> server =
                            (io.grpc.stub.ServerCallStreamObserver<StringValue>) observer;
                    server.setOnCancelHandler(bidiCancelled::countDown);
                    io.grpc.Context.current().addListener(c -> bidiContextCancelled.countDown(), Runnable::run);
                    return new StreamObserver<StringValue>() {
                        @Override
                        public void onNext(StringValue value) {
                            if (value.getValue().equals("stop")) {
                                observer.onError(Status.CANCELLED.withDescription("server stopped it").asRuntimeException());
                            } else {
                                observer.onNext(value);
                            }
                        }

                        @Override
                        public void onError(Throwable t) {
                        }

                        @Override
                        public void onCompleted() {
                            observer.onCompleted();
                        }
                    };
                }))
                .build();
    }

    @BeforeEach
    void start() {
        dispatcher = new RpcDispatcher(PayloadCodecs.of(new JsonPayloadCodec()), scheduler)
                .register(new RpcMethod("greeting", "greet", String.class, name -> Mono.just("hello " + name)));
        HomaGrpcRegistrar.on(dispatcher).addService(bidiService());
        serverTransport = HomaTransport.bindNow(CONFIG, dispatcher, Duration.ofSeconds(10));
        clientTransport = HomaTransport.bindNow(CONFIG, null, Duration.ofSeconds(10));
        server = new InetSocketAddress("127.0.0.1", serverTransport.localAddress().getPort());
    }

    @AfterEach
    void stop() {
        clientTransport.disposeNow();
        serverTransport.disposeNow();
        scheduler.dispose();
    }

    @Test
    void shouldServeGrpcAndHomaMethodsOnOnePort() {
        HomaManagedChannel channel = HomaManagedChannel.builder(clientTransport, server).build();
        HomaClient homa = HomaClient.builder(clientTransport).resolver(service -> Mono.just(server)).build();
        try {
            assertThat(homa.call("greeting", "greet", "Homa", String.class).block(Duration.ofSeconds(WAIT_SECONDS)))
                    .isEqualTo("hello Homa");
            CompletableFuture<String> echoed = new CompletableFuture<>();
            StreamObserver<StringValue> requests = ClientCalls.asyncBidiStreamingCall(
                    channel.newCall(TestService.PING_PONG, CallOptions.DEFAULT), completing(echoed));
            requests.onNext(StringValue.of("over gRPC"));
            assertThat(echoed.join()).isEqualTo("over gRPC");
            requests.onCompleted();
            assertThat(HomaGrpcRegistrar.on(dispatcher).services()).extracting(d -> d.getServiceDescriptor().getName())
                    .containsExactly(TestService.SERVICE);
        } finally {
            channel.shutdownNow();
        }
    }

    @Test
    void shouldCancelABidiCallAtTheServerWhenTheClientCancels() throws Exception {
        HomaManagedChannel channel = HomaManagedChannel.builder(clientTransport, server).build();
        try {
            ClientCall<StringValue, StringValue> call = channel.newCall(TestService.PING_PONG, CallOptions.DEFAULT);
            CompletableFuture<String> echoed = new CompletableFuture<>();
            CompletableFuture<Status> closed = new CompletableFuture<>();
            call.start(new ClientCall.Listener<>() {
                @Override
                public void onMessage(StringValue message) {
                    echoed.complete(message.getValue());
                }

                @Override
                public void onClose(Status status, Metadata trailers) {
                    closed.complete(status);
                }
            }, new Metadata());
            call.request(10);
            call.sendMessage(StringValue.of("first"));
            assertThat(echoed.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("first");

            call.cancel("bye", null);

            assertThat(closed.get(WAIT_SECONDS, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.CANCELLED);
            assertThat(bidiCancelled.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
            assertThat(bidiContextCancelled.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
        } finally {
            channel.shutdownNow();
        }
    }

    @Test
    void shouldEndTheClientsCallWhenTheServerCancels() throws Exception {
        HomaManagedChannel channel = HomaManagedChannel.builder(clientTransport, server).build();
        try {
            CompletableFuture<String> ignored = new CompletableFuture<>();
            StreamObserver<StringValue> requests = ClientCalls.asyncBidiStreamingCall(
                    channel.newCall(TestService.PING_PONG, CallOptions.DEFAULT), completing(ignored));
            requests.onNext(StringValue.of("stop"));

            assertThatThrownBy(ignored::join).hasCauseInstanceOf(StatusRuntimeException.class)
                    .cause().satisfies(e -> {
                        Status status = ((StatusRuntimeException) e).getStatus();
                        assertThat(status.getCode()).as(status.toString()).isEqualTo(Status.Code.CANCELLED);
                        assertThat(status.getDescription()).isEqualTo("server stopped it");
                    });
        } finally {
            channel.shutdownNow();
        }
    }

    @Test
    void shouldStartServeAndShutDownAStandaloneServer() throws Exception {
        TestService service = new TestService();
        HomaGrpcServer grpcServer = HomaGrpcServer.builder(CONFIG).addService(service.definition()).build();
        assertThat(grpcServer.getPort()).isEqualTo(-1);
        grpcServer.start();
        HomaManagedChannel channel = HomaManagedChannel.builder(CONFIG, "127.0.0.1:" + grpcServer.getPort()).build();
        try {
            assertThat(grpcServer.getPort()).isPositive();
            assertThat(grpcServer.getServices()).extracting(d -> d.getServiceDescriptor().getName())
                    .containsExactly(TestService.SERVICE);
            assertThat(ClientCalls.blockingUnaryCall(channel, TestService.ECHO_METHOD, CallOptions.DEFAULT,
                    StringValue.of("standalone")).getValue()).isEqualTo("standalone");

            grpcServer.shutdown();

            assertThat(grpcServer.isShutdown()).isTrue();
            assertThat(grpcServer.awaitTermination(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
            assertThat(grpcServer.isTerminated()).isTrue();
        } finally {
            channel.shutdownNow();
            assertThat(channel.awaitTermination(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
            grpcServer.shutdownNow();
        }
    }

    private static StreamObserver<StringValue> completing(CompletableFuture<String> first) {
        return new StreamObserver<>() {
            @Override
            public void onNext(StringValue value) {
                first.complete(value.getValue());
            }

            @Override
            public void onError(Throwable t) {
                first.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                first.complete("<completed>");
            }
        };
    }
}
