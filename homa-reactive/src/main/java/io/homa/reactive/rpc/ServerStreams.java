package io.homa.reactive.rpc;

import static io.homa.reactive.rpc.MethodInvoker.checkDeadline;
import static io.homa.reactive.rpc.MethodInvoker.deadlineNs;
import static io.homa.reactive.rpc.MethodInvoker.decodeArguments;
import static io.homa.reactive.rpc.MethodInvoker.invoke;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.internal.rpc.EnvelopeCodec;
import java.lang.reflect.Type;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A dispatcher's open streams: opening one (a streaming method, or a channel with its request
 * stream, {@link ServerUpload}), the batch RPCs that fetch from it, push to it or cancel it, and
 * the table of those still open, by stream id. Each open stream counts as a call in flight until
 * it ends.
 */
final class ServerStreams {
    private final RpcDispatcher owner;
    private final MethodTable methods;
    private final Map<Long, ServerStream> streams = new ConcurrentHashMap<>();

    ServerStreams(RpcDispatcher owner, MethodTable methods) {
        this.owner = owner;
        this.methods = methods;
    }

    /** Opens the stream {@code call} asks for and answers its first batch (a channel: its grant). */
    Mono<RpcEnvelope.Response> open(ServerCall call, EnvelopeCodec.RequestView envelope, PayloadCodec codec,
            long arrivalNs, boolean onScheduler) {
        RpcMethod method = methods.method(call);
        boolean channel = "true".equals(call.metadata().get(RpcMetadata.STREAM_UPLOAD));
        if (channel != method.kind().hasRequestStream()) {
            throw new HomaException(HomaStatus.FAILED_PRECONDITION, channel
                    ? call.fullMethodName() + " takes no request stream; call it with HomaClient.stream"
                    : call.fullMethodName() + " takes a request stream (a Flux parameter); call it with HomaClient.channel");
        }
        long deadlineNs = deadlineNs(call, arrivalNs);
        @Nullable Object[] wireArguments = decodeArguments(method, codec, envelope);
        int request = channel ? 0 : streamRequest(call, 1);
        ServerUpload upload = null;
        @Nullable Object[] arguments = wireArguments;
        if (channel) {
            Type elementType = Objects.requireNonNull(method.requestElementType());
            upload = new ServerUpload(call.fullMethodName(), elementType, codec, owner.streamWindowBytes(),
                    owner.streamBatchBytes(), "true".equals(call.metadata().get(RpcMetadata.STREAM_AHEAD)));
            arguments = withRequestStream(wireArguments, method.requestStreamIndex(), Flux.from(upload));
        }
        @Nullable Object[] invokeWith = arguments;
        long id;
        ServerStream stream;
        do {
            id = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
            stream = new ServerStream(owner, id, call, codec, deadlineNs, owner.streamBatchBytes(),
                    owner.streamWindowBytes(), owner.streamBatchLinger().toNanos(), owner.streamIdleTimeout().toNanos(),
                    upload);
        } while (streams.putIfAbsent(id, stream) != null);
        owner.enter();
        Flux<?> items = Flux.defer(() -> {
                    checkDeadline(call, deadlineNs, owner.clock());
                    return Flux.from(invoke(method, invokeWith));
                });
        items = items.contextWrite(reactor.util.context.Context.of(HomaCallContext.class, new HomaCallContext(call)));
        if (method.blocking() && !onScheduler) {
            items = items.subscribeOn(owner.scheduler());
        }
        stream.start(items);
        if (channel) {
            return Mono.just(stream.openResponse());
        }
        ServerStream opened = stream;
        return stream.fetch(request, -1, eager(call)).map(opened::withWindow);
    }

    /** A batch RPC asking an open stream for its next items. */
    Mono<RpcEnvelope.Response> next(ServerCall call) {
        // 0 items: a watch for the end (RpcMetadata.STREAM_WATCH), held by the stream
        int count = streamRequest(call, 0);
        long seq = streamSeq(call);
        return existing(call).fetch(count, seq, eager(call));
    }

    /** A batch RPC carrying the next items of a channel's request stream. */
    Mono<RpcEnvelope.Response> push(ServerCall call, EnvelopeCodec.RequestView envelope) {
        long seq = streamSeq(call);
        return existing(call).push(envelope.payload(),
                "true".equals(call.metadata().get(RpcMetadata.STREAM_END)), pushFailure(call), seq);
    }

