package io.homa.bench.systems;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;

/**
 * S10 on gRPC-java: a server-streaming, a client-streaming and a bidirectional method on the
 * {@code byte[]} marshaller of {@link GrpcEcho}, written with the stub API and its flow control
 * as gRPC's own flow-control examples do: the server-streaming handler sends while
 * {@code isReady()} and resumes in the on-ready handler; the client-streaming handler leaves the
 * stub's automatic inbound flow control on (one message requested at a time, under the HTTP/2
 * window); the bidirectional echo requests the next message only while its responses can be sent.
 * On the client, each call is a {@code Flux} whose demand becomes {@code request(n)} on the call
 * (automatic requests off), and whose request stream is pulled one item at a time while the call
 * is ready: nothing is buffered beyond gRPC's own window.
 */
final class GrpcStreams {
    static final String SERVICE = "bench.Stream";

    static final MethodDescriptor<byte[], byte[]> ITEMS = method("Items", MethodDescriptor.MethodType.SERVER_STREAMING);
    static final MethodDescriptor<byte[], byte[]> UPLOAD = method("Upload", MethodDescriptor.MethodType.CLIENT_STREAMING);
    static final MethodDescriptor<byte[], byte[]> ECHO = method("Echo", MethodDescriptor.MethodType.BIDI_STREAMING);

    private GrpcStreams() {}

