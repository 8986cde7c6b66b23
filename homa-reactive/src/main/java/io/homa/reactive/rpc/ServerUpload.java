package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.internal.rpc.FrameCodec;
import io.netty.buffer.ByteBuf;
import java.lang.reflect.Type;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Operators;

/**
 * The server side of a channel's request stream: the {@code Publisher} a method with a
 * {@code Flux} parameter receives. Credit is what the method's subscriber asked for and, once an
 * item has shown their size, one more of its largest requests beyond that, as far as the stream
 * window holds them: each push response grants the client what it was not granted yet, so the
 * client's source runs at most one request and one window ahead of the method, and the items it sent beyond the demand wait here (the window bounds
 * them) until the method asks, instead of a round trip away. Several pushes may be in flight: they
 * are handled one at a time in the order of their numbers ({@link RpcMetadata#STREAM_SEQ}), a push
 * that arrives before one numbered lower waiting here (within the window) until those before it
 * are handled; so the method gets the items in the order the client's source emitted them, one
 * signal at a time, on the thread that handles a push or asks for more. A push without items
 * while no credit is due is held until the method asks for more, cancels, the channel ends, or a
 * later push is handled.
 *
 * <p>State is guarded by {@code this}; subscriber signals and sink answers happen outside it.
 */
final class ServerUpload implements Publisher<Object>, Subscription {
    /** Most credit one response grants (a client never needs more than a batch or two ahead). */
    static final long MAX_CREDIT_PER_RESPONSE = RpcDispatcher.MAX_STREAM_REQUEST;

    private final String name;
    private final Type elementType;
    private final PayloadCodec codec;
    private final long windowBytes;
    private final int windowPushes;
    /** The client tells credit for the demand from credit beyond it ({@link RpcMetadata#STREAM_AHEAD}): it may get the latter. */
    private final boolean sendAhead;
    /** Told when a push breaks the window or the order: the whole stream fails. */
    private Consumer<HomaException> onViolation = violation -> {};

    private @Nullable Subscriber<? super Object> subscriber;
    /** Items the subscriber asked for, saturating at {@code Long.MAX_VALUE}. */
    private long requested;
    /** The most the subscriber asked for at once: how far beyond its demand the client may send. */
    private long largestRequest;
    /** Items the client was told it may send. */
    private long granted;
    /** Items received from the client. */
    private long received;
    /** The payload bytes of the pushes that carried {@link #received}, for the items' average size. */
    private long receivedBytes;
    /** Items received and not signalled yet: what the client sent beyond the demand, within the window. */
    private final ArrayDeque<Object> ready = new ArrayDeque<>();
    /** Items signalled to the subscriber. */
    private long delivered;
    /** A thread is signalling the subscriber (signals are serial). */
    private boolean emitting;
    /** The subscriber cancelled: pushes are answered with {@link RpcMetadata#STREAM_UPLOAD_CANCELLED}. */
    private boolean cancelled;
    /** The request stream ended (the client's end or failure, or the channel's). */
    private boolean terminated;
    private @Nullable Throwable terminalError;
    /** The subscriber got onComplete or onError. */
    private boolean terminalDelivered;
    /** A push is being handled (items being signalled). */
    private boolean pushing;
    /** A push without items waiting for credit. */
    private @Nullable MonoSink<RpcEnvelope.Response> poll;
    /** Pushes that arrived and are not handled yet, by number. */
    private final TreeMap<Long, Pending> queued = new TreeMap<>();
    /** The payload bytes of {@link #queued}. */
    private long queuedBytes;
    /** The number of the next push to handle. */
    private long nextSeq = 1;

    /**
     * @param windowBytes the stream window: the most payload bytes of pushes waiting here, unless
     *     one waits alone
     * @param batchBytes the stream batch limit, which turns the window into pushes
     * @param sendAhead whether the client opened with {@link RpcMetadata#STREAM_AHEAD}: it may be
     *     granted credit beyond the method's demand
     */
    ServerUpload(String name, Type elementType, PayloadCodec codec, int windowBytes, int batchBytes, boolean sendAhead) {
        this.name = name;
        this.elementType = elementType;
        this.codec = codec;
        this.windowBytes = windowBytes;
        this.windowPushes = RpcMetadata.batchesInFlight(windowBytes, batchBytes);
        this.sendAhead = sendAhead;
    }

    /** Sets who is told that a push broke the window or the order (the stream, which then fails). */
    void onViolation(Consumer<HomaException> listener) {
        this.onViolation = listener;
    }

