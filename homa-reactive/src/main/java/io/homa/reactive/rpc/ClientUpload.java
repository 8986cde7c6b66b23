package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.internal.rpc.FrameCodec;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
 * and pushes its items to the server in batches, one push RPC at a time, never more than the
 * credit the server granted (what the method asked for). It requests from the source at most one
 * batch ahead within that credit, so it holds at most one batch besides the one in flight. With
 * no credit left and nothing to send it sends a push without items, which the server answers
 * when credit is due.
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
    private final Publisher<?> source;
    private final Context context;

    private @Nullable Subscription subscription;
    /** Items the server allows that were not pushed yet (buffered ones included). */
    private long credit;
    /** Items requested from the source and not received yet. */
    private long outstanding;
    private final List<byte[]> buffer = new ArrayList<>();
    private long bufferBytes;
    private boolean sourceDone;
    private @Nullable Throwable sourceError;
    private boolean pushing;
    /** The push in flight carries no items: it waits at the server for credit. */
    private boolean polling;
    private boolean lingerExpired;
    private @Nullable Disposable lingerTimer;
    private @Nullable Disposable inFlight;
    /** Nothing more happens: the end was pushed, the server cancelled, or the channel ended. */
    private boolean finished;

    ClientUpload(ClientStream<?> owner, HomaClient client, RpcCall call, PayloadCodec codec, InetSocketAddress server,
                 long streamId, long startNs, long timeoutNs, int batchSize, int batchBytes, long lingerNs,
                 Publisher<?> source, Context context, long initialCredit) {
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
        byte[] bytes;
        try {
            bytes = codec.encode(item);
            if (bytes.length + 4 > batchBytes) {
                throw new HomaException(HomaStatus.RESOURCE_EXHAUSTED, "an item of the request stream of "
                        + call.fullMethodName() + " is " + bytes.length + " bytes, more than the push limit of "
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
            buffer.add(bytes);
            bufferBytes += 4 + bytes.length;
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

    /** Requests from the source and sends the next push when one is due. */
    private void pump() {
        Subscription toRequest = null;
        long request = 0;
        List<byte[]> items = null;
        boolean end = false;
        Throwable failure = null;
        Disposable abandoned = null;
        synchronized (this) {
            if (finished) {
                return;
            }
            if (pushing && polling && sourceDone) {
                // The end need not wait for credit: give up the poll (the server answers a held poll
                // when the next push arrives) and send the end now.
                abandoned = inFlight;
                inFlight = null;
                pushing = false;
                polling = false;
            }
            long room = Math.min(credit, batchSize) - buffer.size() - outstanding;
            if (room > 0 && !sourceDone && subscription != null) {
                outstanding += room;
                toRequest = subscription;
                request = room;
            }
            if (!pushing) {
                boolean full = buffer.size() >= batchSize || buffer.size() >= credit || bufferBytes >= batchBytes / 2;
                boolean send = sourceDone || (!buffer.isEmpty() && (full || lingerExpired))
                        || (buffer.isEmpty() && credit == 0);
                if (send) {
                    items = takeBatch();
                    end = sourceDone && buffer.isEmpty();
                    failure = end ? sourceError : null;
                    pushing = true;
                    polling = items.isEmpty() && !end;
                    lingerExpired = false;
                    dispose(lingerTimer);
                    lingerTimer = null;
                } else if (!buffer.isEmpty() && lingerTimer == null) {
                    lingerTimer = Schedulers.parallel().schedule(this::onLinger, lingerNs, TimeUnit.NANOSECONDS);
                }
            }
        }
        if (abandoned != null) {
            abandoned.dispose();
        }
        if (toRequest != null) {
            toRequest.request(request);
        }
        if (items != null) {
            send(items, end, failure);
        }
    }

    /** Under the lock: the buffered items that fit one push. */
    private List<byte[]> takeBatch() {
        List<byte[]> items = new ArrayList<>(Math.min(buffer.size(), batchSize));
        long lengthBytes = 0;
        while (!buffer.isEmpty() && items.size() < batchSize) {
            byte[] item = buffer.get(0);
            if (!items.isEmpty() && lengthBytes + 4 + item.length > batchBytes) {
                break;
            }
            buffer.remove(0);
            items.add(item);
            lengthBytes += 4 + item.length;
        }
        bufferBytes -= lengthBytes;
        credit -= items.size();
        return items;
    }

    private void onLinger() {
        synchronized (this) {
            lingerTimer = null;
            lingerExpired = true;
        }
        pump();
    }

    private void send(List<byte[]> items, boolean end, @Nullable Throwable failure) {
        Map<String, String> extra = new LinkedHashMap<>();
        extra.put(RpcMetadata.STREAM, RpcMetadata.STREAM_PUSH);
        extra.put(RpcMetadata.STREAM_ID, Long.toString(streamId));
        if (end) {
            extra.put(RpcMetadata.STREAM_END, "true");
        }
        if (failure != null) {
            HomaStatus status = failure instanceof HomaException homa ? homa.status() : HomaStatus.CANCELLED;
            extra.put(RpcMetadata.STREAM_ERROR_STATUS, status.name());
            extra.put(RpcMetadata.STREAM_ERROR_MESSAGE, ServerErrors.describe(failure));
            extra.put(RpcMetadata.ERROR_TYPE, failure.getClass().getName());
        }
        byte[] request;
        try {
            request = client.encodeRequest(call, codec, startNs, timeoutNs, extra, FrameCodec.encodeFrames(items));
        } catch (RuntimeException e) {
            pushFailed(e);
            return;
        }
        Disposable subscription = client.transport().call(server, request)
                .contextWrite(context)
                .subscribe(bytes -> onPushed(bytes, end, failure), this::pushFailed);
        synchronized (this) {
            if (pushing && !finished) {
                inFlight = subscription;
            }
        }
    }

    private void onPushed(byte[] bytes, boolean end, @Nullable Throwable failure) {
        synchronized (this) {
            polling = false;
        }
        RpcEnvelope.Response response;
        long granted;
        try {
            response = ClientErrors.decodeResponse(call, bytes);
            if (response.status() != HomaStatus.OK) {
                pushFailed(ClientErrors.remoteError(call, ClientErrors.remoteException(response), startNs, timeoutNs,
                        client.clock()));
                return;
            }
            granted = Long.parseLong(response.metadata().getOrDefault(RpcMetadata.STREAM_CREDIT, "0"));
            if (granted < 0) {
                throw new NumberFormatException("negative credit " + granted);
            }
        } catch (RuntimeException e) {
            pushFailed(e instanceof HomaException ? e : new HomaException(HomaStatus.INTERNAL,
                    "bad push response from " + call.fullMethodName() + ": " + e, e));
            return;
        }
        boolean cancelledByServer = "true".equals(response.metadata().get(RpcMetadata.STREAM_UPLOAD_CANCELLED));
        Subscription toCancel = null;
        synchronized (this) {
            pushing = false;
            inFlight = null;
            if (finished) {
                return;
            }
            credit = credit + granted < 0 ? Long.MAX_VALUE : credit + granted;
            if (end || cancelledByServer) {
                finished = true;
                dispose(lingerTimer);
                toCancel = end ? null : subscription;
                buffer.clear();
            }
        }
        if (toCancel != null) {
            toCancel.cancel();
        }
        if (end && failure != null) {
            owner.requestStreamFailed(failure);
            return;
        }
        pump();
    }

    /** A push failed (its RPC or the server's answer): the whole call fails, unless it ended already. */
    private void pushFailed(Throwable error) {
        Subscription toCancel;
        Throwable local;
        synchronized (this) {
            pushing = false;
            inFlight = null;
            if (finished) {
                return;
            }
            finished = true;
            dispose(lingerTimer);
            toCancel = sourceDone ? null : subscription;
            local = sourceError;
            buffer.clear();
        }
        if (toCancel != null) {
            toCancel.cancel();
        }
        owner.requestStreamFailed(local != null ? local : error);
    }

    /** The channel ended here (completed, failed, cancelled or expired): cancel the source, push no more. */
    void stop() {
        Subscription toCancel;
        Disposable push;
        synchronized (this) {
            if (finished) {
                return;
            }
            finished = true;
            toCancel = sourceDone ? null : subscription;
            push = inFlight;
            inFlight = null;
            dispose(lingerTimer);
            lingerTimer = null;
            buffer.clear();
        }
        if (toCancel != null) {
            toCancel.cancel();
        }
        if (push != null) {
            push.dispose();
        }
    }

    private static void dispose(@Nullable Disposable disposable) {
        if (disposable != null) {
            disposable.dispose();
        }
    }
}
