package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.internal.rpc.FrameCodec;
import io.netty.buffer.ByteBuf;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.scheduler.Schedulers;

/**
 * The server side of one open stream: subscribes to the method's {@code Flux}, requests from it
 * only what the client's batch RPCs asked for, buffers encoded items and answers the waiting
 * batch requests in order. Several batch requests may be in flight: they are taken in the order
 * of their numbers ({@link RpcMetadata#STREAM_SEQ}), one that arrives early waiting (within the
 * window) for those before it, and answered in that order, each with the items after those of the
 * one before it. A channel (a method with a request stream) also has a {@link ServerUpload} that
 * takes the client's pushes. The stream is cancelled when no batch request or push arrived or was
 * answered for the idle timeout while none was waiting. State is guarded by {@code this}; sinks
 * and upstream calls happen outside the lock.
 */
final class ServerStream implements CoreSubscriber<Object> {
    private final RpcDispatcher owner;
    private final long id;
    private final String service;
    private final String method;
    private final PayloadCodec codec;
    private final long deadlineNs;
    private final int batchBytes;
    private final long lingerNs;
    private final long idleTimeoutNs;
    private final int windowBytes;
    /** Batch requests taken at once at most: the window in batches. */
    private final int windowBatches;
    private final @Nullable ServerUpload upload;

    private @Nullable Subscription upstream;
    /** Demand asked for before {@link #onSubscribe}. */
    private long pendingRequest;
    /** Items requested from upstream and not yet received. */
    private long outstanding;
    private final ArrayDeque<FrameCodec.Item> buffer = new ArrayDeque<>();
    /** The frame bytes of {@link #buffer}: 4 + length per item. */
    private long bufferBytes;
    private boolean terminated;
    private @Nullable Throwable error;
    /** The end was delivered, or the stream was cancelled: nothing more happens. */
    private boolean finished;
    /** Batch requests taken, in order, not answered yet; the first is answered first. */
    private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
    /** The items {@link #waiting} asks for together. */
    private long waitingItems;
    /** Batch requests that arrived before one numbered lower, by number. */
    private final TreeMap<Long, Waiting> early = new TreeMap<>();
    /** The number of the next batch request to take: 0 is a stream's open, 1 the first next. */
    private long nextSeq;
    private @Nullable Disposable lingerTimer;
    private @Nullable Disposable idleTimer;
    private @Nullable Disposable deadlineTimer;
    /** When a batch request or push last arrived or was answered. */
    private long lastActivityNs;

    ServerStream(RpcDispatcher owner, long id, ServerCall call, PayloadCodec codec, long deadlineNs, int batchBytes,
                 int windowBytes, long lingerNs, long idleTimeoutNs, @Nullable ServerUpload upload) {
        this.owner = owner;
        this.id = id;
        this.service = call.service();
        this.method = call.method();
        this.codec = codec;
        this.deadlineNs = deadlineNs;
        this.batchBytes = batchBytes;
        this.lingerNs = lingerNs;
        this.idleTimeoutNs = idleTimeoutNs;
        this.windowBytes = windowBytes;
        this.windowBatches = RpcMetadata.batchesInFlight(windowBytes, batchBytes);
        this.upload = upload;
        // a channel's open fetches nothing: its first batch request is the first next
        this.nextSeq = upload == null ? 0 : 1;
        if (upload != null) {
            upload.onViolation(this::cancel);
        }
    }

    long id() {
        return id;
    }

    boolean matches(ServerCall call) {
        return service.equals(call.service()) && method.equals(call.method());
    }

    private String name() {
        return service + "." + method;
    }

    /** Subscribes to the method's items and arms the deadline and the idle check. */
    void start(Flux<?> items) {
        if (deadlineNs != 0) {
            long delayNs = Math.max(0, deadlineNs - owner.clock().nanoTime());
            Disposable timer = Schedulers.parallel().schedule(this::expire, delayNs, TimeUnit.NANOSECONDS);
            synchronized (this) {
                deadlineTimer = timer;
            }
        }
        touch();
        armIdleCheck(idleTimeoutNs);
        items.subscribe(this);
    }

    /** The answer to a channel's open: its id, the window and the request stream's first credit. */
    RpcEnvelope.Response openResponse() {
        long credit = upload == null ? 0 : upload.openCredit();
        return withWindow(withStreamId(new RpcEnvelope.Response(HomaStatus.OK, "",
                Map.of(RpcMetadata.STREAM_CREDIT, Long.toString(credit)), new byte[0]), false));
    }

