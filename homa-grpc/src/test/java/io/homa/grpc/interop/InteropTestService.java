package io.homa.grpc.interop;

import com.google.protobuf.ByteString;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;

/**
 * The server side of the interop cases: {@code TestService} as grpc's interop descriptions ask of
 * it, with {@code UnimplementedCall} left to the generated base (UNIMPLEMENTED), and the metadata
 * echo that custom_metadata checks done by an interceptor, so that every method gets it.
 */
final class InteropTestService extends TestServiceGrpc.TestServiceImplBase {
    static final Metadata.Key<String> ECHO_INITIAL =
            Metadata.Key.of("x-grpc-test-echo-initial", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<byte[]> ECHO_TRAILING =
            Metadata.Key.of("x-grpc-test-echo-trailing-bin", Metadata.BINARY_BYTE_MARSHALLER);

    /** The service as a server registers it: only TestService, so UnimplementedService is unknown to it. */
    static ServerServiceDefinition definition() {
        return ServerInterceptors.intercept(new InteropTestService(), new EchoMetadata());
    }

    @Override
    public void emptyCall(Empty request, StreamObserver<Empty> responseObserver) {
        responseObserver.onNext(Empty.getDefaultInstance());
        responseObserver.onCompleted();
    }

    @Override
    public void unaryCall(SimpleRequest request, StreamObserver<SimpleResponse> responseObserver) {
        if (failsWith(request.getResponseStatus(), responseObserver)) {
            return;
        }
        responseObserver.onNext(SimpleResponse.newBuilder().setPayload(zeros(request.getResponseSize())).build());
        responseObserver.onCompleted();
    }

    @Override
    public void streamingOutputCall(StreamingOutputCallRequest request,
                                    StreamObserver<StreamingOutputCallResponse> responseObserver) {
        if (failsWith(request.getResponseStatus(), responseObserver)) {
            return;
        }
        respond(request, responseObserver);
        responseObserver.onCompleted();
    }

    @Override
    public StreamObserver<StreamingInputCallRequest> streamingInputCall(
            StreamObserver<StreamingInputCallResponse> responseObserver) {
        return new StreamObserver<>() {
            private int aggregatedBytes;

            @Override
            public void onNext(StreamingInputCallRequest request) {
                aggregatedBytes += request.getPayload().getBody().size();
            }

            @Override
            public void onError(Throwable t) {
                // The client cancelled (cancel_after_begin): nothing left to answer.
            }

            @Override
            public void onCompleted() {
                responseObserver.onNext(StreamingInputCallResponse.newBuilder()
                        .setAggregatedPayloadSize(aggregatedBytes).build());
                responseObserver.onCompleted();
            }
        };
    }

    @Override
    public StreamObserver<StreamingOutputCallRequest> fullDuplexCall(
            StreamObserver<StreamingOutputCallResponse> responseObserver) {
        return new StreamObserver<>() {
            private boolean closed;

            @Override
            public void onNext(StreamingOutputCallRequest request) {
                if (closed) {
                    return;
                }
                closed = failsWith(request.getResponseStatus(), responseObserver);
                if (!closed) {
                    respond(request, responseObserver);
                }
            }

            @Override
            public void onError(Throwable t) {
                // Cancelled by the client or by the deadline: the call is over.
            }

            @Override
            public void onCompleted() {
                if (!closed) {
                    responseObserver.onCompleted();
                }
            }
        };
    }

    @Override
    public StreamObserver<StreamingOutputCallRequest> halfDuplexCall(
            StreamObserver<StreamingOutputCallResponse> responseObserver) {
        return new StreamObserver<>() {
            private final List<StreamingOutputCallRequest> requests = new ArrayList<>();

            @Override
            public void onNext(StreamingOutputCallRequest request) {
                requests.add(request);
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
                requests.forEach(request -> respond(request, responseObserver));
                responseObserver.onCompleted();
            }
        };
    }

    private static void respond(StreamingOutputCallRequest request,
                                StreamObserver<StreamingOutputCallResponse> responseObserver) {
        for (ResponseParameters parameters : request.getResponseParametersList()) {
            responseObserver.onNext(StreamingOutputCallResponse.newBuilder()
                    .setPayload(zeros(parameters.getSize())).build());
        }
    }

    /** Closes the call with the status the request asks for, if it asks for one other than OK. */
    private static boolean failsWith(EchoStatus status, StreamObserver<?> responseObserver) {
        if (status.getCode() == Status.Code.OK.value()) {
            return false;
        }
        responseObserver.onError(Status.fromCodeValue(status.getCode())
                .withDescription(status.getMessage()).asRuntimeException());
        return true;
    }

    static Payload zeros(int size) {
        return Payload.newBuilder().setBody(ByteString.copyFrom(new byte[size])).build();
    }

    /**
     * Copies the client's {@code x-grpc-test-echo-initial} into the response headers and its
     * {@code x-grpc-test-echo-trailing-bin} into the trailers, whatever the method and its status.
     */
    private static final class EchoMetadata implements ServerInterceptor {
        @Override
        public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                     ServerCallHandler<ReqT, RespT> next) {
            String initial = headers.get(ECHO_INITIAL);
            byte[] trailing = headers.get(ECHO_TRAILING);
            return next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                @Override
                public void sendHeaders(Metadata responseHeaders) {
                    if (initial != null) {
                        responseHeaders.put(ECHO_INITIAL, initial);
                    }
                    super.sendHeaders(responseHeaders);
                }

                @Override
                public void close(Status status, Metadata trailers) {
                    if (trailing != null) {
                        trailers.put(ECHO_TRAILING, trailing);
                    }
                    super.close(status, trailers);
                }
            }, headers);
        }
    }
}