    @Override
    public void subscribe(Subscriber<? super Object> candidate) {
        boolean accepted;
        boolean ended;
        synchronized (this) {
            accepted = subscriber == null;
            if (accepted) {
                subscriber = candidate;
            }
            ended = terminated;
        }
        if (!accepted) {
            Operators.error(candidate, new IllegalStateException("the request stream of " + name + " can be subscribed once"));
            return;
        }
        candidate.onSubscribe(this);
        if (ended) {
            emit();
        }
    }

    @Override
    public void request(long n) {
        if (n <= 0) {
            fail(new IllegalArgumentException("request of the request stream of " + name + " must be positive, was " + n));
            return;
        }
        synchronized (this) {
            requested = requested + n < 0 ? Long.MAX_VALUE : requested + n;
            largestRequest = Math.max(largestRequest, n);
        }
        // the items waiting here first: what they leave of the window is credit too
        emit();
        MonoSink<RpcEnvelope.Response> answer;
        long credit;
        synchronized (this) {
            answer = poll;
            credit = answer == null ? 0 : takeCredit();
            if (credit > 0) {
                poll = null;
            } else {
                answer = null;
            }
        }
        if (answer != null) {
            answer.success(creditResponse(credit, false));
        }
    }

    @Override
    public void cancel() {
        MonoSink<RpcEnvelope.Response> answer;
        synchronized (this) {
            if (cancelled || terminated) {
                return;
            }
            cancelled = true;
            ready.clear();
            answer = poll;
            poll = null;
        }
        if (answer != null) {
            answer.success(creditResponse(0, true));
        }
    }

    /**
     * Under the lock: what the client may send and was not told yet, now granted (at most
     * {@link #MAX_CREDIT_PER_RESPONSE}): the demand and {@link #aheadItems()} beyond it. So the
     * method finds its next items here, not one round trip away, when it asks for more.
     */
    private long takeCredit() {
        if (cancelled || terminated) {
            return 0;
        }
        long ahead = aheadItems();
        long allowed = requested + ahead < 0 ? Long.MAX_VALUE : requested + ahead;
        long credit = Math.min(allowed - granted, MAX_CREDIT_PER_RESPONSE);
        if (credit <= 0) {
            return 0;
        }
        granted += credit;
        return credit;
    }

    /**
     * Under the lock: the items the client may send beyond the demand: one more of the
     * subscriber's largest requests (what it will ask for next, sent before it asks), as far as
     * the window has room for them at the average size seen (none before the first item).
     */
    private long aheadItems() {
        if (!sendAhead || received == 0 || requested == Long.MAX_VALUE) {
            return 0;
        }
        long itemBytes = Math.max(1, receivedBytes / received);
        long roomBytes = windowBytes - ready.size() * itemBytes;
        return roomBytes <= 0 ? 0 : Math.min(largestRequest, Math.min(roomBytes / itemBytes, MAX_CREDIT_PER_RESPONSE));
    }

    /** Whether a push is waiting here (for credit or its turn) or being handled: the client is active. */
    synchronized boolean holdingPush() {
        return poll != null || pushing || !queued.isEmpty();
    }

    /** The answer to the channel's open: the credit due so far (usually 0: the method has not subscribed yet). */
    synchronized long openCredit() {
        return takeCredit();
    }

