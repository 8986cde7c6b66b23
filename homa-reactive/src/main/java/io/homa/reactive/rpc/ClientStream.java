package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.internal.rpc.FrameCodec;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * The client side of one stream call: turns the subscriber's demand into batch RPCs (open, then
 * next), one at a time, each asking for at most the outstanding demand, and emits the items.
 * Cancelling sends a cancel RPC. A channel (a call with a request stream) opens at subscription,
 * without items, and then runs a {@link ClientUpload} beside the batch RPCs. State is guarded by
 * {@code this}; sink signals happen outside it.
 */
final class ClientStream<T> {
    private static final Logger log = LoggerFactory.getLogger(ClientStream.class);

    private final HomaClient client;
    private final RpcCall call;
    private final PayloadCodec codec;
    private final long timeoutNs;
    private final long startNs;
    private final int batchSize;
    private final @Nullable Scheduler resultScheduler;
    private final FluxSink<T> sink;
    /** The channel's request stream, or {@code null} for a plain stream. */
    private final @Nullable Publisher<?> requestStream;
    /** The arguments sent in the open: all but the request stream. */
    private final @Nullable Object[] wireArguments;
    private @Nullable ClientUpload upload;

    private long demand;
    private boolean fetching;
    /** The stream ended here: completed, failed, timed out or cancelled. */
    private boolean done;
    private boolean cancelled;
    /** Set by the open response; 0 before. */
    private long streamId;
    /** Set when the service is resolved. */
    private @Nullable InetSocketAddress server;
    private @Nullable Disposable fetch;
    /** Counts batch RPCs, so a late {@link #drain} does not store a finished one as {@link #fetch}. */
    private long fetchNumber;
    private @Nullable Disposable deadlineTimer;

    /**
     * @param requestStreamIndex the position of the request stream among the call's arguments, or
     *     -1 for a plain stream
     */
    ClientStream(HomaClient client, RpcCall call, PayloadCodec codec, long timeoutNs, int batchSize,
                 @Nullable Scheduler resultScheduler, FluxSink<T> sink, int requestStreamIndex) {
        this.client = client;
        this.call = call;
        this.codec = codec;
        this.timeoutNs = timeoutNs;
        this.startNs = client.clock().nanoTime();
        this.batchSize = batchSize;
        this.resultScheduler = resultScheduler;
        this.sink = sink;
        @Nullable Object[] arguments = call.arguments();
        if (requestStreamIndex < 0) {
            this.requestStream = null;
            this.wireArguments = arguments;
        } else {
            this.requestStream = (Publisher<?>) arguments[requestStreamIndex];
            this.wireArguments = new Object[arguments.length - 1];
            for (int i = 0, j = 0; i < arguments.length; i++) {
                if (i != requestStreamIndex) {
                    this.wireArguments[j++] = arguments[i];
                }
            }
        }
    }

    void start() {
        if (timeoutNs > 0) {
            Disposable timer = Schedulers.parallel().schedule(this::expire, timeoutNs, TimeUnit.NANOSECONDS);
            synchronized (this) {
                deadlineTimer = timer;
            }
        }
        sink.onCancel(this::cancel);
        if (requestStream != null) {
            long number;
            synchronized (this) {
                fetching = true;
                number = ++fetchNumber;
            }
            send(0, 0, number);
        }
        sink.onRequest(this::request);
    }

    private void request(long n) {
        synchronized (this) {
            demand = demand + n < 0 ? Long.MAX_VALUE : demand + n;
        }
        drain();
    }

    /** Starts the next batch RPC if there is demand and none is in flight. */
    private void drain() {
        int count;
        long id;
        long number;
        synchronized (this) {
            if (fetching || done || demand == 0) {
                return;
            }
            fetching = true;
            number = ++fetchNumber;
            count = (int) Math.min(demand, batchSize);
            id = streamId;
        }
        send(count, id, number);
    }