    private static MethodDescriptor<byte[], byte[]> method(String name, MethodDescriptor.MethodType type) {
        return MethodDescriptor.<byte[], byte[]>newBuilder()
                .setType(type)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, name))
                .setRequestMarshaller(GrpcEcho.BYTES)
                .setResponseMarshaller(GrpcEcho.BYTES)
                .build();
    }

    /** The service with the three streaming methods. */
    static ServerServiceDefinition service() {
        return ServerServiceDefinition.builder(SERVICE)
                .addMethod(ITEMS, ServerCalls.asyncServerStreamingCall((byte[] request, StreamObserver<byte[]> response) ->
                        new ItemSender((ServerCallStreamObserver<byte[]>) response, request).start()))
                .addMethod(UPLOAD, ServerCalls.asyncClientStreamingCall(response -> new StreamObserver<byte[]>() {
                    private long total;

                    @Override
                    public void onNext(byte[] chunk) {
                        total += chunk.length;
                    }

                    @Override
                    public void onError(Throwable error) {
                        // the client cancelled: nothing to answer
                    }

                    @Override
                    public void onCompleted() {
                        response.onNext(StreamProtocol.totalBytes(total));
                        response.onCompleted();
                    }
                }))
                .addMethod(ECHO, ServerCalls.asyncBidiStreamingCall(response ->
                        new Echo((ServerCallStreamObserver<byte[]>) response)))
                .build();
    }

    /**
     * Sends a server stream's items while the call is ready, and resumes when it is ready again.
     * gRPC runs the handler and its callbacks one at a time (its serializing executor).
     */
    private static final class ItemSender implements Runnable {
        private final ServerCallStreamObserver<byte[]> response;
        private final byte[] item;
        private long remaining;
        private boolean done;

        ItemSender(ServerCallStreamObserver<byte[]> response, byte[] request) {
            this.response = response;
            this.item = StreamProtocol.item(StreamProtocol.itemBytes(request));
            this.remaining = StreamProtocol.count(request);
        }

        void start() {
            response.setOnCancelHandler(() -> done = true);
            response.setOnReadyHandler(this);
            run();
        }

        @Override
        public void run() {
            while (!done && remaining > 0 && response.isReady()) {
                response.onNext(item);
                remaining--;
            }
            if (!done && remaining == 0) {
                done = true;
                response.onCompleted();
            }
        }
    }

    /** The bidirectional echo, with manual inbound flow control: no more requests than responses it can send. */
    private static final class Echo implements StreamObserver<byte[]> {
        private final ServerCallStreamObserver<byte[]> response;
        private boolean waitingForReady;

        Echo(ServerCallStreamObserver<byte[]> response) {
            this.response = response;
            response.disableAutoRequest();
            response.setOnReadyHandler(() -> {
                if (waitingForReady && response.isReady()) {
                    waitingForReady = false;
                    response.request(1);
                }
            });
            response.request(1);
        }

        @Override
        public void onNext(byte[] item) {
            response.onNext(item);
            if (response.isReady()) {
                response.request(1);
            } else {
                waitingForReady = true;
            }
        }

        @Override
        public void onError(Throwable error) {
            // the client cancelled
        }

        @Override
        public void onCompleted() {
            response.onCompleted();
        }
    }

    /** The client side of the three methods over one channel per server. */
    static EchoStreams client(Channel[] channels) {
        return new EchoStreams() {
            @Override
            public Flux<byte[]> serverStream(int target, int itemBytes, long count) {
                byte[] request = StreamProtocol.request(itemBytes, count);
                return Flux.create(sink -> new Call(sink, null).start(observer ->
                        ClientCalls.asyncServerStreamingCall(channels[target].newCall(ITEMS, CallOptions.DEFAULT), request,
                                observer)));
            }

            @Override
            public Mono<Long> upload(int target, Publisher<byte[]> chunks) {
                Flux<byte[]> answers = Flux.create(sink -> new Call(sink, chunks).start(observer ->
                        ClientCalls.asyncClientStreamingCall(channels[target].newCall(UPLOAD, CallOptions.DEFAULT), observer)));
                return answers.single().map(StreamProtocol::totalBytes);
            }

            @Override
            public Flux<byte[]> echo(int target, Publisher<byte[]> items) {
                return Flux.create(sink -> new Call(sink, items).start(observer ->
                        ClientCalls.asyncBidiStreamingCall(channels[target].newCall(ECHO, CallOptions.DEFAULT), observer)));
            }
        };
    }

    /**
     * One client call as a {@code Flux}: the subscriber's demand becomes {@code request(n)} on the
     * call; a request stream, if any, is pulled one item at a time while the call is ready
     * ({@code isReady()}, else its on-ready handler), then half-closed when it completes. The
     * call's methods are not thread-safe, so every use of it holds this object's lock.
     */
    private static final class Call implements ClientResponseObserver<byte[], byte[]> {
        private final FluxSink<byte[]> sink;
        private final @Nullable Publisher<byte[]> requests;
        private final RequestPump pump = new RequestPump();
        private @Nullable ClientCallStreamObserver<byte[]> call;
        /** An item of the request stream was asked for and has not arrived. */
        private boolean pulling;
        private boolean requestsDone;
        private boolean unbounded;

        Call(FluxSink<byte[]> sink, @Nullable Publisher<byte[]> requests) {
            this.sink = sink;
            this.requests = requests;
        }

        void start(Consumer<ClientResponseObserver<byte[], byte[]>> startCall) {
            startCall.accept(this);
            sink.onRequest(this::requestResponses);
            sink.onCancel(this::cancelCall);
            if (requests != null) {
                requests.subscribe(pump);
            }
        }

        @Override
        public synchronized void beforeStart(ClientCallStreamObserver<byte[]> requestStream) {
            call = requestStream;
            requestStream.disableAutoRequestWithInitial(0);
            if (requests != null) {
                requestStream.setOnReadyHandler(this::pull);
            }
        }

        private synchronized void requestResponses(long n) {
            if (unbounded || call == null) {
                return;
            }
            if (n >= Integer.MAX_VALUE) {
                unbounded = true;
            }
            call.request((int) Math.min(n, Integer.MAX_VALUE));
        }

        private void cancelCall() {
            synchronized (this) {
                requestsDone = true;
                if (call != null) {
                    call.cancel("cancelled by the subscriber", null);
                }
            }
            pump.cancel();
        }

        /** Asks the request stream for one item when the call can take it. */
        private synchronized void pull() {
            if (!pulling && !requestsDone && call != null && call.isReady()) {
                Subscription subscription = pump.subscription();
                if (subscription != null) {
                    pulling = true;
                    subscription.request(1);
                }
            }
        }

        /** Subscribes to the request stream and hands its items to the call. */
        private final class RequestPump extends BaseSubscriber<byte[]> {
            @Nullable Subscription subscription() {
                return upstream();
            }

            @Override
            protected void hookOnSubscribe(Subscription subscription) {
                pull();
            }

            @Override
            protected void hookOnNext(byte[] item) {
                synchronized (Call.this) {
                    pulling = false;
                    if (requestsDone || call == null) {
                        return;
                    }
                    call.onNext(item);
                }
                pull();
            }

            @Override
            protected void hookOnComplete() {
                synchronized (Call.this) {
                    if (requestsDone || call == null) {
                        return;
                    }
                    requestsDone = true;
                    call.onCompleted();
                }
            }

            @Override
            protected void hookOnError(Throwable error) {
                synchronized (Call.this) {
                    if (requestsDone || call == null) {
                        return;
                    }
                    requestsDone = true;
                    call.onError(error); // cancels the call
                }
                sink.error(error);
            }
        }

        // The responses: gRPC calls these one at a time.

        @Override
        public void onNext(byte[] value) {
            sink.next(value);
        }

        @Override
        public void onError(Throwable error) {
            synchronized (this) {
                requestsDone = true;
            }
            pump.cancel();
            sink.error(error);
        }

        @Override
        public void onCompleted() {
            synchronized (this) {
                requestsDone = true;
            }
            pump.cancel();
            sink.complete();
        }
    }
}
