package io.homa.grpc;

import io.grpc.Attributes;
import io.grpc.Context;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import io.homa.grpc.internal.GrpcThreads;
import io.homa.grpc.internal.GrpcWire;
import io.homa.grpc.internal.Outbound;
import io.homa.grpc.internal.SerializingExecutor;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * The server side of one gRPC call, on a request of the RPC layer: runs the method's
 * {@link ServerCallHandler} and turns what it sends into the response's frames (see
 * docs/grpc.md, "Wire mapping"). A unary call's frames are one payload ({@link #unaryResponse});
 * every other kind's are the items of a response stream ({@link #responses}), one message each.
 * Request messages reach the listener as it {@link #request requests} them.
 *
 * <p>The listener runs on the server's executor, one callback at a time, inside the call's
 * {@link Context}: cancelled when the call ends, is cancelled by the client, or passes its
 * deadline (the client's, carried in the request).
 */
final class HomaServerCall<ReqT, RespT> extends ServerCall<ReqT, RespT> {
    private static final Object HALF_CLOSE = new Object();
    private static final byte[] NO_BYTES = new byte[0];

    private final MethodDescriptor<ReqT, RespT> method;
    private final ServerCallHandler<ReqT, RespT> handler;
    private final GrpcWire.Request request;
    private final InetSocketAddress peer;
    private final SerializingExecutor callbacks;
    private final Context.CancellableContext context;
    private final Attributes attributes;
    private final Runnable onEnd;
    /**
     * Request messages ({@code byte[]} from a request stream, a {@link GrpcWire.Slice} of the
     * request for the one it carries) and the half-close, not yet given to the listener.
     */
    private final Queue<Object> inbound = new ConcurrentLinkedQueue<>();
    private final AtomicInteger requested = new AtomicInteger();

    // Guarded by this.
    private boolean headersSent;
    private boolean closed;
    private boolean cancelled;
    private int messagesSent;
    private @Nullable Metadata pendingHeaders;
    /** A unary call's frames before its message (the headers); the message and trailers join them at close. */
    private final ByteArrayOutputStream unaryFrames = new ByteArrayOutputStream();
    /** A unary call's message, kept apart so that it is copied once, into the response ({@link GrpcWire#frames}). */
    private byte @Nullable [] unaryMessage;
    private @Nullable MonoSink<byte[]> unarySink;
    private @Nullable Outbound outbound;
    private @Nullable Requests requests;
    private int requestedBeforeSubscribe;
    /** The client's request stream completed or failed. */
    private boolean requestsEnded;

    /** Touched on the callback executor only. */
    private @Nullable Listener<ReqT> listener;
    private boolean ended;

    HomaServerCall(MethodDescriptor<ReqT, RespT> method, ServerCallHandler<ReqT, RespT> handler,
                   GrpcWire.Request request, InetSocketAddress peer, Executor executor, Runnable onEnd) {
        this.method = method;
        this.handler = handler;
        this.request = request;
        this.peer = peer;
        this.callbacks = new SerializingExecutor(executor);
        this.onEnd = onEnd;
        this.context = request.timeoutNs() > 0
                ? Context.ROOT.withDeadlineAfter(request.timeoutNs(), TimeUnit.NANOSECONDS, GrpcThreads.timer())
                : Context.ROOT.withCancellation();
        this.attributes = Attributes.newBuilder().set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, peer).build();
    }

    /** A unary or client-sends-one call: the response's frames, once the method closes the call. */
    Mono<byte[]> unaryResponse() {
        return Mono.create(sink -> {
            synchronized (this) {
                unarySink = sink;
            }
            sink.onCancel(() -> cancel(Status.CANCELLED.withDescription("RPC cancelled")));
            start(null);
        });
    }

    /**
     * A streaming response: each item holds the frames sent since the one before.
     *
     * @param requestMessages the client's request stream, {@code null} for a server-streaming call
     *     (its one message came in the request)
     */
    Publisher<byte[]> responses(@Nullable Publisher<byte[]> requestMessages) {
        Outbound frames = new Outbound(this::ready, () -> cancel(Status.CANCELLED.withDescription("RPC cancelled")));
        synchronized (this) {
            outbound = frames;
        }
        return subscriber -> {
            frames.subscribe(subscriber);
            start(requestMessages);
        };
    }

    private void start(@Nullable Publisher<byte[]> requestMessages) {
        context.addListener(ignored -> contextCancelled(), Runnable::run);
        if (requestMessages == null) {
            if (request.message() != null) {
                inbound.add(request.message());
            }
            inbound.add(HALF_CLOSE);
        } else {
            Requests subscriber = new Requests();
            requestMessages.subscribe(subscriber);
        }
        callbacks.execute(() -> {
            if (ended) {
                return;
            }
            Context previous = context.attach();
            try {
                listener = handler.startCall(this, request.headers());
                if (listener == null) {
                    throw new NullPointerException("startCall() returned a null listener for " + method.getFullMethodName());
                }
            } catch (RuntimeException | Error e) {
                applicationFailed(e);
                return;
            } finally {
                context.detach(previous);
            }
            if (isReady()) {
                invoke(Listener::onReady);
            }
        });
        callbacks.execute(this::deliver);
    }

    @Override
    public void request(int numMessages) {
        if (numMessages <= 0) {
            throw new IllegalArgumentException("numMessages must be positive, was " + numMessages);
        }
        Requests subscriber;
        synchronized (this) {
            subscriber = requests;
            if (subscriber == null) {
                requestedBeforeSubscribe += numMessages;
            }
        }
        requested.accumulateAndGet(numMessages, (a, b) -> (int) Math.min(Integer.MAX_VALUE, (long) a + b));
        if (subscriber != null) {
            subscriber.request(numMessages);
        }
        callbacks.execute(this::deliver);
    }

    @Override
    public void sendHeaders(Metadata headers) {
        synchronized (this) {
            if (headersSent) {
                throw new IllegalStateException("sendHeaders has already been called");
            }
            if (closed) {
                throw new IllegalStateException("call is closed");
            }
            headersSent = true;
            if (unarySink != null) {
                GrpcWire.writeHeaders(unaryFrames, headers);
            } else {
                // Travels with the first message or the trailers: one item, one unit of the client's demand.
                pendingHeaders = headers;
            }
        }
    }

    @Override
    public void sendMessage(RespT message) {
        byte[] bytes;
        try (InputStream stream = method.streamResponse(message)) {
            bytes = stream.readAllBytes();
        } catch (IOException | RuntimeException e) {
            close(Status.INTERNAL.withDescription("Failed to marshal the response").withCause(e), new Metadata());
            return;
        }
        boolean tooMany = false;
        synchronized (this) {
            if (!headersSent) {
                throw new IllegalStateException("sendHeaders has not been called");
            }
            if (closed) {
                throw new IllegalStateException("call is closed");
            }
            if (cancelled) {
                return;
            }
            messagesSent++;
            if (method.getType().serverSendsOneMessage() && messagesSent > 1) {
                tooMany = true;
            } else if (unarySink != null) {
                unaryMessage = bytes;
            } else if (outbound != null) {
                ByteArrayOutputStream headers = new ByteArrayOutputStream(pendingHeaders == null ? 0 : 64);
                if (pendingHeaders != null) {
                    GrpcWire.writeHeaders(headers, pendingHeaders);
                    pendingHeaders = null;
                }
                outbound.offer(GrpcWire.frames(headers.toByteArray(), bytes, NO_BYTES));
            }
        }
        if (tooMany) {
            closeQuietly(Status.INTERNAL.withDescription("Too many responses"), new Metadata());
        }
    }

    @Override
    public void close(Status status, Metadata trailers) {
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("call already closed");
            }
        }
        closeQuietly(status, trailers);
    }

    /** Closes unless closed already: the trailers go out after what was sent. */
    private void closeQuietly(Status status, Metadata trailers) {
        MonoSink<byte[]> sink;
        byte[] frames;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            if (cancelled) {
                return;
            }
            sink = unarySink;
            if (sink != null) {
                ByteArrayOutputStream trailersFrame = new ByteArrayOutputStream(64);
                GrpcWire.writeTrailers(trailersFrame, status, trailers);
                frames = GrpcWire.frames(unaryFrames.toByteArray(), unaryMessage, trailersFrame.toByteArray());
                unaryMessage = null;
            } else {
                ByteArrayOutputStream item = new ByteArrayOutputStream(64);
                if (pendingHeaders != null) {
                    GrpcWire.writeHeaders(item, pendingHeaders);
                    pendingHeaders = null;
                }
                GrpcWire.writeTrailers(item, status, trailers);
                frames = item.toByteArray();
                if (outbound != null) {
                    outbound.offer(frames);
                    if (requests == null || requestsEnded) {
                        outbound.complete();
                    }
                }
                if (requests != null && !requestsEnded) {
                    // Neither cancelled nor ended yet: a push in flight would be refused, or find
                    // the stream gone, and that error could reach the client before the trailers.
                    // The client ends its request stream when the trailers arrive; this stream
                    // ends after it (requestsEnded).
                    requests.discardTheRest();
                }
            }
        }
        if (sink != null) {
            sink.success(frames);
        }
        callbacks.execute(() -> end(false));
    }

    /** The client cancelled, the deadline passed or the server stopped the request: the call ends here. */
    void cancel(Status status) {
        synchronized (this) {
            if (closed || cancelled) {
                return;
            }
            cancelled = true;
            inbound.clear();
            ByteArrayOutputStream item = new ByteArrayOutputStream(64);
            GrpcWire.writeTrailers(item, status, new Metadata());
            if (unarySink != null) {
                // Nobody waits for it any more; the RPC layer's call must still end.
                unarySink.success(item.toByteArray());
            }
            if (outbound != null) {
                outbound.offer(item.toByteArray());
                outbound.complete();
            }
            if (requests != null) {
                requests.dispose();
            }
        }
        context.cancel(status.asRuntimeException());
        callbacks.execute(() -> end(true));
    }

    private void contextCancelled() {
        Throwable cause = context.cancellationCause();
        if (cause instanceof java.util.concurrent.TimeoutException) {
            cancel(Status.DEADLINE_EXCEEDED.withDescription("deadline passed at the server").withCause(cause));
        } else {
            cancel(Status.CANCELLED.withDescription("Context cancelled").withCause(cause));
        }
    }

    /** The last callback: onComplete after a close, onCancel after a cancel; then the context is cancelled. */
    private void end(boolean wasCancelled) {
        if (ended) {
            return;
        }
        ended = true;
        inbound.clear();
        if (listener != null) {
            Listener<ReqT> l = listener;
            Context previous = context.attach();
            try {
                if (wasCancelled) {
                    l.onCancel();
                } else {
                    l.onComplete();
                }
            } catch (RuntimeException | Error e) {
                org.slf4j.LoggerFactory.getLogger(HomaServerCall.class)
                        .warn("{} of {} threw", wasCancelled ? "onCancel" : "onComplete", method.getFullMethodName(), e);
            } finally {
                context.detach(previous);
            }
        }
        context.cancel(null);
        onEnd.run();
    }

    /** Gives the listener the messages it asked for and the half-close. Callback executor only. */
    private void deliver() {
        Object next;
        while (!ended && listener != null && (next = inbound.peek()) != null) {
            if (next == HALF_CLOSE) {
                inbound.poll();
                invoke(Listener::onHalfClose);
                continue;
            }
            if (requested.get() <= 0) {
                return;
            }
            inbound.poll();
            requested.decrementAndGet();
            ReqT message;
            try {
                message = method.parseRequest(next instanceof GrpcWire.Slice slice ? slice.stream()
                        : new ByteArrayInputStream((byte[]) next));
            } catch (RuntimeException e) {
                closeQuietly(Status.INTERNAL.withDescription("Failed to read the request").withCause(e), new Metadata());
                return;
            }
            invoke(l -> l.onMessage(message));
        }
    }

    private void ready() {
        callbacks.execute(() -> invoke(Listener::onReady));
    }

    /** Runs a listener callback in the call's context; a throw ends the call as grpc-java does (UNKNOWN). */
    private void invoke(java.util.function.Consumer<Listener<ReqT>> callback) {
        Listener<ReqT> l = listener;
        if (ended || l == null) {
            return;
        }
        Context previous = context.attach();
        try {
            callback.accept(l);
        } catch (RuntimeException | Error e) {
            applicationFailed(e);
        } finally {
            context.detach(previous);
        }
    }

    private void applicationFailed(Throwable error) {
        Metadata trailers = Status.trailersFromThrowable(error);
        closeQuietly(Status.UNKNOWN.withDescription("Application error processing RPC").withCause(error),
                trailers == null ? new Metadata() : trailers);
    }

    @Override
    public synchronized boolean isReady() {
        if (closed || cancelled) {
            return false;
        }
        return outbound == null || outbound.isReady();
    }

    @Override
    public synchronized boolean isCancelled() {
        return cancelled;
    }

    @Override
    public Attributes getAttributes() {
        return attributes;
    }

    @Override
    public @Nullable String getAuthority() {
        return request.authority().isEmpty() ? null : request.authority();
    }

    @Override
    public MethodDescriptor<ReqT, RespT> getMethodDescriptor() {
        return method;
    }

    /** The call's deadline context (for tests and logs). */
    Context context() {
        return context;
    }

    /** The client's request stream: each item a request message; its demand is the listener's requests. */
    private final class Requests extends BaseSubscriber<byte[]> {
        private volatile boolean discarding;

        /** The call is closed: takes whatever the client still sends and drops it, as grpc-java does. */
        void discardTheRest() {
            discarding = true;
            request(Long.MAX_VALUE);
        }

        /** Notes the end of the request stream; true if the call is closed already (then the responses end now). */
        private boolean ended() {
            Outbound frames;
            synchronized (HomaServerCall.this) {
                requestsEnded = true;
                if (!discarding) {
                    return false;
                }
                frames = outbound;
            }
            if (frames != null) {
                frames.complete();
            }
            return true;
        }

        @Override
        protected void hookOnSubscribe(Subscription subscription) {
            int early;
            synchronized (HomaServerCall.this) {
                requests = this;
                early = requestedBeforeSubscribe;
                requestedBeforeSubscribe = 0;
            }
            if (early > 0) {
                subscription.request(early);
            }
        }

        @Override
        protected void hookOnNext(byte[] message) {
            if (discarding) {
                return;
            }
            inbound.add(message);
            callbacks.execute(HomaServerCall.this::deliver);
        }

        @Override
        protected void hookOnComplete() {
            if (ended()) {
                return;
            }
            inbound.add(HALF_CLOSE);
            callbacks.execute(HomaServerCall.this::deliver);
        }

        @Override
        protected void hookOnError(Throwable error) {
            if (ended()) {
                return;
            }
            HomaServerCall.this.cancel(Status.CANCELLED.withDescription("the client's request stream failed: " + error.getMessage())
                    .withCause(error));
        }
    }
}