    /** Sends one batch RPC: the open ({@code id} 0; a channel's asks for no items) or the next batch. */
    private void send(int count, long id, long number) {
        Mono<byte[]> exchange;
        if (id == 0 && requestStream != null) {
            exchange = client.resolve(call).flatMap(address -> {
                synchronized (this) {
                    server = address;
                }
                byte[] request = client.encodeRequest(call, codec, startNs, timeoutNs, Map.of(
                        RpcMetadata.STREAM, RpcMetadata.STREAM_OPEN,
                        RpcMetadata.STREAM_UPLOAD, "true"), codec.encodeArguments(wireArguments));
                return client.transport().call(address, request);
            });
        } else if (id == 0) {
            exchange = client.resolve(call).flatMap(address -> {
                synchronized (this) {
                    server = address;
                }
                byte[] request = client.encodeRequest(call, codec, startNs, timeoutNs, Map.of(
                        RpcMetadata.STREAM, RpcMetadata.STREAM_OPEN,
                        RpcMetadata.STREAM_REQUEST, Integer.toString(count)), codec.encodeArguments(wireArguments));
                return client.transport().call(address, request);
            });
        } else {
            InetSocketAddress address = currentServer();
            exchange = Mono.fromCallable(() -> client.encodeRequest(call, codec, startNs, timeoutNs, Map.of(
                            RpcMetadata.STREAM, RpcMetadata.STREAM_NEXT,
                            RpcMetadata.STREAM_ID, Long.toString(id),
                            RpcMetadata.STREAM_REQUEST, Integer.toString(count)), new byte[0]))
                    .flatMap(request -> client.transport().call(address, request));
        }
        if (resultScheduler != null) {
            exchange = exchange.publishOn(resultScheduler);
        }
        // The subscriber's Reactor Context (tracing, routing keys) reaches the resolver and the
        // transport call of every batch, as it does for unary calls.
        Disposable subscription = exchange.contextWrite(sink.contextView()).subscribe(this::onBatch, this::onFailure);
        synchronized (this) {
            if (fetching && fetchNumber == number) {
                fetch = subscription;
            }
        }
    }

    private synchronized InetSocketAddress currentServer() {
        InetSocketAddress address = server;
        if (address == null) {
            throw new IllegalStateException("stream " + streamId + " has no server");
        }
        return address;
    }

    private void onBatch(byte[] bytes) {
        RpcEnvelope.Response response;
        List<T> items;
        boolean startUpload = false;
        try {
            response = ClientErrors.decodeResponse(call, bytes);
            String id = response.metadata().get(RpcMetadata.STREAM_ID);
            if (id != null) {
                synchronized (this) {
                    if (streamId == 0) {
                        streamId = Long.parseLong(id);
                        if (requestStream != null && response.status() == HomaStatus.OK && !done) {
                            startUpload = true;
                        }
                    }
                }
            }
            items = decodeItems(response);
        } catch (RuntimeException e) {
            onFailure(e instanceof HomaException ? e : new HomaException(HomaStatus.INTERNAL,
                    "bad stream batch from " + call.fullMethodName() + ": " + e, e));
            return;
        }
        boolean end = "true".equals(response.metadata().get(RpcMetadata.STREAM_END))
                || response.status() != HomaStatus.OK;
        if (startUpload) {
            startUpload(response);
        }
        boolean sendCancel = false;
        synchronized (this) {
            fetch = null;
            fetching = false;
            if (done) {
                // cancelled (or expired) while this batch was in flight: tell the server unless it ended
                sendCancel = cancelled && !end && streamId != 0;
                items = List.of();
            } else if (demand != Long.MAX_VALUE) {
                demand -= items.size();
            }
            if (end) {
                done = true;
                dispose(deadlineTimer);
            }
        }
        if (end || sendCancel) {
            stopUpload();
        }
        if (sendCancel) {
            sendCancel();
            return;
        }
        for (T item : items) {
            sink.next(item);
        }
        if (end) {
            if (response.status() == HomaStatus.OK) {
                sink.complete();
            } else {
                sink.error(ClientErrors.remoteError(call, ClientErrors.remoteException(response), startNs, timeoutNs,
                        client.clock()));
            }
            return;
        }
        drain();
    }