    /** The client cancelling a stream: answered OK whether or not it was still open. */
    Mono<RpcEnvelope.Response> cancel(ServerCall call) {
        ServerStream stream = streams.get(streamId(call));
        if (stream != null && stream.matches(call)) {
            stream.cancel(new HomaException(HomaStatus.CANCELLED, "stream cancelled by the client"));
        }
        return Mono.just(RpcEnvelope.Response.ok(new byte[0]));
    }

    /** Cancels every open stream with {@code error} (the dispatcher aborts). */
    void cancelAll(HomaException error) {
        for (ServerStream stream : List.copyOf(streams.values())) {
            stream.cancel(error);
        }
    }

    /** Called once by a stream when it ends (delivered its end, cancelled or expired). */
    void ended(ServerStream stream) {
        if (streams.remove(stream.id(), stream)) {
            owner.exit();
        }
    }

    private ServerStream existing(ServerCall call) {
        long id = streamId(call);
        ServerStream stream = streams.get(id);
        if (stream == null || !stream.matches(call)) {
            throw new HomaException(HomaStatus.NOT_FOUND, "no open stream " + id + " of " + call.fullMethodName()
                    + " (it ended, was cancelled, or was idle for more than " + owner.streamIdleTimeout().toMillis()
                    + " ms)");
        }
        return stream;
    }

    /** The wire arguments with the request stream inserted at {@code index}. */
    private static @Nullable Object[] withRequestStream(@Nullable Object[] wire, int index, Flux<Object> requestStream) {
        @Nullable Object[] arguments = new Object[wire.length + 1];
        for (int i = 0, j = 0; i < arguments.length; i++) {
            arguments[i] = i == index ? requestStream : wire[j++];
        }
        return arguments;
    }

    /** The request stream's failure a push reports ({@link RpcMetadata#STREAM_ERROR_STATUS}), or {@code null}. */
    private static @Nullable HomaRemoteException pushFailure(ServerCall call) {
        String status = call.metadata().get(RpcMetadata.STREAM_ERROR_STATUS);
        if (status == null) {
            return null;
        }
        HomaStatus parsed;
        try {
            parsed = HomaStatus.valueOf(status);
        } catch (IllegalArgumentException e) {
            parsed = HomaStatus.UNKNOWN;
        }
        if (parsed == HomaStatus.OK) {
            parsed = HomaStatus.UNKNOWN;
        }
        String message = call.metadata().getOrDefault(RpcMetadata.STREAM_ERROR_MESSAGE, "");
        return new HomaRemoteException(parsed, "the client's request stream failed: " + message,
                call.metadata().get(RpcMetadata.ERROR_TYPE));
    }

    private static boolean eager(ServerCall call) {
        return "true".equals(call.metadata().get(RpcMetadata.STREAM_EAGER));
    }

    private static int streamRequest(ServerCall call, int least) {
        String value = call.metadata().get(RpcMetadata.STREAM_REQUEST);
        try {
            int request = Integer.parseInt(String.valueOf(value));
            if (request >= least && request <= RpcDispatcher.MAX_STREAM_REQUEST) {
                return request;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new HomaException(HomaStatus.INVALID_ARGUMENT, "metadata " + RpcMetadata.STREAM_REQUEST
                + " must be " + least + " to " + RpcDispatcher.MAX_STREAM_REQUEST + ", was '" + value + "'");
    }

    /** The request's {@link RpcMetadata#STREAM_SEQ}, or -1 when it names none (the next in order). */
    private static long streamSeq(ServerCall call) {
        String value = call.metadata().get(RpcMetadata.STREAM_SEQ);
        if (value == null) {
            return -1;
        }
        try {
            long seq = Long.parseLong(value);
            if (seq >= 1) {
                return seq;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                "metadata " + RpcMetadata.STREAM_SEQ + " must be a positive whole number, was '" + value + "'");
    }

    private static long streamId(ServerCall call) {
        String value = call.metadata().get(RpcMetadata.STREAM_ID);
        try {
            return Long.parseLong(String.valueOf(value));
        } catch (NumberFormatException e) {
            throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                    "metadata " + RpcMetadata.STREAM_ID + " must be a stream id, was '" + value + "'");
        }
    }
}
