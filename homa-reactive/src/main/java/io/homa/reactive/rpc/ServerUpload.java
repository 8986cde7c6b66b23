package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.internal.rpc.FrameCodec;
import java.lang.reflect.Type;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Operators;

/**
 * The server side of a channel's request stream: the {@code Publisher} a method with a
 * {@code Flux} parameter receives. Credit is what the method's subscriber asked for: each push
 * response grants the client the demand not granted yet, so the client never sends more than the
 * method requested, and nothing is buffered here (items are signalled on the thread that handles
 * the push, one push at a time). A push without items while no credit is due is held until the
 * method asks for more, cancels, or the channel ends.
 *
 * <p>State is guarded by {@code this}; subscriber signals and sink answers happen outside it.
 */
final class ServerUpload implements Publisher<Object>, Subscription {
    /** Most credit one response grants (a client never needs more than a batch or two ahead). */
    static final long MAX_CREDIT_PER_RESPONSE = RpcDispatcher.MAX_STREAM_REQUEST;

    private final String name;
    private final Type elementType;
    private final PayloadCodec codec;

    private @Nullable Subscriber<? super Object> subscriber;
    /** Items the subscriber asked for, saturating at {@code Long.MAX_VALUE}. */
    private long requested;
    /** Items the client was told it may send. */
    private long granted;
    /** Items received from the client. */
    private long received;
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

    ServerUpload(String name, Type elementType, PayloadCodec codec) {
        this.name = name;
        this.elementType = elementType;
        this.codec = codec;
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
            deliverTerminal();
        }
    }

    @Override
    public void request(long n) {
        if (n <= 0) {
            fail(new IllegalArgumentException("request of the request stream of " + name + " must be positive, was " + n));
            return;
        }
        MonoSink<RpcEnvelope.Response> answer;
        long credit;
        synchronized (this) {
            requested = requested + n < 0 ? Long.MAX_VALUE : requested + n;
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
            answer = poll;
            poll = null;
        }
        if (answer != null) {
            answer.success(creditResponse(0, true));
        }
    }

    /** Under the lock: the demand not granted yet, now granted (at most {@link #MAX_CREDIT_PER_RESPONSE}). */
    private long takeCredit() {
        if (cancelled || terminated) {
            return 0;
        }
        long credit = Math.min(requested - granted, MAX_CREDIT_PER_RESPONSE);
        granted += credit;
        return credit;
    }

    /** Whether a push is waiting here (for credit) or being handled: the client is active. */
    synchronized boolean holdingPush() {
        return poll != null || pushing;
    }

    /** The answer to the channel's open: the credit due so far (usually 0: the method has not subscribed yet). */
    synchronized long openCredit() {
        return takeCredit();
    }

    /**
     * Handles one push: signals its items to the method, then the end or failure it carries, and
     * answers with new credit (at once when the push carried items or ended the stream, else once
     * credit is due).
     *
     * @param payload the items' frames (may be empty)
     * @param end whether the request stream ends after these items
     * @param failure the request stream's failure (with {@code end}), or {@code null}
     * @throws HomaException FAILED_PRECONDITION for a push while another is in flight, after the
     *     end, or with more items than granted (the method's {@code Flux} then fails too);
     *     INVALID_ARGUMENT for an item that does not decode (likewise)
     */
    Mono<RpcEnvelope.Response> push(byte[] payload, boolean end, @Nullable HomaRemoteException failure) {
        return Mono.create(sink -> {
            List<byte[]> frames;
            List<Object> items;
            Subscriber<? super Object> target;
            MonoSink<RpcEnvelope.Response> abandoned;
            synchronized (this) {
                if (pushing) {
                    sink.error(new HomaException(HomaStatus.FAILED_PRECONDITION,
                            "a push to the request stream of " + name + " is already in flight"));
                    return;
                }
                // A client sends a push while its poll is held only after giving the poll up.
                abandoned = poll;
                poll = null;
                if (terminated) {
                    sink.error(new HomaException(HomaStatus.FAILED_PRECONDITION,
                            "the request stream of " + name + " has ended"));
                    return;
                }
                if (cancelled) {
                    sink.success(creditResponse(0, true));
                    return;
                }
                pushing = true;
                target = subscriber;
            }
            if (abandoned != null) {
                abandoned.success(creditResponse(0, false));
            }
            HomaException rejection = null;
            frames = List.of();
            items = List.of();
            try {
                frames = payload.length == 0 ? List.of() : FrameCodec.decodeFrames(payload);
                synchronized (this) {
                    long allowed = granted - received;
                    if (frames.size() > allowed) {
                        rejection = new HomaException(HomaStatus.FAILED_PRECONDITION, "a push to the request stream of "
                                + name + " carried " + frames.size() + " items, only " + allowed + " were granted");
                    } else {
                        received += frames.size();
                    }
                }
                if (rejection == null) {
                    items = FrameCodec.decodeItems(frames, codec, elementType, HomaStatus.INVALID_ARGUMENT,
                            "the request stream of " + name);
                }
            } catch (HomaException e) {
                rejection = e;
            } catch (RuntimeException e) {
                rejection = new HomaException(HomaStatus.INVALID_ARGUMENT,
                        "bad push to the request stream of " + name + ": " + ServerErrors.describe(e), e);
            }
            if (rejection != null) {
                synchronized (this) {
                    pushing = false;
                }
                fail(rejection);
                sink.error(rejection);
                return;
            }
            if (target != null) {
                for (Object item : items) {
                    synchronized (this) {
                        if (cancelled || terminated) {
                            break;
                        }
                    }
                    target.onNext(item);
                }
            }
            if (end) {
                terminate(failure);
            }
            long credit;
            boolean nowCancelled;
            boolean hold;
            synchronized (this) {
                pushing = false;
                credit = takeCredit();
                nowCancelled = cancelled;
                hold = credit == 0 && frames.isEmpty() && !end && !cancelled && !terminated;
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
        });
    }

    /**
     * Ends the request stream from the server's side (the channel was cancelled, expired or
     * failed): the method's {@code Flux} fails with {@code reason} unless it ended, and a held
     * push is answered. Idempotent.
     */
    void fail(Throwable reason) {
        MonoSink<RpcEnvelope.Response> answer;
        synchronized (this) {
            answer = poll;
            poll = null;
        }
        terminate(reason);
        if (answer != null) {
            answer.success(creditResponse(0, true));
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
        deliverTerminal();
    }

    private void deliverTerminal() {
        Subscriber<? super Object> target;
        Throwable failure;
        synchronized (this) {
            target = subscriber;
            if (target == null || terminalDelivered || cancelled) {
                return;
            }
            terminalDelivered = true;
            failure = terminalError;
        }
        if (failure == null) {
            target.onComplete();
        } else {
            target.onError(failure);
        }
    }

    private static RpcEnvelope.Response creditResponse(long credit, boolean cancelled) {
        RpcEnvelope.Response response = new RpcEnvelope.Response(HomaStatus.OK, "",
                Map.of(RpcMetadata.STREAM_CREDIT, Long.toString(credit)), new byte[0]);
        return cancelled ? response.withMetadata(RpcMetadata.STREAM_UPLOAD_CANCELLED, "true") : response;
    }
}