    @SuppressWarnings("unchecked")
    private List<T> decodeItems(RpcEnvelope.Response response) {
        List<byte[]> frames = response.payload().length == 0 ? List.of() : FrameCodec.decodeFrames(response.payload());
        return (List<T>) FrameCodec.decodeItems(frames, codec, call.responseType(), HomaStatus.INTERNAL,
                call.fullMethodName());
    }

    private void onFailure(Throwable error) {
        boolean sendCancel;
        synchronized (this) {
            fetch = null;
            fetching = false;
            if (done) {
                return;
            }
            done = true;
            sendCancel = streamId != 0;
            dispose(deadlineTimer);
        }
        stopUpload();
        if (sendCancel) {
            sendCancel();
        }
        sink.error(error);
    }

    /** The subscriber cancelled. */
    private void cancel() {
        stopAndCancelServer();
    }

    /** The deadline passed. */
    private void expire() {
        if (stopAndCancelServer()) {
            sink.error(ClientErrors.deadlineExceeded(call, timeoutNs));
        }
    }

    /**
     * Ends the stream on this side (the subscriber cancelled or the deadline passed) and tells
     * the server to cancel its Flux.
     *
     * @return false when the stream had already ended
     */
    private boolean stopAndCancelServer() {
        boolean sendCancel;
        synchronized (this) {
            if (done) {
                return false;
            }
            done = true;
            cancelled = true;
            dispose(deadlineTimer);
            // with an open in flight the id is still unknown: onBatch sends the cancel when it arrives
            sendCancel = streamId != 0;
            if (sendCancel) {
                dispose(fetch);
                fetch = null;
            }
        }
        stopUpload();
        if (sendCancel) {
            sendCancel();
        }
        return true;
    }

    /** After the channel's open: pushes the request stream with the credit the open granted. */
    private void startUpload(RpcEnvelope.Response open) {
        long credit;
        try {
            credit = Long.parseLong(open.metadata().getOrDefault(RpcMetadata.STREAM_CREDIT, "0"));
        } catch (NumberFormatException e) {
            credit = 0;
        }
        ClientUpload created;
        synchronized (this) {
            if (done || upload != null || requestStream == null) {
                return;
            }
            created = new ClientUpload(this, client, call, codec, currentServer(), streamId, startNs, timeoutNs,
                    batchSize, RpcDispatcher.DEFAULT_STREAM_BATCH_BYTES, RpcDispatcher.DEFAULT_STREAM_BATCH_LINGER.toNanos(),
                    requestStream, Context.of(sink.contextView()), Math.max(0, credit));
            upload = created;
        }
        created.start();
    }

    private void stopUpload() {
        ClientUpload current;
        synchronized (this) {
            current = upload;
        }
        if (current != null) {
            current.stop();
        }
    }

    /**
     * The request stream failed (its source signalled an error, pushed to the server first) or a
     * push failed: the call fails with {@code error} and the server's stream is cancelled.
     */
    void requestStreamFailed(Throwable error) {
        onFailure(error);
    }

    /** Fire and forget: the server cancels its subscription to the method's Flux. */
    private void sendCancel() {
        long id;
        InetSocketAddress address;
        synchronized (this) {
            id = streamId;
            address = server;
        }
        if (id == 0 || address == null) {
            return;
        }
        byte[] request;
        try {
            request = client.encodeRequest(call, codec, startNs, 0, Map.of(
                    RpcMetadata.STREAM, RpcMetadata.STREAM_CANCEL,
                    RpcMetadata.STREAM_ID, Long.toString(id)), new byte[0]);
        } catch (RuntimeException e) {
            log.debug("cannot encode the cancel of stream {} of {}", id, call.fullMethodName(), e);
            return;
        }
        client.transport().call(address, request).subscribe(
                bytes -> {},
                error -> log.debug("cancel of stream {} of {} failed: {}", id, call.fullMethodName(), error.toString()));
    }

    private static void dispose(@Nullable Disposable disposable) {
        if (disposable != null) {
            disposable.dispose();
        }
    }
}
