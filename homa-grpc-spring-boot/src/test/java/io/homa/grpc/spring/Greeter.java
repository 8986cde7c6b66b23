package io.homa.grpc.spring;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import com.google.protobuf.StringValue;
import io.grpc.BindableService;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.Context;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.AbstractBlockingStub;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;

/**
 * A gRPC service written by hand over protobuf-java's wrapper types, as generated code would be:
 * {@code demo.Greeter} with {@code SayHello} (answers "Hello, name") and {@code Hang} (answers only
 * when its call is cancelled or its deadline passes).
 */
final class Greeter implements BindableService {

    static final String SERVICE = "demo.Greeter";

    static final MethodDescriptor<StringValue, StringValue> SAY_HELLO = unary("SayHello");
    static final MethodDescriptor<StringValue, StringValue> HANG = unary("Hang");

    private static final ServiceDescriptor DESCRIPTOR = ServiceDescriptor.newBuilder(SERVICE)
            .addMethod(SAY_HELLO).addMethod(HANG).build();

    /** Counted down when a {@code Hang} call's server Context is cancelled (deadline or cancel). */
    final CountDownLatch hangCancelled = new CountDownLatch(1);

    private static MethodDescriptor<StringValue, StringValue> unary(String method) {
        return MethodDescriptor.<StringValue, StringValue>newBuilder()
                .setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, method))
                .setRequestMarshaller(ProtoUtils.marshaller(StringValue.getDefaultInstance()))
                .setResponseMarshaller(ProtoUtils.marshaller(StringValue.getDefaultInstance()))
                .build();
    }

    @Override
    public ServerServiceDefinition bindService() {
        return ServerServiceDefinition.builder(DESCRIPTOR)
                .addMethod(SAY_HELLO, ServerCalls.asyncUnaryCall(this::sayHello))
                .addMethod(HANG, ServerCalls.asyncUnaryCall(this::hang))
                .build();
    }

    private void sayHello(StringValue request, StreamObserver<StringValue> responses) {
        responses.onNext(StringValue.of("Hello, " + request.getValue()));
        responses.onCompleted();
    }

    private void hang(StringValue request, StreamObserver<StringValue> responses) {
        Context.current().addListener((context) -> {
            hangCancelled.countDown();
            responses.onError(Status.CANCELLED.withDescription("hang ended").asRuntimeException());
        }, Runnable::run);
    }

    /** The blocking stub that protoc-gen-grpc-java would generate. */
    static final class BlockingStub extends AbstractBlockingStub<BlockingStub> {

        private BlockingStub(Channel channel, CallOptions options) {
            super(channel, options);
        }

        static BlockingStub of(Channel channel) {
            return new BlockingStub(channel, CallOptions.DEFAULT);
        }

        @Override
        protected BlockingStub build(Channel channel, CallOptions options) {
            return new BlockingStub(channel, options);
        }

        StringValue sayHello(StringValue request) {
            return ClientCalls.blockingUnaryCall(getChannel(), SAY_HELLO, getCallOptions(), request);
        }

        StringValue hang(StringValue request) {
            return ClientCalls.blockingUnaryCall(getChannel(), HANG, getCallOptions(), request);
        }
    }

    static boolean await(CountDownLatch latch) throws InterruptedException {
        return latch.await(30, TimeUnit.SECONDS);
    }
}