    /** {@code open} (the answer to an open) naming the window and the batch limit. */
    RpcEnvelope.Response withWindow(RpcEnvelope.Response open) {
        return open.withMetadata(RpcMetadata.STREAM_WINDOW_BYTES, Integer.toString(windowBytes))
                .withMetadata(RpcMetadata.STREAM_BATCH_BYTES, Integer.toString(batchBytes))
                .withMetadata(RpcMetadata.STREAM_WATCH, "true");
    }

    /**
     * Takes one push of the request stream (see {@link ServerUpload#push}).
     *
     * @throws HomaException FAILED_PRECONDITION if this stream has no request stream
     */
    Mono<RpcEnvelope.Response> push(ByteBuf payload, boolean end, @Nullable HomaRemoteException failure, long seq) {
        ServerUpload target = upload;
        if (target == null) {
            throw new HomaException(HomaStatus.FAILED_PRECONDITION, name() + " takes no request stream");
        }
        touch();
        return target.push(payload, end, failure, seq).doFinally(signal -> touch());
    }

    private synchronized void touch() {
        lastActivityNs = owner.clock().nanoTime();
    }

    private void armIdleCheck(long delayNs) {
        Disposable timer = Schedulers.parallel().schedule(this::idleCheck, delayNs, TimeUnit.NANOSECONDS);
        synchronized (this) {
            if (finished) {
                timer.dispose();
                return;
            }
            idleTimer = timer;
        }
    }

    /**
     * Cancels the stream if nothing was waiting and nothing arrived or was answered for the idle
     * timeout. A watch for the end alone does not keep it open: it is answered (no items, no end)
     * instead, and a client that is still there sends another within the next idle timeout.
     */
    private void idleCheck() {
        long remainingNs;
        Waiting released = null;
        synchronized (this) {
            if (finished) {
                return;
            }
            boolean watchOnly = waiting.size() == 1 && waiting.peek().count == 0 && early.isEmpty();
            boolean busy = (!waiting.isEmpty() && !watchOnly) || !early.isEmpty()
                    || (upload != null && upload.holdingPush());
            long nowNs = owner.clock().nanoTime();
            remainingNs = busy ? idleTimeoutNs : lastActivityNs + idleTimeoutNs - nowNs;
            if (remainingNs <= 0 && watchOnly) {
                released = waiting.poll();
                lastActivityNs = nowNs;
                remainingNs = idleTimeoutNs;
            }
        }
        if (released != null) {
            deliver(new Batch(released.sink, List.of(), false, null));
        }
        if (remainingNs > 0) {
            armIdleCheck(remainingNs);
        } else {
            idleExpired();
        }
    }

    /**
     * Answers one batch RPC asking for {@code count} more items: 1..count items (fewer only at the
     * end, or when the batch is full by bytes or its linger passed), the end, or the error. The
     * batch requests are answered in the order of their numbers.
     *
     * @param seq the request's number ({@link RpcMetadata#STREAM_SEQ}); -1 for the next in order
     *     (an open, or a client that keeps one in flight)
     * @param eager answer as soon as it holds an item ({@link RpcMetadata#STREAM_EAGER}), not after the linger
     */
    Mono<RpcEnvelope.Response> fetch(int count, long seq, boolean eager) {
        return Mono.create(sink -> {
            Subscription toRequest = null;
            long request = 0;
            List<Batch> batches = List.of();
            HomaException violation = null;
            Waiting entry = new Waiting(sink, count, eager);
            synchronized (this) {
                if (finished) {
                    sink.error(new HomaException(HomaStatus.NOT_FOUND, "stream " + id + " of " + name() + " ended"));
                    return;
                }
                long number = seq < 0 ? nextSeq : seq;
                if (number < nextSeq || early.containsKey(number)) {
                    violation = new HomaException(HomaStatus.INVALID_ARGUMENT, "stream " + id + " of " + name()
                            + " got batch request " + number + " twice");
                } else if (number - nextSeq > windowBatches) {
                    // the window, and one more: a watch for the end, which the client does not count
                    violation = new HomaException(HomaStatus.INVALID_ARGUMENT, "stream " + id + " of " + name()
                            + " got batch request " + number + " beyond its window: it takes " + nextSeq + " to "
                            + (nextSeq + windowBatches) + " now");
                } else {
                    lastActivityNs = owner.clock().nanoTime();
                    early.put(number, entry);
                    Waiting next;
                    while ((next = early.remove(nextSeq)) != null) {
                        waiting.add(next);
                        waitingItems += next.count;
                        nextSeq++;
                    }
                    long need = waitingItems - buffer.size() - outstanding;
                    if (need > 0 && !terminated) {
                        outstanding += need;
                        if (upstream == null) {
                            pendingRequest += need;
                        } else {
                            toRequest = upstream;
                            request = need;
                        }
                    }
                    batches = takeBatches(false);
                }
            }
            if (violation != null) {
                cancel(violation);
                sink.error(violation);
                return;
            }
            sink.onCancel(() -> forget(entry));
            // the ready batches first: the method's Flux may emit (and items be encoded) within request()
            deliver(batches);
            if (toRequest != null) {
                toRequest.request(request);
            }
        });
    }

