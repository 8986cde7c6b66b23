package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.internal.rpc.EnvelopeCodec;
import io.homa.reactive.internal.rpc.FrameCodec;
import io.netty.buffer.ByteBuf;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
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
 * next), each asking for a part of the outstanding demand, and emits the items in order. Once the
 * open's answer names the server's window ({@link RpcMetadata#STREAM_WINDOW_BYTES}), several batch
 * RPCs are in flight at once, as many as the smaller of the two windows holds batches of the
 * server's batch limit: they are numbered ({@link RpcMetadata#STREAM_SEQ}) and their answers, which
 * may arrive in any order, are taken in that order, an early one waiting for those before it.
 * Together they ask for the subscriber's outstanding demand and, once the items' size is known, one
 * more of its largest requests within the window, in batch RPCs of their own (so that a batch for
 * what the subscriber wants is never held for more); the items that arrive ahead of the demand
 * wait in the sink, so the subscriber finds its next items here, not a round trip away. Cancelling sends a cancel
 * RPC. A channel (a call with a request stream) opens at subscription, without items, and then
 * runs a {@link ClientUpload} beside the batch RPCs. State is guarded by {@code this}; sink
 * signals happen outside it, from one thread at a time.
 */
final class ClientStream<T> {
    private static final Logger log = LoggerFactory.getLogger(ClientStream.class);
    /** The least a batch RPC asks for, in bytes of items, when it spreads the demand over the window. */
    static final long MIN_SPLIT_BYTES = 128 * 1024;

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

    /** Items the subscriber asked for and did not get yet (negative: items got ahead of its demand, waiting in the sink). */
    private long demand;
    /** The most the subscriber asked for at once: how far beyond its demand the batch RPCs may ask. */
    private long largestRequest;
    /** Items the batch RPCs in flight ask for together. */
    private long asked;
    /** The stream ended here: completed, failed, timed out or cancelled. */
    private boolean done;
    private boolean cancelled;
    /** Set by the open response; 0 before. */
    private long streamId;
    /** Set when the service is resolved. */
    private @Nullable InetSocketAddress server;
    /** Batch RPCs in flight at most: 1 until the open's answer names the window, then what the server takes. */
    private int windowBatches = 1;
    /** The bytes the batch RPCs in flight ask for together (see {@link #batchBytes}). */
    private long askedBytes;
    /** Bytes of pushes in flight at most (the channel's request stream): 0 until the open's answer names the window. */
    private long windowBytes;
    /** Pushes in flight at most: what the server takes. */
    private int windowPushes = 1;
    /** The server's batch limit in bytes, 0 while unknown. */
    private long serverBatchBytes;
    /** Bytes per item (frame included) of the latest answer with items, 0 before. */
    private long perItemBytes;
    /** Most items a batch RPC asks for: those that fit in the server's batch limit, as far as seen. */
    private int itemsPerBatch;
    /** The number of the next batch RPC: 0 is the open. */
    private long nextSeq;
    /** The server holds a batch request for 0 items until the end ({@link RpcMetadata#STREAM_WATCH}). */
    private boolean serverWatches;
    /** The number of the watch for the end in flight, or -1: it does not count against the window. */
    private long watchSeq = -1;
    /** The number of the next answer to take. */
    private long takeSeq;
    /** The batch RPCs not taken yet, by number. */
    private final TreeMap<Long, Fetch> fetches = new TreeMap<>();
    /** Answers that came before one numbered lower, by number. */
    private final TreeMap<Long, Answer<T>> arrived = new TreeMap<>();
    /** A thread is emitting answers. */
    private boolean emitting;
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
        this.itemsPerBatch = batchSize;
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
            synchronized (this) {
                nextSeq = 1;
                fetches.put(0L, new Fetch(0, 0));
            }
            send(0, 0, 0);
        }
        sink.onRequest(this::request);
    }

    private void request(long n) {
        synchronized (this) {
            // demand may be negative (items ahead of it in the sink): only a positive one overflows
            demand = demand == Long.MAX_VALUE || (demand > 0 && demand + n < 0) ? Long.MAX_VALUE : demand + n;
            largestRequest = Math.max(largestRequest, n);
        }
        drain();
    }

    /**
     * Starts batch RPCs while there is demand no RPC asks for yet and the window has room; with no
     * demand and none in flight, a watch for the end (a batch request for 0 items), so that the
     * end reaches a subscriber that asked for exactly what the stream had.
     */
    private void drain() {
        while (true) {
            int count;
            long id;
            long seq;
            synchronized (this) {
                long unasked = demand - asked;
                boolean opened = streamId != 0;
                if (done || (nextSeq > 0 && !opened)) {
                    return;
                }
                long unaskedAhead = unasked + aheadItems();
                if (unasked <= 0 && opened && unaskedAhead > 0 && freeBatches() > 0) {
                    // beyond the demand in batch RPCs of their own: a batch asked for what the
                    // subscriber wants is answered as soon as it holds that, never held for more
                    count = splitCount(unaskedAhead);
                } else if (unasked <= 0) {
                    if (!opened || !serverWatches || !fetches.isEmpty()) {
                        return;
                    }
                    count = 0;
                    watchSeq = nextSeq;
                } else if (freeBatches() == 0) {
                    return;
                } else {
                    count = splitCount(unasked);
                }
                seq = nextSeq++;
                id = streamId;
                asked += count;
                long bytes = count == 0 ? 0 : batchBytes(count);
                askedBytes += bytes;
                fetches.put(seq, new Fetch(count, bytes));
            }
            send(count, id, seq);
        }
    }

    /** Sends one batch RPC: the open ({@code seq} 0; a channel's asks for no items) or the next batch. */
    private void send(int count, long id, long seq) {
        Mono<byte[]> exchange;
        if (seq == 0 && requestStream != null) {
            exchange = client.resolve(call).flatMap(address -> {
                synchronized (this) {
                    server = address;
                }
                byte[] request = client.encodeRequest(call, codec, startNs, timeoutNs, Map.of(
                        RpcMetadata.STREAM, RpcMetadata.STREAM_OPEN,
                        RpcMetadata.STREAM_UPLOAD, "true",
                        RpcMetadata.STREAM_AHEAD, "true"), codec.encodeArguments(wireArguments));
                return client.transport().call(address, request);
            });
        } else if (seq == 0) {
            exchange = client.resolve(call).flatMap(address -> {
                synchronized (this) {
                    server = address;
                }
                byte[] request = client.encodeRequest(call, codec, startNs, timeoutNs, eager(Map.of(
                        RpcMetadata.STREAM, RpcMetadata.STREAM_OPEN,
                        RpcMetadata.STREAM_REQUEST, Integer.toString(count))), codec.encodeArguments(wireArguments));
                return client.transport().call(address, request);
            });
        } else {
            InetSocketAddress address = currentServer();
            exchange = Mono.fromCallable(() -> client.encodeRequest(call, codec, startNs, timeoutNs, eager(Map.of(
                            RpcMetadata.STREAM, RpcMetadata.STREAM_NEXT,
                            RpcMetadata.STREAM_ID, Long.toString(id),
                            RpcMetadata.STREAM_REQUEST, Integer.toString(count),
                            RpcMetadata.STREAM_SEQ, Long.toString(seq))), new byte[0]))
                    .flatMap(request -> client.transport().call(address, request));
        }
        if (resultScheduler != null) {
            exchange = exchange.publishOn(resultScheduler);
        }
        // The subscriber's Reactor Context (tracing, routing keys) reaches the resolver and the
        // transport call of every batch, as it does for unary calls.
        Disposable subscription = exchange.contextWrite(sink.contextView())
                .subscribe(bytes -> onAnswer(seq, bytes), error -> arrive(seq, Answer.failed(error)));
        synchronized (this) {
            Fetch fetch = fetches.get(seq);
            if (fetch != null && !done) {
                fetch.subscription = subscription;
            }
        }
    }

    /** {@code metadata} of a batch request, asking for an answer as soon as it holds an item if the client says so. */
    private Map<String, String> eager(Map<String, String> metadata) {
        if (!client.eagerStreams()) {
            return metadata;
        }
        Map<String, String> withEager = new java.util.HashMap<>(metadata);
        withEager.put(RpcMetadata.STREAM_EAGER, "true");
        return withEager;
    }

    private synchronized InetSocketAddress currentServer() {
        InetSocketAddress address = server;
        if (address == null) {
            throw new IllegalStateException("stream " + streamId + " has no server");
        }
        return address;
    }

    /** A batch RPC's answer, on the thread that completed it: decoded here, taken in order. */
    private void onAnswer(long seq, byte[] bytes) {
        Answer<T> answer;
        boolean startUpload = false;
        boolean sendCancel = false;
        RpcEnvelope.Response response = null;
        ByteBuf payload;
        try {
            // the items are decoded from where they lie in the answer, not from a copy of its payload
            EnvelopeCodec.ResponseView view = ClientErrors.decodeResponseView(call, bytes);
            response = new RpcEnvelope.Response(view.status(), view.message(), view.metadata(), EnvelopeCodec.NO_PAYLOAD);
            payload = view.payload();
            if (seq == 0) {
                String id = response.metadata().get(RpcMetadata.STREAM_ID);
                boolean end = "true".equals(response.metadata().get(RpcMetadata.STREAM_END))
                        || response.status() != HomaStatus.OK;
                synchronized (this) {
                    if (id != null && streamId == 0) {
                        streamId = Long.parseLong(id);
                        openWindow(response.metadata());
                        startUpload = requestStream != null && !end && !done;
                        // cancelled while the open was in flight: tell the server now that its id is known
                        sendCancel = cancelled && !end;
                    }
                }
            }
            answer = Answer.of(response, decodeItems(payload), payload.readableBytes());
        } catch (RuntimeException e) {
            answer = Answer.failed(e instanceof HomaException ? e : new HomaException(HomaStatus.INTERNAL,
                    "bad stream batch from " + call.fullMethodName() + ": " + e, e));
        }
        if (sendCancel) {
            sendCancel();
        }
        if (startUpload && response != null) {
            startUpload(response);
        }
        arrive(seq, answer);
    }

    /** Under the lock: the window the open's answer names (none: one batch RPC and one push in flight). */
    private void openWindow(Map<String, String> metadata) {
        InetSocketAddress address = server;
        long ownWindowBytes = address == null ? 0 : client.streamWindowBytes(address);
        try {
            String window = metadata.get(RpcMetadata.STREAM_WINDOW_BYTES);
            String batch = metadata.get(RpcMetadata.STREAM_BATCH_BYTES);
            if (window == null || batch == null) {
                return;
            }
            long serverWindowBytes = Long.parseLong(window);
            long batchBytes = Long.parseLong(batch);
            if (serverWindowBytes < 0 || batchBytes < 1) {
                return;
            }
            serverBatchBytes = batchBytes;
            serverWatches = "true".equals(metadata.get(RpcMetadata.STREAM_WATCH));
            windowBytes = Math.min(ownWindowBytes, serverWindowBytes);
            // what the server takes; the bytes they ask for are held to the smaller window (freeBatches)
            windowBatches = RpcMetadata.batchesInFlight(serverWindowBytes, batchBytes);
            windowPushes = RpcMetadata.batchesInFlight(serverWindowBytes, batchBytes);
        } catch (NumberFormatException e) {
            log.debug("stream {} of {}: the open named a malformed window: {}", streamId, call.fullMethodName(),
                    e.toString());
        }
    }

    /** Records an answer (or the failure of a batch RPC) and emits what is due, in order. */
    private void arrive(long seq, Answer<T> answer) {
        synchronized (this) {
            if (!fetches.containsKey(seq)) {
                return;
            }
            arrived.put(seq, answer);
        }
        emitInOrder();
    }

    /** Emits the answers whose turn it is, one thread at a time; then asks for more. */
    private void emitInOrder() {
        while (true) {
            Answer<T> answer;
            boolean sendCancel = false;
            synchronized (this) {
                if (emitting) {
                    return;
                }
                answer = arrived.remove(takeSeq);
                if (answer == null) {
                    break;
                }
                Fetch fetch = fetches.remove(takeSeq);
                if (takeSeq == watchSeq) {
                    watchSeq = -1;
                }
                takeSeq++;
                int count = fetch == null ? 0 : fetch.count;
                asked -= count;
                askedBytes -= fetch == null ? 0 : fetch.bytes;
                if (done) {
                    continue;
                }
                if (answer.items.size() > count) {
                    // more than this batch asked for would run past the subscriber's demand
                    answer = Answer.failed(new HomaException(HomaStatus.INTERNAL, "bad stream batch from "
                            + call.fullMethodName() + ": " + answer.items.size() + " items, " + count + " asked for"));
                }
                if (answer.error == null) {
                    if (demand != Long.MAX_VALUE) {
                        demand -= answer.items.size();
                    }
                    learnItemSize(answer);
                }
                if (answer.ends()) {
                    done = true;
                    sendCancel = answer.error != null && streamId != 0;
                    dispose(deadlineTimer);
                    disposeFetches();
                }
                emitting = true;
            }
            try {
                emit(answer, sendCancel);
            } finally {
                synchronized (this) {
                    emitting = false;
                }
            }
        }
        drain();
    }

    /**
     * Under the lock: the items the next batch RPC asks for, of {@code unasked} (positive) not
     * asked yet. At most what fits in a batch; and once the items' size is known, the unasked
     * demand spread over the window's free batch RPCs, none smaller than
     * {@value #MIN_SPLIT_BYTES} bytes: a subscriber that asks for a few large items at a time
     * (16 of 64 KiB) then has several smaller batches in flight, the first delivered while the
     * server still sends the next, instead of one or two that each must arrive whole first.
     */
    private int splitCount(long unasked) {
        long count = Math.min(unasked, itemsPerBatch);
        if (perItemBytes > 0) {
            long free = Math.max(1, freeBatches());
            long spread = (unasked + free - 1) / free;
            long least = Math.max(1, MIN_SPLIT_BYTES / perItemBytes);
            count = Math.min(count, Math.max(spread, least));
        }
        return (int) count;
    }

    /**
     * Under the lock: the items the batch RPCs may ask for beyond the subscriber's demand: one
     * more of its largest requests (what it will ask for next, fetched before it asks), as far as
     * the window holds them at the size seen; none before the items' size is known or for an
     * unbounded demand, and none for a channel: its results are often answers to what the client
     * sends, and asking for them ahead would ask the method, and so the client's own source, for
     * items that do not exist yet (a ping-pong would wait for its pushes' batch linger).
     */
    private long aheadItems() {
        if (requestStream != null || perItemBytes == 0 || demand == Long.MAX_VALUE || windowBytes == 0) {
            return 0;
        }
        return Math.min(largestRequest, windowBytes / perItemBytes);
    }

    /**
     * Under the lock: how many more batch RPCs of {@value #MIN_SPLIT_BYTES} bytes may start: as
     * many as the server takes beyond those in flight (a watch for the end not counted) and the
     * window's bytes hold beyond what those ask for; one when none is in flight, whatever the window.
     */
    private long freeBatches() {
        int inFlight = fetches.size() - (watchSeq >= 0 ? 1 : 0);
        long byBytes = Math.max(0, windowBytes - askedBytes) / MIN_SPLIT_BYTES;
        long free = Math.max(0, Math.min(windowBatches - inFlight, byBytes));
        return inFlight == 0 ? Math.max(1, free) : free;
    }

    /** Under the lock: the bytes a batch RPC for {@code count} items asks for: as the items seen so far, else the server's batch limit. */
    private long batchBytes(int count) {
        long limit = serverBatchBytes > 0 ? serverBatchBytes : windowBytes;
        return perItemBytes > 0 ? Math.min(limit, count * perItemBytes) : limit;
    }

    /** Under the lock: how many items fit in a batch, from the bytes per item of {@code answer}. */
    private void learnItemSize(Answer<T> answer) {
        if (serverBatchBytes > 0 && !answer.items.isEmpty()) {
            perItemBytes = Math.max(4, (answer.payloadBytes - 4) / answer.items.size());
            itemsPerBatch = (int) Math.max(1, Math.min(batchSize, serverBatchBytes / perItemBytes));
        }
    }

    /** Outside the lock: one answer's items, then the end or failure it carries. */
    private void emit(Answer<T> answer, boolean sendCancel) {
        if (answer.error != null) {
            stopUpload();
            if (sendCancel) {
                sendCancel();
            }
            sink.error(answer.error);
            return;
        }
        for (T item : answer.items) {
            sink.next(item);
        }
        RpcEnvelope.Response response = answer.response;
        if (response != null && answer.ends()) {
            stopUpload();
            if (response.status() == HomaStatus.OK) {
                sink.complete();
            } else {
                sink.error(ClientErrors.remoteError(call, ClientErrors.remoteException(response), startNs, timeoutNs,
                        client.clock()));
            }
        }
    }

    @SuppressWarnings("unchecked")
    private List<T> decodeItems(ByteBuf payload) {
        return (List<T>) FrameCodec.frames(payload).decodeItems(codec, call.responseType(), HomaStatus.INTERNAL,
                call.fullMethodName());
    }

    /** The request stream failed, or a push did: the call fails with {@code error} now. */
    private void onFailure(Throwable error) {
        boolean sendCancel;
        synchronized (this) {
            if (done) {
                return;
            }
            done = true;
            sendCancel = streamId != 0;
            dispose(deadlineTimer);
            disposeFetches();
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
            // with an open in flight the id is still unknown: onAnswer sends the cancel when it arrives
            sendCancel = streamId != 0;
            if (sendCancel) {
                disposeFetches();
            }
        }
        stopUpload();
        if (sendCancel) {
            sendCancel();
        }
        return true;
    }

    /** Under the lock: gives up the batch RPCs in flight and the answers not taken. */
    private void disposeFetches() {
        for (Fetch fetch : fetches.values()) {
            dispose(fetch.subscription);
        }
        fetches.clear();
        arrived.clear();
        asked = 0;
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
                    windowBytes, windowPushes, requestStream, Context.of(sink.contextView()), Math.max(0, credit));
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

    /**
     * A push found the stream gone at the server (NOT_FOUND): its response stream ended there,
     * and the end (or the error) may still be on its way in a batch RPC's answer, which then
     * decides how the call ends. With none in flight, nothing else will: the call fails with
     * {@code error}.
     */
    void requestStreamGone(Throwable error) {
        boolean waitForAnswers;
        synchronized (this) {
            waitForAnswers = !fetches.isEmpty();
        }
        if (!waitForAnswers) {
            onFailure(error);
        }
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

    /** A batch RPC in flight: the items it asks for, and its subscription once sent. */
    private static final class Fetch {
        final int count;
        /** What it counts against the window's bytes. */
        final long bytes;
        @Nullable Disposable subscription;

        Fetch(int count, long bytes) {
            this.count = count;
            this.bytes = bytes;
        }
    }

    /** A batch RPC's answer (its items, and whether it ends the stream) or its failure. */
    private record Answer<T>(RpcEnvelope.@Nullable Response response, List<T> items, long payloadBytes,
                             @Nullable Throwable error) {
        static <T> Answer<T> of(RpcEnvelope.Response response, List<T> items, long payloadBytes) {
            return new Answer<>(response, items, payloadBytes, null);
        }

        static <T> Answer<T> failed(Throwable error) {
            return new Answer<>(null, List.of(), 0, error);
        }

        /** Whether this answer ends the stream: its end, an error status, or the RPC's failure. */
        boolean ends() {
            return error != null || (response != null && (response.status() != HomaStatus.OK
                    || "true".equals(response.metadata().get(RpcMetadata.STREAM_END))));
        }
    }
}