    /**
     * Takes one push: handles it once those numbered before it are handled, signalling its items
     * to the method, then the end or failure it carries, and answers with new credit (at once when
     * the push carried items or ended the stream, else once credit is due or a later push is
     * handled).
     *
     * @param payload the items' frames (may be empty), read before this returns: the caller may
     *     release it then
     * @param end whether the request stream ends after these items
     * @param failure the request stream's failure (with {@code end}), or {@code null}
     * @param seq the push's number ({@link RpcMetadata#STREAM_SEQ}), or -1 for the next in order
     * @throws HomaException (as the answer) INVALID_ARGUMENT for a push numbered as one taken
     *     before or beyond the window, or past the window's bytes (the whole stream then fails);
     *     FAILED_PRECONDITION for a push after the end, or with more items than granted (the
     *     method's {@code Flux} then fails too); INVALID_ARGUMENT for an item that does not decode
     *     (likewise)
     */
    Mono<RpcEnvelope.Response> push(ByteBuf payload, boolean end, @Nullable HomaRemoteException failure, long seq) {
        // read now, while the received message is there: the push may wait for its turn
        Received pushed = receive(payload);
        return Mono.create(sink -> {
            HomaException violation = null;
            synchronized (this) {
                long number = seq < 0 ? nextSeq : seq;
                if (number < nextSeq || queued.containsKey(number)) {
                    violation = new HomaException(HomaStatus.INVALID_ARGUMENT,
                            "the request stream of " + name + " got push " + number + " twice");
                } else if (number - nextSeq >= windowPushes) {
                    violation = new HomaException(HomaStatus.INVALID_ARGUMENT, "the request stream of " + name
                            + " got push " + number + " beyond its window: it takes " + nextSeq + " to "
                            + (nextSeq + windowPushes - 1) + " now");
                } else if (!queued.isEmpty() && queuedBytes + pushed.lengthBytes > windowBytes) {
                    violation = new HomaException(HomaStatus.INVALID_ARGUMENT, "the request stream of " + name
                            + " got push " + number + " beyond its window: " + (queuedBytes + pushed.lengthBytes)
                            + " bytes waiting, more than the window of " + windowBytes + " bytes");
                } else {
                    queued.put(number, new Pending(pushed, end, failure, sink));
                    queuedBytes += pushed.lengthBytes;
                }
            }
            if (violation != null) {
                // the method's Flux parameter fails with it, then the whole stream
                fail(violation);
                onViolation.accept(violation);
                sink.error(violation);
                return;
            }
            drain();
        });
    }

    /** Handles the queued pushes whose turn it is, one at a time, unless another thread is at it. */
    private void drain() {
        while (true) {
            Pending next;
            synchronized (this) {
                if (pushing) {
                    return;
                }
                next = queued.remove(nextSeq);
                if (next == null) {
                    return;
                }
                queuedBytes -= next.pushed.lengthBytes;
                nextSeq++;
                pushing = true;
            }
            try {
                handle(next.pushed, next.end, next.failure, next.sink);
            } finally {
                synchronized (this) {
                    pushing = false;
                }
            }
        }
    }

    /** Handles one push whose turn it is; {@link #pushing} is set. */
    private void handle(Received pushed, boolean end, @Nullable HomaRemoteException failure,
                        MonoSink<RpcEnvelope.Response> sink) {
        List<Object> items = pushed.items;
        MonoSink<RpcEnvelope.Response> abandoned;
        synchronized (this) {
            // A client sends a push while its poll is held only once it has no more to wait for
            // (the end): the poll is answered now.
            abandoned = poll;
            poll = null;
        }
        if (abandoned != null) {
            abandoned.success(creditResponse(0, false));
        }
        boolean ended;
        boolean refused;
        synchronized (this) {
            ended = terminated;
            refused = cancelled;
        }
        if (ended) {
            sink.error(new HomaException(HomaStatus.FAILED_PRECONDITION, "the request stream of " + name + " has ended"));
            return;
        }
        if (refused) {
            sink.success(creditResponse(0, true));
            return;
        }
        HomaException rejection = pushed.malformed;
        if (rejection == null) {
            synchronized (this) {
                long allowed = granted - received;
                if (pushed.count > allowed) {
                    rejection = new HomaException(HomaStatus.FAILED_PRECONDITION, "a push to the request stream of "
                            + name + " carried " + pushed.count + " items, only " + allowed + " were granted");
                } else {
                    received += pushed.count;
                    receivedBytes += pushed.lengthBytes;
                }
            }
        }
        if (rejection == null) {
            rejection = pushed.undecodable;
        }
        if (rejection != null) {
            fail(rejection);
            sink.error(rejection);
            return;
        }
        synchronized (this) {
            if (!cancelled && !terminated) {
                ready.addAll(items);
            }
        }
        emit();
        if (end) {
            terminate(failure);
        }
        long credit;
        boolean nowCancelled;
        boolean hold;
        synchronized (this) {
            credit = takeCredit();
            nowCancelled = cancelled;
            hold = credit == 0 && pushed.count == 0 && !end && !cancelled && !terminated;
            if (hold) {
                poll = sink;
            }
        }
        if (hold) {
            sink.onCancel(() -> {
                synchronized (this) {
                    if (poll == sink) {
                        poll = null;
                    }
                }
            });
        } else {
            sink.success(creditResponse(credit, nowCancelled));
        }
    }