    /** A batch request's RPC was cancelled (the transport gave it up): it takes no items. */
    private synchronized void forget(Waiting entry) {
        if (waiting.removeIf(w -> w == entry)) {
            waitingItems -= entry.count;
        }
        early.values().removeIf(w -> w == entry);
    }

    @Override
    public void onSubscribe(Subscription subscription) {
        long request;
        synchronized (this) {
            if (finished || upstream != null) {
                request = -1;
            } else {
                upstream = subscription;
                request = pendingRequest;
                pendingRequest = 0;
            }
        }
        if (request < 0) {
            subscription.cancel();
        } else if (request > 0) {
            subscription.request(request);
        }
    }

    @Override
    public void onNext(Object item) {
        FrameCodec.Item encoded;
        try {
            encoded = FrameCodec.Item.encode(codec, item);
            if (encoded.lengthBytes() > batchBytes) {
                throw new HomaException(HomaStatus.RESOURCE_EXHAUSTED, "an item of " + name() + " is "
                        + encoded.lengthBytes() + " bytes, more than the stream batch limit of " + batchBytes + " bytes");
            }
        } catch (RuntimeException e) {
            Subscription subscription;
            synchronized (this) {
                subscription = upstream;
            }
            if (subscription != null) {
                subscription.cancel();
            }
            onError(e);
            return;
        }
        List<Batch> batches;
        synchronized (this) {
            if (terminated || finished) {
                return;
            }
            outstanding--;
            buffer.add(encoded);
            bufferBytes += encoded.frameBytes();
            batches = takeBatches(false);
        }
        deliver(batches);
    }

    @Override
    public void onError(Throwable failure) {
        terminate(failure);
    }

    @Override
    public void onComplete() {
        terminate(null);
    }

    private void terminate(@Nullable Throwable failure) {
        List<Batch> batches;
        synchronized (this) {
            if (terminated || finished) {
                return;
            }
            terminated = true;
            error = failure;
            batches = takeBatches(false);
        }
        deliver(batches);
    }

    private void lingerExpired() {
        List<Batch> batches;
        synchronized (this) {
            lingerTimer = null;
            batches = takeBatches(true);
        }
        deliver(batches);
    }

    /** The deadline passed: cancel the method's Flux and answer DEADLINE_EXCEEDED. */
    private void expire() {
        Subscription subscription;
        List<Batch> batches;
        synchronized (this) {
            if (terminated || finished) {
                return;
            }
            subscription = upstream;
            buffer.clear();
            bufferBytes = 0;
            terminated = true;
            error = new HomaException(HomaStatus.DEADLINE_EXCEEDED, "deadline passed while " + name() + " streamed");
            batches = takeBatches(false);
        }
        if (subscription != null) {
            subscription.cancel();
        }
        failUpload(new HomaException(HomaStatus.DEADLINE_EXCEEDED, "deadline passed while " + name() + " streamed"));
        deliver(batches);
    }

    private void failUpload(HomaException reason) {
        if (upload != null) {
            upload.fail(reason);
        }
    }

    /** Cancels the method's Flux and answers the waiting batch requests with {@code reason}. Idempotent. */
    void cancel(HomaException reason) {
        Subscription subscription;
        List<Waiting> answer;
        synchronized (this) {
            if (finished) {
                return;
            }
            finished = true;
            subscription = terminated ? null : upstream;
            terminated = true;
            buffer.clear();
            bufferBytes = 0;
            answer = drainWaiting();
            disposeTimers();
        }
        owner.streamEnded(this);
        if (subscription != null) {
            subscription.cancel();
        }
        failUpload(reason);
        for (Waiting w : answer) {
            w.sink.success(withStreamId(owner.errorResponse(reason, name()), true));
        }
    }

    /** Under the lock: every batch request taken or early, in order, and none left. */
    private List<Waiting> drainWaiting() {
        List<Waiting> all = new ArrayList<>(waiting);
        all.addAll(early.values());
        waiting.clear();
        early.clear();
        waitingItems = 0;
        return all;
    }

