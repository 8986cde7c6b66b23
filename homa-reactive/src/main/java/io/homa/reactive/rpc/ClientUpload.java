package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.internal.rpc.FrameCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * The client side of a channel's request stream: subscribes to the caller's {@code Publisher}
 * and pushes its items to the server in batches, never more than the credit the server granted
 * (what the method asked for). Several pushes may be in flight, numbered
 * ({@link RpcMetadata#STREAM_SEQ}): as many as the server takes, their payloads together within
 * the stream window unless one is alone in flight; their answers, which may arrive in any order,
 * are taken in order. It requests from the source at most one batch ahead within that credit, so
 * it holds at most one batch besides those in flight. With no credit left, nothing to send and
 * nothing in flight it sends a push without items, which the server answers when credit is due;
 * the end of the request stream goes out even while that push waits.
 *
 * <p>State is guarded by {@code this}; source calls, RPCs and the owner's callbacks happen
 * outside it.
 */
final class ClientUpload implements CoreSubscriber<Object> {
    private final ClientStream<?> owner;
    private final HomaClient client;
    private final RpcCall call;
    private final PayloadCodec codec;
    private final InetSocketAddress server;
    private final long streamId;
    private final long startNs;
    private final long timeoutNs;
    private final int batchSize;
    private final int batchBytes;
    private final long lingerNs;
    private final long windowBytes;
    private final int windowPushes;
    private final Publisher<?> source;
    private final Context context;

    private @Nullable Subscription subscription;
    /** Items the server allows that were not pushed yet (buffered ones included). */
    private long credit;
    /**
     * Of all the credit granted, the items beyond what the method asked for, as the latest answer
     * said ({@link RpcMetadata#STREAM_AHEAD}); {@link #credit} less this is what the method waits for.
     */
    private long aheadCredit;
    /** Items requested from the source and not received yet. */
    private long outstanding;
    private final List<FrameCodec.Item> buffer = new ArrayList<>();
    private long bufferBytes;
    private boolean sourceDone;
    private @Nullable Throwable sourceError;
    /** The pushes in flight, by number. */
    private final TreeMap<Long, Push> inFlight = new TreeMap<>();
    /** The payload bytes of {@link #inFlight}. */
    private long inFlightBytes;
    /** A push without items is in flight: it waits at the server for credit. */
    private boolean polling;
    /** The number of the next push. */
    private long nextSeq = 1;
    /** The number of the next answer to take. */
    private long takeSeq = 1;
    /** Answers that came before one numbered lower, by number. */
    private final TreeMap<Long, byte[]> arrived = new TreeMap<>();
    /** A thread is taking answers. */
    private boolean taking;
    /** The push carrying the end of the request stream was sent. */
    private boolean endSent;
    private boolean lingerExpired;
    private @Nullable Disposable lingerTimer;
    /** Nothing more happens: the end was pushed, the server cancelled, or the channel ended. */
    private boolean finished;

    /**
     * @param windowBytes the most payload bytes of pushes in flight, unless one is alone in flight
     * @param windowPushes the most pushes in flight (one without items waiting for credit aside)
     */
    ClientUpload(ClientStream<?> owner, HomaClient client, RpcCall call, PayloadCodec codec, InetSocketAddress server,
                 long streamId, long startNs, long timeoutNs, int batchSize, int batchBytes, long lingerNs,
                 long windowBytes, int windowPushes, Publisher<?> source, Context context, long initialCredit) {
        this.owner = owner;
        this.client = client;
        this.call = call;
        this.codec = codec;
        this.server = server;
        this.streamId = streamId;
        this.startNs = startNs;
        this.timeoutNs = timeoutNs;
        this.batchSize = batchSize;
        this.batchBytes = batchBytes;
        this.lingerNs = lingerNs;
        this.windowBytes = windowBytes;
        this.windowPushes = windowPushes;
        this.source = source;
        this.context = context;
        this.credit = initialCredit;
    }

    void start() {
        Flux.from(source).subscribe(this);
    }

    @Override
    public Context currentContext() {
        return context;
    }

    @Override
    public void onSubscribe(Subscription s) {
        boolean accept;
        synchronized (this) {
            accept = subscription == null && !finished;
            if (accept) {
                subscription = s;
            }
        }
        if (!accept) {
            s.cancel();
            return;
        }
        pump();
    }

    @Override
    public void onNext(Object item) {
        FrameCodec.Item encoded;
        try {
            encoded = FrameCodec.Item.encode(codec, item);
            if (encoded.frameBytes() > batchBytes) {
                throw new HomaException(HomaStatus.RESOURCE_EXHAUSTED, "an item of the request stream of "
                        + call.fullMethodName() + " is " + encoded.lengthBytes() + " bytes, more than the push limit of "
                        + batchBytes + " bytes");
            }
        } catch (RuntimeException e) {
            Subscription s;
            synchronized (this) {
                s = subscription;
            }
            if (s != null) {
                s.cancel();
            }
            onError(e);
            return;
        }
        synchronized (this) {
            if (finished || sourceDone) {
                return;
            }
            outstanding--;
            buffer.add(encoded);
            bufferBytes += encoded.frameBytes();
        }
        pump();
    }

    @Override
    public void onError(Throwable error) {
        synchronized (this) {
            if (sourceDone) {
                return;
            }
            sourceDone = true;
            sourceError = error;
        }
        pump();
    }

    @Override
    public void onComplete() {
        synchronized (this) {
            if (sourceDone) {
                return;
            }
            sourceDone = true;
        }
        pump();
    }

    /** Requests from the source and sends the pushes that are due and fit in the window. */
    private void pump() {
        Subscription toRequest = null;
        long request = 0;
        List<Push> toSend = null;
        synchronized (this) {
            if (finished) {
                return;
            }
            while (!endSent) {
                // what the method waits for goes at once; items only sent ahead of its demand may wait for more
                long waitedFor = credit - aheadCredit;
                boolean full = buffer.size() >= batchSize || buffer.size() >= (waitedFor > 0 ? waitedFor : credit)
                        || bufferBytes >= batchBytes / 2;
                boolean poll = buffer.isEmpty() && credit == 0 && !sourceDone;
                // a push without items waiting for credit takes no room in the window: the end goes out beside it
                int pushes = inFlight.size() - (polling ? 1 : 0);
                // Nagle's rule: with no push in flight, items go at once (the method may be waiting
                // for them: what it asked for since the last answer is not known here); while pushes
                // are in flight, more items gather behind them until a batch fills or the linger passes
                boolean send = sourceDone || (!buffer.isEmpty() && (full || lingerExpired || pushes == 0))
                        || (poll && inFlight.isEmpty());
                if (!send || pushes >= windowPushes) {
                    break;
                }
                int count = batchCount();
                long lengthBytes = 4 + lengthOf(count);
                if (pushes > 0 && inFlightBytes + lengthBytes > windowBytes) {
                    break;
                }
                List<FrameCodec.Item> items = takeBatch(count);
                boolean end = sourceDone && buffer.isEmpty();
                Push push = new Push(nextSeq++, items, lengthBytes, end, end ? sourceError : null);
                inFlight.put(push.seq, push);
                inFlightBytes += lengthBytes;
                endSent = end;
                polling |= items.isEmpty() && !end;
                lingerExpired = false;
                dispose(lingerTimer);
                lingerTimer = null;
                if (toSend == null) {
                    toSend = new ArrayList<>(2);
                }
                toSend.add(push);
                if (items.isEmpty()) {
                    break;
                }
            }
            if (!buffer.isEmpty() && !endSent && !lingerExpired && lingerTimer == null) {
                lingerTimer = Schedulers.parallel().schedule(this::onLinger, lingerNs, TimeUnit.NANOSECONDS);
            }
            // after the pushes took what they could: a batch ahead, within the credit
            long room = Math.min(credit, batchSize) - buffer.size() - outstanding;
            if (room > 0 && !sourceDone && subscription != null) {
                outstanding += room;
                toRequest = subscription;
                request = room;
            }
        }
        // the pushes first: the source may emit (and items be encoded) within request()
        if (toSend != null) {
            for (Push push : toSend) {
                send(push);
            }
        }
        if (toRequest != null) {
            toRequest.request(request);
        }
    }

    /** Under the lock: how many buffered items one push takes. */
    private int batchCount() {
        int count = 0;
        long lengthBytes = 0;
        while (count < buffer.size() && count < batchSize) {
            FrameCodec.Item item = buffer.get(count);
            if (count > 0 && lengthBytes + item.frameBytes() > batchBytes) {
                break;
            }
            lengthBytes += item.frameBytes();
            count++;
        }
        return count;
    }

    /** Under the lock: the frame bytes of the first {@code count} buffered items. */
    private long lengthOf(int count) {
        long lengthBytes = 0;
        for (int i = 0; i < count; i++) {
            lengthBytes += buffer.get(i).frameBytes();
        }
        return lengthBytes;
    }

    /** Under the lock: takes the first {@code count} buffered items for a push. */
    private List<FrameCodec.Item> takeBatch(int count) {
        List<FrameCodec.Item> head = buffer.subList(0, count);
        List<FrameCodec.Item> items = new ArrayList<>(head);
        head.clear();
        bufferBytes -= lengthOf(items);
        credit -= items.size();
        return items;
    }

    private static long lengthOf(List<FrameCodec.Item> items) {
        long lengthBytes = 0;
        for (FrameCodec.Item item : items) {
            lengthBytes += item.frameBytes();
        }
        return lengthBytes;
    }

    private void onLinger() {
        synchronized (this) {
            lingerTimer = null;
            lingerExpired = true;
        }
        pump();
    }

    private void send(Push push) {
        Map<String, String> extra = new LinkedHashMap<>();
        extra.put(RpcMetadata.STREAM, RpcMetadata.STREAM_PUSH);
        extra.put(RpcMetadata.STREAM_ID, Long.toString(streamId));
        extra.put(RpcMetadata.STREAM_SEQ, Long.toString(push.seq));
        if (push.end) {
            extra.put(RpcMetadata.STREAM_END, "true");
        }
        Throwable failure = push.failure;
        if (failure != null) {
            HomaStatus status = failure instanceof HomaException homa ? homa.status() : HomaStatus.CANCELLED;
            extra.put(RpcMetadata.STREAM_ERROR_STATUS, status.name());
            extra.put(RpcMetadata.STREAM_ERROR_MESSAGE, ServerErrors.describe(failure));
            extra.put(RpcMetadata.ERROR_TYPE, failure.getClass().getName());
        }
        ByteBuf request;
        try {
            request = client.requestMessage(call, codec, startNs, timeoutNs, extra, FrameCodec.frameParts(push.items));
        } catch (RuntimeException e) {
            pushFailed(e);
            return;
        }
        Disposable subscription = client.transport().call(server, request)
                .map(ClientUpload::answerBytes)
                .contextWrite(context)
                .subscribe(bytes -> onPushed(push.seq, bytes), this::pushFailed);
        synchronized (this) {
            if (inFlight.get(push.seq) == push && !finished) {
                push.subscription = subscription;
            }
        }
    }

    /** A push's answer is a few bytes of metadata: copied out, and the message released at once. */
    private static byte[] answerBytes(ByteBuf message) {
        try {
            return ByteBufUtil.getBytes(message);
        } finally {
            message.release();
        }
    }

    /** A push's answer: taken in the order of the pushes. */
    private void onPushed(long seq, byte[] bytes) {
        synchronized (this) {
            if (finished || !inFlight.containsKey(seq)) {
                return;
            }
            arrived.put(seq, bytes);
        }
        while (true) {
            Push push;
            byte[] answer;
            synchronized (this) {
                if (taking || finished) {
                    return;
                }
                answer = arrived.remove(takeSeq);
                if (answer == null) {
                    break;
                }
                push = inFlight.remove(takeSeq);
                takeSeq++;
                inFlightBytes -= push.lengthBytes;
                if (push.items.isEmpty() && !push.end) {
                    polling = false;
                }
                taking = true;
            }
            try {
                if (!take(push, answer)) {
                    return;
                }
            } finally {
                synchronized (this) {
                    taking = false;
                }
            }
        }
        pump();
    }

    /**
     * One push's answer, in order: the credit it grants, or the end of the request stream.
     *
     * @return whether pushing goes on
     */
    private boolean take(Push push, byte[] bytes) {
        RpcEnvelope.Response response;
        long granted;
        long ahead;
        try {
            response = ClientErrors.decodeResponse(call, bytes);
            if (response.status() != HomaStatus.OK) {
                Throwable error = ClientErrors.remoteError(call, ClientErrors.remoteException(response), startNs,
                        timeoutNs, client.clock());
                if (response.status() == HomaStatus.NOT_FOUND) {
                    // the stream ended at the server, perhaps with an end still on its way here
                    stopPushing(error, true);
                } else {
                    pushFailed(error);
                }
                return false;
            }
            granted = Long.parseLong(response.metadata().getOrDefault(RpcMetadata.STREAM_CREDIT, "0"));
            if (granted < 0) {
                throw new NumberFormatException("negative credit " + granted);
            }
            ahead = Long.parseLong(response.metadata().getOrDefault(RpcMetadata.STREAM_AHEAD, "0"));
            if (ahead < 0) {
                throw new NumberFormatException("negative credit ahead " + ahead);
            }
        } catch (RuntimeException e) {
            pushFailed(e instanceof HomaException ? e : new HomaException(HomaStatus.INTERNAL,
                    "bad push response from " + call.fullMethodName() + ": " + e, e));
            return false;
        }
        boolean cancelledByServer = "true".equals(response.metadata().get(RpcMetadata.STREAM_UPLOAD_CANCELLED));
        Subscription toCancel = null;
        List<Disposable> abandoned = List.of();
        synchronized (this) {
            if (finished) {
                return false;
            }
            credit = credit + granted < 0 ? Long.MAX_VALUE : credit + granted;
            aheadCredit = ahead;
            if (push.end || cancelledByServer) {
                finished = true;
                dispose(lingerTimer);
                toCancel = push.end ? null : subscription;
                buffer.clear();
                abandoned = takeInFlight();
            }
        }
        abandoned.forEach(Disposable::dispose);
        if (toCancel != null) {
            toCancel.cancel();
        }
        if (push.end && push.failure != null) {
            owner.requestStreamFailed(push.failure);
            return false;
        }
        return !push.end && !cancelledByServer;
    }

    /** Under the lock: the subscriptions of the pushes in flight, which are forgotten. */
    private List<Disposable> takeInFlight() {
        List<Disposable> subscriptions = new ArrayList<>(inFlight.size());
        for (Push push : inFlight.values()) {
            if (push.subscription != null) {
                subscriptions.add(push.subscription);
            }
        }
        inFlight.clear();
        arrived.clear();
        inFlightBytes = 0;
        return subscriptions;
    }

    /** A push failed (its RPC or the server's answer): the whole call fails, unless it ended already. */
    private void pushFailed(Throwable error) {
        stopPushing(error, false);
    }

    /**
     * Stops the upload after a push failed; {@code streamGone}: the server no longer had the
     * stream, which the answers to the batch RPCs in flight tell more about than the push.
     */
    private void stopPushing(Throwable error, boolean streamGone) {
        Subscription toCancel;
        Throwable local;
        List<Disposable> abandoned;
        synchronized (this) {
            if (finished) {
                return;
            }
            finished = true;
            dispose(lingerTimer);
            toCancel = sourceDone ? null : subscription;
            local = sourceError;
            buffer.clear();
            abandoned = takeInFlight();
        }
        abandoned.forEach(Disposable::dispose);
        if (toCancel != null) {
            toCancel.cancel();
        }
        if (streamGone && local == null) {
            owner.requestStreamGone(error);
        } else {
            owner.requestStreamFailed(local != null ? local : error);
        }
    }

    /** The channel ended here (completed, failed, cancelled or expired): cancel the source, push no more. */
    void stop() {
        Subscription toCancel;
        List<Disposable> abandoned;
        synchronized (this) {
            if (finished) {
                return;
            }
            finished = true;
            toCancel = sourceDone ? null : subscription;
            abandoned = takeInFlight();
            dispose(lingerTimer);
            lingerTimer = null;
            buffer.clear();
        }
        if (toCancel != null) {
            toCancel.cancel();
        }
        abandoned.forEach(Disposable::dispose);
    }

    private static void dispose(@Nullable Disposable disposable) {
        if (disposable != null) {
            disposable.dispose();
        }
    }

    /** One push: its number, items, payload bytes, whether it ends the request stream, and its RPC once sent. */
    private static final class Push {
        final long seq;
        final List<FrameCodec.Item> items;
        final long lengthBytes;
        final boolean end;
        final @Nullable Throwable failure;
        @Nullable Disposable subscription;

        Push(long seq, List<FrameCodec.Item> items, long lengthBytes, boolean end, @Nullable Throwable failure) {
            this.seq = seq;
            this.items = items;
            this.lengthBytes = lengthBytes;
            this.end = end;
            this.failure = failure;
        }
    }
}
