package io.homa.grpc;

import com.google.protobuf.Empty;
import com.google.protobuf.Int32Value;
import com.google.protobuf.StringValue;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A test service written by hand over protobuf's wrapper messages (no generated code): each
 * method records what the server saw, for the tests to assert.
 */
final class TestService {
    static final String SERVICE = "homa.test.TestService";
    static final Metadata.Key<String> ECHO = Metadata.Key.of("x-echo", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<byte[]> ECHO_BIN = Metadata.Key.of("x-echo-bin", Metadata.BINARY_BYTE_MARSHALLER);
    static final Metadata.Key<byte[]> TRAILER_BIN = Metadata.Key.of("x-trailer-bin", Metadata.BINARY_BYTE_MARSHALLER);

    static final MethodDescriptor<StringValue, StringValue> ECHO_METHOD = method("Echo", MethodDescriptor.MethodType.UNARY,
            StringValue.getDefaultInstance(), StringValue.getDefaultInstance());
    /** Closes with the code (a number) and description given as "code:description". */
    static final MethodDescriptor<StringValue, Empty> FAIL = method("Fail", MethodDescriptor.MethodType.UNARY,
            StringValue.getDefaultInstance(), Empty.getDefaultInstance());
    static final MethodDescriptor<Empty, Empty> THROW = method("Throw", MethodDescriptor.MethodType.UNARY,
            Empty.getDefaultInstance(), Empty.getDefaultInstance());
    /** Waits until its Context is cancelled (by the client's cancel or the deadline). */
    static final MethodDescriptor<Empty, Empty> WAIT = method("Wait", MethodDescriptor.MethodType.UNARY,
            Empty.getDefaultInstance(), Empty.getDefaultInstance());
    /** Streams 0..n-1, sending only while the call is ready; n = 0: until cancelled. */
    static final MethodDescriptor<Int32Value, Int32Value> COUNT = method("Count",
            MethodDescriptor.MethodType.SERVER_STREAMING, Int32Value.getDefaultInstance(), Int32Value.getDefaultInstance());
    static final MethodDescriptor<Int32Value, Int32Value> SUM = method("Sum", MethodDescriptor.MethodType.CLIENT_STREAMING,
            Int32Value.getDefaultInstance(), Int32Value.getDefaultInstance());
    /** Answers each message with it uppercased. */
    static final MethodDescriptor<StringValue, StringValue> PING_PONG = method("PingPong",
            MethodDescriptor.MethodType.BIDI_STREAMING, StringValue.getDefaultInstance(), StringValue.getDefaultInstance());

    /** Asks its client for messages only as a test tells it ({@link #takeObserver}). */
    static final MethodDescriptor<Int32Value, Int32Value> TAKE = method("Take",
            MethodDescriptor.MethodType.BIDI_STREAMING, Int32Value.getDefaultInstance(), Int32Value.getDefaultInstance());

    final AtomicReference<ServerCallStreamObserver<Int32Value>> takeObserver = new AtomicReference<>();
    final AtomicInteger taken = new AtomicInteger();
    final AtomicReference<Metadata> lastHeaders = new AtomicReference<>();
    final AtomicReference<Context> waitContext = new AtomicReference<>();
    final CountDownLatch waitStarted = new CountDownLatch(1);
    final CountDownLatch waitCancelled = new CountDownLatch(1);
    final CountDownLatch countCancelled = new CountDownLatch(1);
    final CountDownLatch countContextCancelled = new CountDownLatch(1);
    /** Messages Count has handed to its observer. */
    final AtomicLong countSent = new AtomicLong();
    final AtomicInteger pingPongs = new AtomicInteger();

    private static <ReqT, RespT> MethodDescriptor<ReqT, RespT> method(String name, MethodDescriptor.MethodType type,
            com.google.protobuf.Message request, com.google.protobuf.Message response) {
        @SuppressWarnings("unchecked")
        MethodDescriptor.Marshaller<ReqT> requestMarshaller = (MethodDescriptor.Marshaller<ReqT>) ProtoUtils.marshaller(request);
        @SuppressWarnings("unchecked")
        MethodDescriptor.Marshaller<RespT> responseMarshaller = (MethodDescriptor.Marshaller<RespT>) ProtoUtils.marshaller(response);
        return MethodDescriptor.<ReqT, RespT>newBuilder()
                .setType(type)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, name))
                .setRequestMarshaller(requestMarshaller)
                .setResponseMarshaller(responseMarshaller)
                .build();
    }

    ServerServiceDefinition definition() {
        return ServerServiceDefinition.builder(SERVICE)
                .addMethod(ECHO_METHOD, ServerCalls.asyncUnaryCall(this::echo))
                .addMethod(FAIL, ServerCalls.asyncUnaryCall(this::fail))
                .addMethod(THROW, ServerCalls.asyncUnaryCall((request, observer) -> {
                    throw new IllegalStateException("boom");
                }))
                .addMethod(WAIT, ServerCalls.asyncUnaryCall(this::await))
                .addMethod(COUNT, ServerCalls.asyncServerStreamingCall(this::count))
                .addMethod(SUM, ServerCalls.asyncClientStreamingCall(this::sum))
                .addMethod(PING_PONG, ServerCalls.asyncBidiStreamingCall(this::pingPong))
                .addMethod(TAKE, ServerCalls.asyncBidiStreamingCall(this::take))
                .build();
    }

    private void echo(StringValue request, StreamObserver<StringValue> observer) {
        observer.onNext(StringValue.of(request.getValue()));
        observer.onCompleted();
    }

    private void fail(StringValue request, StreamObserver<Empty> observer) {
        String value = request.getValue();
        int colon = value.indexOf(':');
        Metadata trailers = new Metadata();
        trailers.put(TRAILER_BIN, new byte[] {0, (byte) 0xFF, 10, 13});
        observer.onError(Status.fromCodeValue(Integer.parseInt(value.substring(0, colon)))
                .withDescription(value.substring(colon + 1)).asRuntimeException(trailers));
    }

    private void await(Empty request, StreamObserver<Empty> observer) {
        Context context = Context.current();
        waitContext.set(context);
        context.addListener(cancelled -> waitCancelled.countDown(), Runnable::run);
        waitStarted.countDown();
    }

    private void count(Int32Value request, StreamObserver<Int32Value> plain) {
        ServerCallStreamObserver<Int32Value> observer = (ServerCallStreamObserver<Int32Value>) plain;
        int n = request.getValue();
        AtomicInteger next = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        observer.setOnCancelHandler(countCancelled::countDown);
        Context.current().addListener(cancelled -> countContextCancelled.countDown(), Runnable::run);
        observer.setOnReadyHandler(() -> {
            while (observer.isReady() && !observer.isCancelled() && (n == 0 || next.get() < n)) {
                countSent.incrementAndGet();
                observer.onNext(Int32Value.of(next.getAndIncrement()));
            }
            if (n != 0 && next.get() == n && done.getAndIncrement() == 0) {
                observer.onCompleted();
            }
        });
    }

    private StreamObserver<Int32Value> sum(StreamObserver<Int32Value> observer) {
        return new StreamObserver<>() {
            private int sum;

            @Override
            public void onNext(Int32Value value) {
                sum += value.getValue();
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
                observer.onNext(Int32Value.of(sum));
                observer.onCompleted();
            }
        };
    }

    private StreamObserver<Int32Value> take(StreamObserver<Int32Value> plain) {
        ServerCallStreamObserver<Int32Value> observer = (ServerCallStreamObserver<Int32Value>) plain;
        observer.disableAutoRequest();
        takeObserver.set(observer);
        return new StreamObserver<>() {
            @Override
            public void onNext(Int32Value value) {
                taken.incrementAndGet();
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
                observer.onNext(Int32Value.of(taken.get()));
                observer.onCompleted();
            }
        };
    }

    private StreamObserver<StringValue> pingPong(StreamObserver<StringValue> observer) {
        return new StreamObserver<>() {
            @Override
            public void onNext(StringValue value) {
                pingPongs.incrementAndGet();
                observer.onNext(StringValue.of(value.getValue().toUpperCase(java.util.Locale.ROOT)));
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
                observer.onCompleted();
            }
        };
    }
}