    private void idleExpired() {
        cancel(new HomaException(HomaStatus.CANCELLED, "stream " + id + " of " + name() + " was not fetched in time"));
    }

    /**
     * Under the lock: the batches to answer now, in order: the first waiting request's if it is
     * ready (full by count or by bytes, the stream ended, or its linger passed), then the next's,
     * and so on. The request that takes the end gets it; those after it get an empty end. Arms the
     * linger of a first request that has items but is not ready.
     */
    private List<Batch> takeBatches(boolean lingerExpired) {
        List<Batch> batches = null;
        boolean linger = lingerExpired;
        while (!finished && !waiting.isEmpty()) {
            Waiting head = waiting.peek();
            boolean ready;
            if (head.count == 0) {
                // a watch for the end: no items; answered at the end, or once a later request is taken
                ready = (terminated && buffer.isEmpty()) || waiting.size() > 1;
            } else {
                boolean full = buffer.size() >= head.count || (!buffer.isEmpty() && bufferBytes + 4 > batchBytes);
                ready = terminated || full || (!buffer.isEmpty() && (linger || lingerNs == 0 || head.eager));
            }
            if (!ready) {
                break;
            }
            waiting.poll();
            waitingItems -= head.count;
            List<FrameCodec.Item> items = new ArrayList<>(Math.min(buffer.size(), head.count));
            long lengthBytes = 0;
            while (!buffer.isEmpty() && items.size() < head.count) {
                FrameCodec.Item item = buffer.peek();
                if (!items.isEmpty() && lengthBytes + item.frameBytes() > batchBytes) {
                    break;
                }
                buffer.poll();
                items.add(item);
                lengthBytes += item.frameBytes();
            }
            bufferBytes -= lengthBytes;
            linger = false;
            dispose(lingerTimer);
            lingerTimer = null;
            lastActivityNs = owner.clock().nanoTime();
            if (batches == null) {
                batches = new ArrayList<>(2);
            }
            boolean end = terminated && buffer.isEmpty();
            batches.add(new Batch(head.sink, items, end, end ? error : null));
            if (end) {
                finished = true;
                disposeTimers();
                for (Waiting after : drainWaiting()) {
                    batches.add(new Batch(after.sink, List.of(), true, error));
                }
            }
        }
        if (!finished && !waiting.isEmpty() && waiting.peek().count > 0 && !buffer.isEmpty() && lingerTimer == null) {
            lingerTimer = Schedulers.parallel().schedule(this::lingerExpired, lingerNs, TimeUnit.NANOSECONDS);
        }
        return batches == null ? List.of() : batches;
    }

    /** Outside the lock. */
    private void deliver(List<Batch> batches) {
        for (Batch batch : batches) {
            deliver(batch);
        }
    }

    private void deliver(Batch batch) {
        RpcEnvelope.Response response;
        if (batch.error == null) {
            response = RpcEnvelope.Response.withParts(HomaStatus.OK, "", Map.of(), FrameCodec.frameParts(batch.items));
        } else {
            RpcEnvelope.Response failure = owner.errorResponse(batch.error, name());
            response = RpcEnvelope.Response.withParts(failure.status(), failure.message(), failure.metadata(),
                    FrameCodec.frameParts(batch.items));
        }
        if (batch.end) {
            owner.streamEnded(this);
            failUpload(new HomaException(HomaStatus.CANCELLED, name() + " ended"));
        }
        batch.sink.success(withStreamId(response, batch.end));
    }

    private RpcEnvelope.Response withStreamId(RpcEnvelope.Response response, boolean end) {
        RpcEnvelope.Response withId = response.withMetadata(RpcMetadata.STREAM_ID, Long.toString(id));
        return end ? withId.withMetadata(RpcMetadata.STREAM_END, "true") : withId;
    }

    private void disposeTimers() {
        dispose(lingerTimer);
        dispose(idleTimer);
        dispose(deadlineTimer);
        lingerTimer = null;
        idleTimer = null;
        deadlineTimer = null;
    }

    private static void dispose(@Nullable Disposable timer) {
        if (timer != null) {
            timer.dispose();
        }
    }

    private record Batch(MonoSink<RpcEnvelope.Response> sink, List<FrameCodec.Item> items, boolean end,
                         @Nullable Throwable error) {}

    /** A batch request taken or early: its RPC and how many items it asks for. */
    private record Waiting(MonoSink<RpcEnvelope.Response> sink, int count, boolean eager) {}
}
