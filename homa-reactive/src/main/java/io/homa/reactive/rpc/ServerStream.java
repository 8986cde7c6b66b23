package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.internal.rpc.FrameCodec;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
 * only what the client's batch RPCs asked for, buffers encoded items and answers one waiting
 * batch at a time. A channel (a method with a request stream) also has a {@link ServerUpload}
 * that takes the client's pushes. The stream is cancelled when no batch request or push arrived or
 * was answered for the idle timeout while none was waiting. State is guarded by {@code this}; sinks
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
    private final @Nullable ServerUpload upload;

    private @Nullable Subscription upstream;
    /** Demand asked for before {@link #onSubscribe}. */
    private long pendingRequest;
    /** Items requested from upstream and not yet received. */
    private long outstanding;
    private final ArrayDeque<byte[]> buffer = new ArrayDeque<>();
    private boolean terminated;
    private @Nullable Throwable error;
    /** The end was delivered, or the stream was cancelled: nothing more happens. */
    private boolean finished;
    private @Nullable MonoSink<RpcEnvelope.Response> waiting;
    private int waitingCount;
    private @Nullable Disposable lingerTimer;
    private @Nullable Disposable idleTimer;
    private @Nullable Disposable deadlineTimer;
    /** When a batch request or push last arrived or was answered. */
    private long lastActivityNs;

    ServerStream(RpcDispatcher owner, long id, ServerCall call, PayloadCodec codec, long deadlineNs, int batchBytes,
                 long lingerNs, long idleTimeoutNs, @Nullable ServerUpload upload) {
        this.owner = owner;
        this.id = id;
        this.service = call.service();
        this.method = call.method();
        this.codec = codec;
        this.deadlineNs = deadlineNs;
        this.batchBytes = batchBytes;
        this.lingerNs = lingerNs;
        this.idleTimeoutNs = idleTimeoutNs;
        this.upload = upload;
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

    /** The answer to a channel's open: its id and the request stream's first credit. */
    RpcEnvelope.Response openResponse() {
        long credit = upload == null ? 0 : upload.openCredit();
        return withStreamId(new RpcEnvelope.Response(HomaStatus.OK, "",
                Map.of(RpcMetadata.STREAM_CREDIT, Long.toString(credit)), new byte[0]), false);
    }

    /**
     * Takes one push of the request stream (see {@link ServerUpload#push}).
     *
     * @throws HomaException FAILED_PRECONDITION if this stream has no request stream
     */
    Mono<RpcEnvelope.Response> push(byte[] payload, boolean end, @Nullable HomaRemoteException failure) {
        ServerUpload target = upload;
        if (target == null) {
            throw new HomaException(HomaStatus.FAILED_PRECONDITION, name() + " takes no request stream");
        }
        touch();
        return target.push(payload, end, failure).doFinally(signal -> touch());
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

    /** Cancels the stream if nothing was waiting and nothing arrived or was answered for the idle timeout. */
    private void idleCheck() {
        long remainingNs;
        synchronized (this) {
            if (finished) {
                return;
            }
            boolean busy = waiting != null || (upload != null && upload.holdingPush());
            remainingNs = busy ? idleTimeoutNs : lastActivityNs + idleTimeoutNs - owner.clock().nanoTime();
        }
        if (remainingNs > 0) {
            armIdleCheck(remainingNs);
        } else {
            idleExpired();
        }
    }

    /**
     * Answers one batch RPC asking for {@code count} more items: 1..count items (fewer only at the
     * end), the end, or the error.
     */
    Mono<RpcEnvelope.Response> fetch(int count) {
        return Mono.create(sink -> {
            Subscription toRequest = null;
            long request = 0;
            Batch batch;
            synchronized (this) {
                if (waiting != null) {
                    sink.error(new HomaException(HomaStatus.FAILED_PRECONDITION,
                            "stream " + id + " of " + name() + " is already fetching a batch"));
                    return;
                }
                if (finished) {
                    sink.error(new HomaException(HomaStatus.NOT_FOUND, "stream " + id + " of " + name() + " ended"));
                    return;
                }
                lastActivityNs = owner.clock().nanoTime();
                waiting = sink;
                waitingCount = count;
                long need = count - buffer.size() - outstanding;
                if (need > 0 && !terminated) {
                    outstanding += need;
                    if (upstream == null) {
                        pendingRequest += need;
                    } else {
                        toRequest = upstream;
                        request = need;
                    }
                }
                batch = takeBatch(false);
            }
            sink.onCancel(() -> {
                synchronized (this) {
                    if (waiting == sink) {
                        waiting = null;
                    }
                }
            });
            if (toRequest != null) {
                toRequest.request(request);
            }
            deliver(batch);
        });
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
        byte[] bytes;
        try {
            bytes = codec.encode(item);
            if (bytes.length > batchBytes) {
                throw new HomaException(HomaStatus.RESOURCE_EXHAUSTED, "an item of " + name() + " is "
                        + bytes.length + " bytes, more than the stream batch limit of " + batchBytes + " bytes");
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
        Batch batch;
        synchronized (this) {
            if (terminated || finished) {
                return;
            }
            outstanding--;
            buffer.add(bytes);
            batch = takeBatch(false);
            if (batch == null && waiting != null && lingerTimer == null) {
                lingerTimer = lingerNs == 0
                        ? null
                        : Schedulers.parallel().schedule(this::lingerExpired, lingerNs, TimeUnit.NANOSECONDS);
                if (lingerNs == 0) {
                    batch = takeBatch(true);
                }
            }
        }
        deliver(batch);
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
        Batch batch;
        synchronized (this) {
            if (terminated || finished) {
                return;
            }
            terminated = true;
            error = failure;
            batch = takeBatch(false);
        }
        deliver(batch);
    }

    private void lingerExpired() {
        Batch batch;
        synchronized (this) {
            lingerTimer = null;
            batch = takeBatch(true);
        }
        deliver(batch);
    }

    /** The deadline passed: cancel the method's Flux and answer DEADLINE_EXCEEDED. */
    private void expire() {
        Subscription subscription;
        Batch batch;
        synchronized (this) {
            if (terminated || finished) {
                return;
            }
            subscription = upstream;
            buffer.clear();
            terminated = true;
            error = new HomaException(HomaStatus.DEADLINE_EXCEEDED, "deadline passed while " + name() + " streamed");
            batch = takeBatch(false);
        }
        if (subscription != null) {
            subscription.cancel();
        }
        failUpload(new HomaException(HomaStatus.DEADLINE_EXCEEDED, "deadline passed while " + name() + " streamed"));
        deliver(batch);
    }

    private void failUpload(HomaException reason) {
        if (upload != null) {
            upload.fail(reason);
        }
    }

    /** Cancels the method's Flux and answers a waiting batch with {@code reason}. Idempotent. */
    void cancel(HomaException reason) {
        Subscription subscription;
        MonoSink<RpcEnvelope.Response> sink;
        synchronized (this) {
            if (finished) {
                return;
            }
            finished = true;
            subscription = terminated ? null : upstream;
            terminated = true;
            buffer.clear();
            sink = waiting;
            waiting = null;
            disposeTimers();
        }
        owner.streamEnded(this);
        if (subscription != null) {
            subscription.cancel();
        }
        failUpload(reason);
        if (sink != null) {
            sink.success(withStreamId(owner.errorResponse(reason, name()), true));
        }
    }

    private void idleExpired() {
        cancel(new HomaException(HomaStatus.CANCELLED, "stream " + id + " of " + name() + " was not fetched in time"));
    }

    /** Under the lock: the batch to answer the waiting RPC with, if it is ready. */
    private @Nullable Batch takeBatch(boolean lingerExpired) {
        MonoSink<RpcEnvelope.Response> sink = waiting;
        if (sink == null || finished) {
            return null;
        }
        boolean ready = terminated || buffer.size() >= waitingCount || (lingerExpired && !buffer.isEmpty());
        if (!ready) {
            return null;
        }
        List<byte[]> items = new ArrayList<>(Math.min(buffer.size(), waitingCount));
        long lengthBytes = 0;
        while (!buffer.isEmpty() && items.size() < waitingCount) {
            byte[] item = buffer.peek();
            if (!items.isEmpty() && lengthBytes + 4 + item.length > batchBytes) {
                break;
            }
            buffer.poll();
            items.add(item);
            lengthBytes += 4 + item.length;
        }
        boolean end = terminated && buffer.isEmpty();
        waiting = null;
        dispose(lingerTimer);
        lingerTimer = null;
        lastActivityNs = owner.clock().nanoTime();
        if (end) {
            finished = true;
            disposeTimers();
        }
        return new Batch(sink, items, end, end ? error : null);
    }

    /** Outside the lock. */
    private void deliver(@Nullable Batch batch) {
        if (batch == null) {
            return;
        }
        RpcEnvelope.Response response;
        if (batch.error == null) {
            response = new RpcEnvelope.Response(HomaStatus.OK, "", Map.of(), FrameCodec.encodeFrames(batch.items));
        } else {
            RpcEnvelope.Response failure = owner.errorResponse(batch.error, name());
            response = new RpcEnvelope.Response(failure.status(), failure.message(), failure.metadata(),
                    FrameCodec.encodeFrames(batch.items));
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

    private record Batch(MonoSink<RpcEnvelope.Response> sink, List<byte[]> items, boolean end,
                         @Nullable Throwable error) {}
}
