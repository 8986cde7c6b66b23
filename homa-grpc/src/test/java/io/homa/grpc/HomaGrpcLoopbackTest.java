package io.homa.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Empty;
import com.google.protobuf.Int32Value;
import com.google.protobuf.StringValue;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptors;
import io.grpc.Context;
import io.grpc.ForwardingServerCall;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.homa.engine.EngineConfig;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A grpc-java service on a {@link HomaGrpcServer} called through a {@link HomaManagedChannel}, over
 * two real transports on loopback UDP: every call kind, metadata, statuses, deadlines, cancellation
 * both ways, UNIMPLEMENTED, flow control and the remote address.
 */
class HomaGrpcLoopbackTest {
    private static final long WAIT_SECONDS = 30;

    private final TestService service = new TestService();
    private final AtomicReference<SocketAddress> remoteAddress = new AtomicReference<>();
    private HomaGrpcServer server;
    private HomaTransport clientTransport;
    private HomaManagedChannel channel;

    /** Copies x-echo and x-echo-bin into the response headers and trailers; records the remote address. */
    private final ServerInterceptor echoMetadata = new ServerInterceptor() {
        @Override
        public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                     ServerCallHandler<ReqT, RespT> next) {
            remoteAddress.set(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
            return next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                @Override
                public void sendHeaders(Metadata responseHeaders) {
                    copyEcho(headers, responseHeaders);
                    super.sendHeaders(responseHeaders);
                }

                @Override
                public void close(Status status, Metadata trailers) {
                    copyEcho(headers, trailers);
                    super.close(status, trailers);
                }
            }, headers);
        }
    };

    private static void copyEcho(Metadata from, Metadata to) {
        Iterable<String> texts = from.getAll(TestService.ECHO);
        if (texts != null) {
            texts.forEach(value -> to.put(TestService.ECHO, value));
        }
        Iterable<byte[]> binaries = from.getAll(TestService.ECHO_BIN);
        if (binaries != null) {
            binaries.forEach(value -> to.put(TestService.ECHO_BIN, value));
        }
    }

    @BeforeEach
    void start() throws Exception {
        // Tolerant timeouts: the test machine is shared and may pause threads for a while.
        HomaTransportConfig config = HomaTransportConfig.builder()
                .bindAddress("127.0.0.1")
                .engine(EngineConfig.builder().resendIntervalNs(50_000_000L).build())
                .build();
        server = HomaGrpcServer.builder(config)
                .addService(ServerInterceptors.intercept(service.definition(), echoMetadata))
                .shutdownGracePeriod(Duration.ofSeconds(5))
                .build()
                .start();
        clientTransport = HomaTransport.bindNow(config, null, Duration.ofSeconds(10));
        channel = HomaManagedChannel.builder(clientTransport, "127.0.0.1:" + server.getPort()).build();
    }

    @AfterEach
    void stop() throws InterruptedException {
        channel.shutdownNow();
        channel.awaitTermination(WAIT_SECONDS, TimeUnit.SECONDS);
        server.shutdownNow();
        server.awaitTermination(WAIT_SECONDS, TimeUnit.SECONDS);
        clientTransport.disposeNow();
    }

    @Test
    void shouldCallUnary() {
        StringValue answer = ClientCalls.blockingUnaryCall(channel, TestService.ECHO_METHOD, CallOptions.DEFAULT,
                StringValue.of("hello, Homa"));

        assertThat(answer.getValue()).isEqualTo("hello, Homa");
    }

    @Test
    void shouldCarryMetadataBothWaysIncludingBinaryKeys() {
        Metadata headers = new Metadata();
        headers.put(TestService.ECHO, "first");
        headers.put(TestService.ECHO, "second");
        byte[] binary = {0, 1, (byte) 0xFE, (byte) 0xFF, '\n', ':'};
        headers.put(TestService.ECHO_BIN, binary);
        AtomicReference<Metadata> responseHeaders = new AtomicReference<>();
        AtomicReference<Metadata> trailers = new AtomicReference<>();

        StringValue answer = ClientCalls.blockingUnaryCall(ClientInterceptors.intercept(channel,
                        MetadataUtils.newAttachHeadersInterceptor(headers),
                        MetadataUtils.newCaptureMetadataInterceptor(responseHeaders, trailers)),
                TestService.ECHO_METHOD, CallOptions.DEFAULT, StringValue.of("metadata"));

        assertThat(answer.getValue()).isEqualTo("metadata");
        assertThat(responseHeaders.get().getAll(TestService.ECHO)).containsExactly("first", "second");
        assertThat(responseHeaders.get().get(TestService.ECHO_BIN)).isEqualTo(binary);
        assertThat(trailers.get().getAll(TestService.ECHO)).containsExactly("first", "second");
        assertThat(trailers.get().get(TestService.ECHO_BIN)).isEqualTo(binary);
    }

    @Test
    void shouldCarryEveryStatusCodeAndDescriptionExactly() {
        String special = "\t\ntest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈 and %25 %zz\u0000\t\n";
        for (Status.Code code : Status.Code.values()) {
            if (code == Status.Code.OK) {
                continue;
            }
            AtomicReference<Metadata> trailers = new AtomicReference<>();
            String description = code + " " + special;
            assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(ClientInterceptors.intercept(channel,
                            MetadataUtils.newCaptureMetadataInterceptor(new AtomicReference<>(), trailers)),
                    TestService.FAIL, CallOptions.DEFAULT, StringValue.of(code.value() + ":" + description)))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(code);
                        assertThat(e.getStatus().getDescription()).isEqualTo(description);
                    });
            assertThat(trailers.get().get(TestService.TRAILER_BIN)).containsExactly(0, 0xFF, 10, 13);
        }
    }

    @Test
    void shouldAnswerUnknownWhenTheHandlerThrows() {
        assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(channel, TestService.THROW, CallOptions.DEFAULT,
                Empty.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNKNOWN));
    }

    @Test
    void shouldAnswerUnimplementedForAnUnknownMethodOrService() {
        MethodDescriptor<Empty, Empty> unknownMethod = TestService.THROW.toBuilder()
                .setFullMethodName(MethodDescriptor.generateFullMethodName(TestService.SERVICE, "NoSuchMethod"))
                .build();
        MethodDescriptor<Empty, Empty> unknownService = TestService.THROW.toBuilder()
                .setFullMethodName("homa.test.NoSuchService/Throw")
                .build();

        assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(channel, unknownMethod, CallOptions.DEFAULT,
                Empty.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED);
                    assertThat(e.getStatus().getDescription())
                            .isEqualTo("Method not found: homa.test.TestService/NoSuchMethod");
                });
        assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(channel, unknownService, CallOptions.DEFAULT,
                Empty.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED);
                    assertThat(e.getStatus().getDescription()).isEqualTo("Method not found: homa.test.NoSuchService/Throw");
                });
    }

    @Test
    void shouldStreamFromTheServer() {
        Iterator<Int32Value> values = ClientCalls.blockingServerStreamingCall(channel, TestService.COUNT,
                CallOptions.DEFAULT, Int32Value.of(1000));
        List<Integer> received = new ArrayList<>();
        values.forEachRemaining(value -> received.add(value.getValue()));

        assertThat(received).hasSize(1000);
        for (int i = 0; i < received.size(); i++) {
            assertThat(received.get(i)).isEqualTo(i);
        }
    }

    @Test
    void shouldStreamFromTheClient() throws Exception {
        CompletableFuture<Integer> sum = new CompletableFuture<>();
        StreamObserver<Int32Value> requests = ClientCalls.asyncClientStreamingCall(
                channel.newCall(TestService.SUM, CallOptions.DEFAULT), observer(sum, value -> value.getValue()));
        for (int i = 1; i <= 1000; i++) {
            requests.onNext(Int32Value.of(i));
        }
        requests.onCompleted();

        assertThat(sum.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo(500_500);
    }

    @Test
    void shouldPingPongBothWays() throws Exception {
        BlockingQueue<Object> answers = new LinkedBlockingQueue<>();
        StreamObserver<StringValue> requests = ClientCalls.asyncBidiStreamingCall(
                channel.newCall(TestService.PING_PONG, CallOptions.DEFAULT), new StreamObserver<>() {
                    @Override
                    public void onNext(StringValue value) {
                        answers.add(value.getValue());
                    }

                    @Override
                    public void onError(Throwable t) {
                        answers.add(t);
                    }

                    @Override
                    public void onCompleted() {
                        answers.add("<completed>");
                    }
                });
        // Each answer comes before the next ping is sent: a real ping-pong.
        for (String ping : List.of("a", "bb", "ccc", "ünï")) {
            requests.onNext(StringValue.of(ping));
            assertThat(answers.poll(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo(ping.toUpperCase(java.util.Locale.ROOT));
        }
        requests.onCompleted();

        assertThat(answers.poll(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("<completed>");
    }

    @Test
    void shouldFailWithDeadlineExceededAndCancelTheServersContext() throws Exception {
        assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(channel, TestService.WAIT,
                CallOptions.DEFAULT.withDeadlineAfter(300, TimeUnit.MILLISECONDS), Empty.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));

        assertThat(service.waitCancelled.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
        assertThat(service.waitContext.get().getDeadline()).isNotNull();
    }

    @Test
    void shouldTakeTheEarlierOfTheContextAndCallOptionsDeadlines() throws Exception {
        Context.CancellableContext context = Context.current().withDeadlineAfter(300, TimeUnit.MILLISECONDS,
                io.homa.grpc.internal.GrpcThreads.timer());
        try {
            context.run(() -> assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(channel, TestService.WAIT,
                    CallOptions.DEFAULT.withDeadlineAfter(1, TimeUnit.HOURS), Empty.getDefaultInstance()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED)));
        } finally {
            context.cancel(null);
        }
        assertThat(service.waitCancelled.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
        // The server's context carries the earlier deadline, not the hour.
        assertThat(service.waitContext.get().getDeadline().timeRemaining(TimeUnit.MINUTES)).isLessThan(30);
    }

    @Test
    void shouldFailAtOnceWhenTheDeadlineHasPassed() {
        assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(channel, TestService.ECHO_METHOD,
                CallOptions.DEFAULT.withDeadlineAfter(-1, TimeUnit.SECONDS), StringValue.of("late")))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
    }

    @Test
    void shouldCancelAUnaryCallAtTheServer() throws Exception {
        ClientCall<Empty, Empty> call = channel.newCall(TestService.WAIT, CallOptions.DEFAULT);
        CompletableFuture<Status> closed = new CompletableFuture<>();
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.complete(status);
            }
        }, new Metadata());
        call.request(1);
        call.sendMessage(Empty.getDefaultInstance());
        call.halfClose();
        assertThat(service.waitStarted.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();

        call.cancel("changed my mind", null);

        Status status = closed.get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(status.getCode()).isEqualTo(Status.Code.CANCELLED);
        assertThat(status.getDescription()).isEqualTo("changed my mind");
        assertThat(service.waitCancelled.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void shouldCancelAServerStreamAtTheServer() throws Exception {
        Iterator<Int32Value> values;
        Context.CancellableContext context = Context.current().withCancellation();
        Context previous = context.attach();
        try {
            values = ClientCalls.blockingServerStreamingCall(channel, TestService.COUNT, CallOptions.DEFAULT,
                    Int32Value.of(0));
        } finally {
            context.detach(previous);
        }
        for (int i = 0; i < 5; i++) {
            assertThat(values.next().getValue()).isEqualTo(i);
        }

        context.cancel(null);

        assertThat(service.countCancelled.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
        assertThat(service.countContextCancelled.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void shouldKeepAServerStreamWithinWhatASlowClientRequested() throws Exception {
        int total = 300;
        AtomicLong received = new AtomicLong();
        AtomicLong maxOutstanding = new AtomicLong();
        CompletableFuture<Status> closed = new CompletableFuture<>();
        ClientCall<Int32Value, Int32Value> call = channel.newCall(TestService.COUNT, CallOptions.DEFAULT);
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onMessage(Int32Value message) {
                long outstanding = service.countSent.get() - received.incrementAndGet();
                maxOutstanding.accumulateAndGet(outstanding, Math::max);
                // A slow consumer: the next message is asked for only after this one is handled.
                Thread.yield();
                call.request(1);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.complete(status);
            }
        }, new Metadata());
        call.request(1);
        call.sendMessage(Int32Value.of(total));
        call.halfClose();

        assertThat(closed.get(WAIT_SECONDS, TimeUnit.SECONDS).isOk()).isTrue();
        assertThat(received.get()).isEqualTo(total);
        // One message asked for at a time, plus the one item kept for the trailers, plus one of
        // those requests fetched ahead.
        assertThat(maxOutstanding.get()).isLessThanOrEqualTo(3);
    }

    @Test
    void shouldSendFromTheClientAtMostOneRequestBeyondWhatTheServerAskedFor() throws Exception {
        int messages = 12;
        AtomicInteger sent = new AtomicInteger();
        CompletableFuture<Integer> total = new CompletableFuture<>();
        ClientCall<Int32Value, Int32Value> call = channel.newCall(TestService.TAKE, CallOptions.DEFAULT);
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onReady() {
                // A well-behaved sender: only while the call is ready.
                while (call.isReady() && sent.get() < messages) {
                    call.sendMessage(Int32Value.of(sent.incrementAndGet()));
                }
            }

            @Override
            public void onMessage(Int32Value message) {
                total.complete(message.getValue());
            }
        }, new Metadata());
        call.request(1);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(WAIT_SECONDS))
                .until(() -> service.takeObserver.get() != null);

        service.takeObserver.get().request(5);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(WAIT_SECONDS)).until(() -> service.taken.get() == 5);

        // The method asked for 5: the client sends those and at most one such request ahead (they
        // wait at the server until the method asks), and is then not ready for more.
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(WAIT_SECONDS)).until(() -> !call.isReady());
        assertThat(sent.get()).isBetween(5, 10);
        assertThat(service.taken.get()).isEqualTo(5);

        service.takeObserver.get().request(7);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(WAIT_SECONDS)).until(() -> service.taken.get() == 12);
        assertThat(sent.get()).isEqualTo(12);
        call.halfClose();
        assertThat(total.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo(12);
    }

    @Test
    void shouldEndAServerStreamAtItsDeadline() throws Exception {
        Iterator<Int32Value> values = ClientCalls.blockingServerStreamingCall(channel, TestService.COUNT,
                CallOptions.DEFAULT.withDeadlineAfter(300, TimeUnit.MILLISECONDS), Int32Value.of(0));

        // An endless stream read as fast as it comes: only the deadline ends it.
        assertThatThrownBy(() -> values.forEachRemaining(value -> { }))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
        assertThat(service.countContextCancelled.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void shouldGiveTheServerTheClientsAddress() {
        ClientCalls.blockingUnaryCall(channel, TestService.ECHO_METHOD, CallOptions.DEFAULT, StringValue.of("who"));

        assertThat(remoteAddress.get()).isInstanceOfSatisfying(InetSocketAddress.class, address -> {
            assertThat(address.getAddress().getHostAddress()).isEqualTo("127.0.0.1");
            // A client endpoint of several event loops sends from one of their sockets, whichever a hash
            // picks: the port is one of the client's, not necessarily localAddress()'s.
            assertThat(address.getPort()).isPositive().isNotEqualTo(server.getPort());
        });
    }

    @Test
    void shouldFailNewCallsAfterShutdownAndTerminateOnceCallsEnd() throws Exception {
        ClientCall<Empty, Empty> call = channel.newCall(TestService.WAIT,
                CallOptions.DEFAULT.withDeadlineAfter(500, TimeUnit.MILLISECONDS));
        CompletableFuture<Status> closed = new CompletableFuture<>();
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.complete(status);
            }
        }, new Metadata());
        call.request(1);
        call.sendMessage(Empty.getDefaultInstance());
        call.halfClose();

        channel.shutdown();

        assertThat(channel.isShutdown()).isTrue();
        assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(channel, TestService.ECHO_METHOD, CallOptions.DEFAULT,
                StringValue.of("too late")))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        assertThat(closed.get(WAIT_SECONDS, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        assertThat(channel.awaitTermination(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void shouldCancelCallsInFlightOnShutdownNow() throws Exception {
        CompletableFuture<Status> closed = new CompletableFuture<>();
        ClientCall<Empty, Empty> call = channel.newCall(TestService.WAIT, CallOptions.DEFAULT);
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.complete(status);
            }
        }, new Metadata());
        call.request(1);
        call.sendMessage(Empty.getDefaultInstance());
        call.halfClose();
        assertThat(service.waitStarted.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();

        channel.shutdownNow();

        assertThat(closed.get(WAIT_SECONDS, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(channel.awaitTermination(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
        assertThat(service.waitCancelled.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void shouldCallListenersOneAtATimeInOrder() throws Exception {
        AtomicInteger concurrent = new AtomicInteger();
        AtomicInteger maxConcurrent = new AtomicInteger();
        List<String> events = java.util.Collections.synchronizedList(new ArrayList<>());
        CountDownLatch closed = new CountDownLatch(1);
        ClientCall<Int32Value, Int32Value> call = channel.newCall(TestService.COUNT, CallOptions.DEFAULT);
        call.start(new ClientCall.Listener<>() {
            private void enter(String event) {
                maxConcurrent.accumulateAndGet(concurrent.incrementAndGet(), Math::max);
                events.add(event);
                Thread.yield();
                concurrent.decrementAndGet();
            }

            @Override
            public void onHeaders(Metadata headers) {
                enter("headers");
            }

            @Override
            public void onMessage(Int32Value message) {
                enter("message");
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                enter("close " + status.getCode());
                closed.countDown();
            }
        }, new Metadata());
        call.request(200);
        call.sendMessage(Int32Value.of(200));
        call.halfClose();

        assertThat(closed.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
        assertThat(maxConcurrent.get()).isEqualTo(1);
        assertThat(events).hasSize(202);
        assertThat(events.get(0)).isEqualTo("headers");
        assertThat(events.get(201)).isEqualTo("close OK");
        assertThat(events.subList(1, 201)).containsOnly("message");
    }

    private static <T, R> StreamObserver<T> observer(CompletableFuture<R> result, java.util.function.Function<T, R> map) {
        return new StreamObserver<>() {
            @Override
            public void onNext(T value) {
                result.complete(map.apply(value));
            }

            @Override
            public void onError(Throwable t) {
                result.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
            }
        };
    }

    @SuppressWarnings("unused")
    private static String utf8(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
