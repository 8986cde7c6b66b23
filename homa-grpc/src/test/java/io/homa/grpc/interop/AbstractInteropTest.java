package io.homa.grpc.interop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The gRPC interop cases, as grpc's interop test descriptions define them, one test method per
 * case, named after it. A subclass supplies the transport (a server for the given service and a
 * channel to it), so the same case code runs over Homa and, as a control, over grpc-netty.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class AbstractInteropTest {
    /** Generous: the machine is shared; a case that hangs fails at this deadline, not at the test timeout. */
    private static final long WAIT_SECONDS = 60;

    private static final Metadata.Key<String> ECHO_INITIAL = InteropTestService.ECHO_INITIAL;
    private static final Metadata.Key<byte[]> ECHO_TRAILING = InteropTestService.ECHO_TRAILING;

    private ManagedChannel channel;
    private TestServiceGrpc.TestServiceBlockingStub blockingStub;
    private TestServiceGrpc.TestServiceStub asyncStub;

    /** Starts a server of {@code service} on 127.0.0.1 at an ephemeral port; returns a channel to it. */
    protected abstract ManagedChannel start(ServerServiceDefinition service) throws Exception;

    /** Shuts down the channel's transport and the server that {@link #start} made. */
    protected abstract void stop() throws Exception;

    @BeforeEach
    void startTransport() throws Exception {
        channel = start(InteropTestService.definition());
        blockingStub = TestServiceGrpc.newBlockingStub(channel).withDeadlineAfter(WAIT_SECONDS, TimeUnit.SECONDS);
        asyncStub = TestServiceGrpc.newStub(channel).withDeadlineAfter(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    @AfterEach
    void stopTransport() throws Exception {
        stop();
    }

    @Test
    void emptyUnary() {
        Empty response = blockingStub.emptyCall(Empty.getDefaultInstance());

        assertThat(response).isEqualTo(Empty.getDefaultInstance());
    }

    @Test
    void largeUnary() {
        SimpleResponse response = blockingStub.unaryCall(SimpleRequest.newBuilder()
                .setResponseSize(314159)
                .setPayload(InteropTestService.zeros(271828))
                .build());

        assertThat(response.getPayload().getBody()).isEqualTo(ByteString.copyFrom(new byte[314159]));
    }

    @Test
    void clientStreaming() throws Exception {
        Recorder<StreamingInputCallResponse> responses = new Recorder<>();
        StreamObserver<StreamingInputCallRequest> requests = asyncStub.streamingInputCall(responses);
        for (int size : new int[] {27182, 8, 1828, 45904}) {
            requests.onNext(StreamingInputCallRequest.newBuilder().setPayload(InteropTestService.zeros(size)).build());
        }
        requests.onCompleted();

        responses.awaitCompletion();
        assertThat(responses.values).hasSize(1);
        assertThat(responses.values.take().getAggregatedPayloadSize()).isEqualTo(74922);
    }

    @Test
    void serverStreaming() {
        StreamingOutputCallRequest request = streamingRequest(new int[] {31415, 9, 2653, 58979}, 0);

        List<Integer> sizes = new ArrayList<>();
        Iterator<StreamingOutputCallResponse> responses = blockingStub.streamingOutputCall(request);
        responses.forEachRemaining(response -> sizes.add(response.getPayload().getBody().size()));

        assertThat(sizes).containsExactly(31415, 9, 2653, 58979);
    }

    @Test
    void pingPong() throws Exception {
        int[] responseSizes = {31415, 9, 2653, 58979};
        int[] requestSizes = {27182, 8, 1828, 45904};
        Recorder<StreamingOutputCallResponse> responses = new Recorder<>();
        StreamObserver<StreamingOutputCallRequest> requests = asyncStub.fullDuplexCall(responses);

        for (int i = 0; i < responseSizes.length; i++) {
            requests.onNext(streamingRequest(new int[] {responseSizes[i]}, requestSizes[i]));
            // A ping waits for its pong: the case checks one exchange at a time, in order.
            assertThat(responses.next().getPayload().getBody().size()).isEqualTo(responseSizes[i]);
        }
        requests.onCompleted();

        responses.awaitCompletion();
        assertThat(responses.values).isEmpty();
    }

    @Test
    void emptyStream() throws Exception {
        Recorder<StreamingOutputCallResponse> responses = new Recorder<>();
        StreamObserver<StreamingOutputCallRequest> requests = asyncStub.fullDuplexCall(responses);
        requests.onCompleted();

        responses.awaitCompletion();
        assertThat(responses.values).isEmpty();
    }

    @Test
    void cancelAfterBegin() {
        Recorder<StreamingInputCallResponse> responses = new Recorder<>();
        StreamObserver<StreamingInputCallRequest> requests = asyncStub.streamingInputCall(responses);
        // A client stub's onError cancels the call, before any message was sent.
        requests.onError(new RuntimeException("cancel_after_begin"));

        assertThat(responses.awaitError().getCode()).isEqualTo(Status.Code.CANCELLED);
        assertThat(responses.values).isEmpty();
    }

    @Test
    void cancelAfterFirstResponse() throws Exception {
        Recorder<StreamingOutputCallResponse> responses = new Recorder<>();
        StreamObserver<StreamingOutputCallRequest> requests = asyncStub.fullDuplexCall(responses);
        requests.onNext(streamingRequest(new int[] {31415}, 27182));
        assertThat(responses.next().getPayload().getBody().size()).isEqualTo(31415);

        requests.onError(new RuntimeException("cancel_after_first_response"));

        assertThat(responses.awaitError().getCode()).isEqualTo(Status.Code.CANCELLED);
    }

    @Test
    void timeoutOnSleepingServer() {
        Recorder<StreamingOutputCallResponse> responses = new Recorder<>();
        // The server answers nothing to a request without response parameters: it "sleeps" past the deadline.
        StreamObserver<StreamingOutputCallRequest> requests = TestServiceGrpc.newStub(channel)
                .withDeadlineAfter(1, TimeUnit.MILLISECONDS)
                .fullDuplexCall(responses);
        try {
            requests.onNext(streamingRequest(new int[0], 27182));
        } catch (IllegalStateException alreadyOver) {
            // The deadline may end the call before the message is sent; grpc's description allows it.
        }

        assertThat(responses.awaitError().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        assertThat(responses.values).isEmpty();
    }

    @Test
    void customMetadata() throws Exception {
        Metadata headers = new Metadata();
        headers.put(ECHO_INITIAL, "test_initial_metadata_value");
        byte[] trailingValue = {(byte) 0xab, (byte) 0xab, (byte) 0xab};
        headers.put(ECHO_TRAILING, trailingValue);

        // Unary.
        AtomicReference<Metadata> unaryHeaders = new AtomicReference<>();
        AtomicReference<Metadata> unaryTrailers = new AtomicReference<>();
        SimpleResponse unary = blockingStub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers),
                        MetadataUtils.newCaptureMetadataInterceptor(unaryHeaders, unaryTrailers))
                .unaryCall(SimpleRequest.newBuilder()
                        .setResponseSize(314159)
                        .setPayload(InteropTestService.zeros(271828))
                        .build());

        assertThat(unary.getPayload().getBody().size()).isEqualTo(314159);
        assertThat(unaryHeaders.get().get(ECHO_INITIAL)).isEqualTo("test_initial_metadata_value");
        assertThat(unaryTrailers.get().get(ECHO_TRAILING)).isEqualTo(trailingValue);

        // Full duplex.
        AtomicReference<Metadata> duplexHeaders = new AtomicReference<>();
        AtomicReference<Metadata> duplexTrailers = new AtomicReference<>();
        Recorder<StreamingOutputCallResponse> responses = new Recorder<>();
        StreamObserver<StreamingOutputCallRequest> requests = asyncStub
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers),
                        MetadataUtils.newCaptureMetadataInterceptor(duplexHeaders, duplexTrailers))
                .fullDuplexCall(responses);
        requests.onNext(streamingRequest(new int[] {314159}, 271828));
        requests.onCompleted();

        responses.awaitCompletion();
        assertThat(responses.values).hasSize(1);
        assertThat(responses.values.take().getPayload().getBody().size()).isEqualTo(314159);
        assertThat(duplexHeaders.get().get(ECHO_INITIAL)).isEqualTo("test_initial_metadata_value");
        assertThat(duplexTrailers.get().get(ECHO_TRAILING)).isEqualTo(trailingValue);
    }

    @Test
    void statusCodeAndMessage() {
        EchoStatus status = EchoStatus.newBuilder().setCode(2).setMessage("test status message").build();

        // Unary.
        assertThatThrownBy(() -> blockingStub.unaryCall(SimpleRequest.newBuilder().setResponseStatus(status).build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNKNOWN);
                    assertThat(e.getStatus().getDescription()).isEqualTo("test status message");
                });

        // Full duplex.
        Recorder<StreamingOutputCallResponse> responses = new Recorder<>();
        StreamObserver<StreamingOutputCallRequest> requests = asyncStub.fullDuplexCall(responses);
        requests.onNext(StreamingOutputCallRequest.newBuilder().setResponseStatus(status).build());
        requests.onCompleted();

        Status duplex = responses.awaitError();
        assertThat(duplex.getCode()).isEqualTo(Status.Code.UNKNOWN);
        assertThat(duplex.getDescription()).isEqualTo("test status message");
    }

    @Test
    void specialStatusMessage() {
        String message = "\t\ntest with whitespace\r\nand Unicode BMP \u263A and non-BMP \uD83D\uDE08\t\n";
        EchoStatus status = EchoStatus.newBuilder().setCode(2).setMessage(message).build();

        assertThatThrownBy(() -> blockingStub.unaryCall(SimpleRequest.newBuilder().setResponseStatus(status).build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNKNOWN);
                    assertThat(e.getStatus().getDescription()).isEqualTo(message);
                });
    }

    @Test
    void unimplementedMethod() {
        assertThatThrownBy(() -> blockingStub.unimplementedCall(Empty.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));
    }

    @Test
    void unimplementedService() {
        UnimplementedServiceGrpc.UnimplementedServiceBlockingStub stub = UnimplementedServiceGrpc
                .newBlockingStub(channel).withDeadlineAfter(WAIT_SECONDS, TimeUnit.SECONDS);

        assertThatThrownBy(() -> stub.unimplementedCall(Empty.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));
    }

    private static StreamingOutputCallRequest streamingRequest(int[] responseSizes, int payloadSize) {
        StreamingOutputCallRequest.Builder request = StreamingOutputCallRequest.newBuilder();
        for (int size : responseSizes) {
            request.addResponseParameters(ResponseParameters.newBuilder().setSize(size));
        }
        if (payloadSize > 0) {
            request.setPayload(InteropTestService.zeros(payloadSize));
        }
        return request.build();
    }

    /** What a response observer received: the messages in order, and how the call ended. */
    private static final class Recorder<T> implements StreamObserver<T> {
        final BlockingQueue<T> values = new LinkedBlockingQueue<>();
        final CompletableFuture<Void> done = new CompletableFuture<>();

        @Override
        public void onNext(T value) {
            values.add(value);
        }

        @Override
        public void onError(Throwable t) {
            done.completeExceptionally(t);
        }

        @Override
        public void onCompleted() {
            done.complete(null);
        }

        /** The next message; fails if the call ended or nothing came in time. */
        T next() throws InterruptedException {
            T value = values.poll(WAIT_SECONDS, TimeUnit.SECONDS);
            assertThat(value).as("a response within %d s (call ended: %s)", WAIT_SECONDS, done).isNotNull();
            return value;
        }

        void awaitCompletion() throws Exception {
            done.get(WAIT_SECONDS, TimeUnit.SECONDS);
        }

        Status awaitError() {
            assertThatThrownBy(() -> done.get(WAIT_SECONDS, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
            return Status.fromThrowable(done.handle((ok, error) -> error).join());
        }
    }
}