    /**
     * Ends the request stream from the server's side (the channel was cancelled, expired or
     * failed): the method's {@code Flux} fails with {@code reason} unless it ended, and a held
     * push is answered. Idempotent.
     */
    void fail(Throwable reason) {
        MonoSink<RpcEnvelope.Response> answer;
        List<Pending> waiting;
        synchronized (this) {
            answer = poll;
            poll = null;
            waiting = new ArrayList<>(queued.values());
            queued.clear();
            queuedBytes = 0;
            if (!terminated) {
                // the failure goes to the method now, not after items it has not asked for
                ready.clear();
            }
        }
        terminate(reason);
        if (answer != null) {
            answer.success(creditResponse(0, true));
        }
        for (Pending pending : waiting) {
            pending.sink.success(creditResponse(0, true));
        }
    }

    /** Records the end of the request stream ({@code null}: completed) and signals it once there is a subscriber. */
    private void terminate(@Nullable Throwable failure) {
        synchronized (this) {
            if (terminated) {
                return;
            }
            terminated = true;
            terminalError = failure;
        }
        emit();
    }

    /**
     * Signals what is due, one signal at a time whatever thread calls: the items waiting here as
     * far as the demand goes, then the end once none waits. A call while another thread signals
     * (or from within a signal, as {@code request} from {@code onNext}) returns at once: that
     * thread looks again after each signal.
     */
    private void emit() {
        while (true) {
            Subscriber<? super Object> target;
            Object item = null;
            Throwable failure = null;
            synchronized (this) {
                target = subscriber;
                if (emitting || target == null || cancelled) {
                    return;
                }
                if (!ready.isEmpty() && delivered < requested) {
                    item = ready.poll();
                    delivered++;
                } else if (ready.isEmpty() && terminated && !terminalDelivered) {
                    terminalDelivered = true;
                    failure = terminalError;
                } else {
                    return;
                }
                emitting = true;
            }
            try {
                if (item != null) {
                    target.onNext(item);
                } else if (failure == null) {
                    target.onComplete();
                } else {
                    target.onError(failure);
                }
            } finally {
                synchronized (this) {
                    emitting = false;
                }
            }
        }
    }

    /** A push that arrived and waits for its turn. */
    private record Pending(Received pushed, boolean end, @Nullable HomaRemoteException failure,
                           MonoSink<RpcEnvelope.Response> sink) {}

    /**
     * What a push carried, read when it arrived: its items, or why they cannot be taken (frames
     * that do not parse; items that do not decode, which only counts once the push's turn comes
     * and its items were granted).
     *
     * @param lengthBytes the payload's bytes, what the push holds of the window while it waits
     */
    private record Received(List<Object> items, int count, int lengthBytes, @Nullable HomaException malformed,
                            @Nullable HomaException undecodable) {}

    private Received receive(ByteBuf payload) {
        int lengthBytes = payload.readableBytes();
        FrameCodec.Frames frames;
        try {
            frames = FrameCodec.frames(payload);
        } catch (HomaException e) {
            return new Received(List.of(), 0, lengthBytes, e, null);
        }
        try {
            List<Object> items = frames.decodeItems(codec, elementType, HomaStatus.INVALID_ARGUMENT,
                    "the request stream of " + name);
            return new Received(items, frames.size(), lengthBytes, null, null);
        } catch (HomaException e) {
            return new Received(List.of(), frames.size(), lengthBytes, null, e);
        } catch (RuntimeException e) {
            return new Received(List.of(), frames.size(), lengthBytes, null, new HomaException(HomaStatus.INVALID_ARGUMENT,
                    "bad push to the request stream of " + name + ": " + ServerErrors.describe(e), e));
        }
    }

    /** A push's answer: {@code credit} more items, and for a client that tells them apart, how many of all granted go beyond the demand. */
    private RpcEnvelope.Response creditResponse(long credit, boolean cancelled) {
        Map<String, String> metadata;
        if (sendAhead) {
            long ahead;
            synchronized (this) {
                ahead = requested == Long.MAX_VALUE ? 0 : Math.max(0, granted - requested);
            }
            metadata = Map.of(RpcMetadata.STREAM_CREDIT, Long.toString(credit), RpcMetadata.STREAM_AHEAD, Long.toString(ahead));
        } else {
            metadata = Map.of(RpcMetadata.STREAM_CREDIT, Long.toString(credit));
        }
        RpcEnvelope.Response response = new RpcEnvelope.Response(HomaStatus.OK, "", metadata, new byte[0]);
        return cancelled ? response.withMetadata(RpcMetadata.STREAM_UPLOAD_CANCELLED, "true") : response;
    }
}
