package io.homa.grpc;

import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.homa.grpc.internal.GrpcThreads;
import io.homa.grpc.internal.GrpcWire;
import io.homa.grpc.internal.Outbound;
import io.homa.grpc.internal.SerializingExecutor;
import io.homa.grpc.internal.Statuses;
import io.homa.reactive.rpc.CallOptions;
import io.homa.reactive.rpc.HomaClient;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

/**
 * One gRPC call of a {@link HomaManagedChannel}, on the RPC layer (see docs/grpc.md, "Wire
 * mapping"): a unary call is one RPC whose request carries the prelude and the message and whose
 * response carries the headers, the message and the trailers; a server-streaming call is a stream
 * of the RPC layer opened at half-close; a client- or bidirectional-streaming call is a channel of
 * the RPC layer opened at {@link #start}, its request stream fed by {@link #sendMessage}.
 *
 * <p>Listener callbacks run on the call's executor through a {@link SerializingExecutor}: one at
 * a time, in order (onHeaders, onMessage..., onClose once), and onClose last.
 */
final class HomaClientCall<ReqT, RespT> extends ClientCall<ReqT, RespT> {
    private final HomaManagedChannel channel;
    private final MethodDescriptor<ReqT, RespT> method;
    private final io.grpc.CallOptions callOptions;
    private final Context context;
    private final SerializingExecutor callbacks;
    private final String service;
    private final String bareMethod;
    private final long callId = ThreadLocalRandom.current().nextLong() | 1;
    /** Frames received and not yet given to the listener; a local close clears them. */
    private final Queue<Delivery> inbound = new ConcurrentLinkedQueue<>();
    /** Messages the application asked for and has not had yet. */
    private final AtomicInteger appRequested = new AtomicInteger();
    private final Context.CancellationListener contextListener = this::contextCancelled;

    // Guarded by this.
    private @Nullable Listener<RespT> listener;
    private boolean started;
    private boolean halfClosed;
    /** Trailers (received or local) are queued: nothing else will be. */
    private boolean finished;
    private boolean unarySent;
    private boolean unaryAnswered;
    private byte @Nullable [] unaryMessage;
    private int unaryMessages;
    private long deadlineNs;
    private @Nullable Disposable unary;
    private @Nullable Results results;
    private @Nullable Outbound requests;
    private @Nullable ScheduledFuture<?> deadlineTimer;

    private @Nullable Metadata headers;
    private long startNs;
    /** Requests made before a server stream opens (at half-close), passed on when it does. */
    private final AtomicInteger pendingRequests = new AtomicInteger();

    /** Touched only on the callback executor. */
    private boolean closeDelivered;

    HomaClientCall(HomaManagedChannel channel, MethodDescriptor<ReqT, RespT> method,
                   io.grpc.CallOptions callOptions, Executor executor) {
        this.channel = channel;
        this.method = method;
        this.callOptions = callOptions;
        this.context = Context.current();
        this.callbacks = new SerializingExecutor(executor);
        String fullService = method.getServiceName();
        this.service = fullService == null ? "" : fullService;
        this.bareMethod = method.getBareMethodName() == null ? method.getFullMethodName()
                : method.getBareMethodName();
    }

    @Override
    public void start(Listener<RespT> responseListener, Metadata headers) {
        Status failure = null;
        Deadline deadline;
        synchronized (this) {
            if (started) {
                throw new IllegalStateException("Already started");
            }
            started = true;
            listener = responseListener;
            deadline = effectiveDeadline();
            this.headers = headers;
            startNs = System.nanoTime();
            if (!channel.callStarted(this)) {
                failure = Status.UNAVAILABLE.withDescription("Channel shutdown invoked");
            } else if (service.isEmpty()) {
                failure = Status.INTERNAL.withDescription("no service in method name " + method.getFullMethodName());
            } else if (context.isCancelled()) {
                failure = statusOfCancelledContext();
            } else if (deadline != null && deadline.isExpired()) {
                failure = Status.DEADLINE_EXCEEDED.withDescription("ClientCall started after "
                        + (deadline == context.getDeadline() ? "Context" : "CallOptions") + " deadline was exceeded");
            }
            if (failure == null) {
                if (deadline != null) {
                    long remainingNs = Math.max(1, deadline.timeRemaining(TimeUnit.NANOSECONDS));
                    deadlineNs = System.nanoTime() + remainingNs;
                    deadlineTimer = GrpcThreads.timer().schedule(this::deadlinePassed, remainingNs, TimeUnit.NANOSECONDS);
                }
                context.addListener(contextListener, Runnable::run);
                if (!method.getType().clientSendsOneMessage()) {
                    openChannel(headers);
                }
            }
        }
        if (failure != null) {
            closeLocally(failure, new Metadata());
            return;
        }
        if (method.getType().clientSendsOneMessage()) {
            // One request message: always ready to take it.
            callbacks.execute(() -> {
                if (!closeDelivered) {
                    responseListener.onReady();
                }
            });
        }
    }

    private @Nullable Deadline effectiveDeadline() {
        Deadline fromOptions = callOptions.getDeadline();
        Deadline fromContext = context.getDeadline();
        if (fromOptions == null) {
            return fromContext;
        }
        return fromContext == null ? fromOptions : fromOptions.minimum(fromContext);
    }

    /** The timeout to send: what is left of the deadline, 0 for none. */
    private long remainingNs() {
        if (deadlineTimer == null) {
            return 0;
        }
        return Math.max(1, deadlineNs - System.nanoTime());
    }

    private CallOptions homaOptions(long timeoutNs) {
        return CallOptions.defaults()
                .withTimeout(timeoutNs == 0 ? Duration.ZERO : Duration.ofNanos(timeoutNs))
                .withIdempotent(method.isIdempotent());
    }

    /** Client and bidirectional streaming: the channel of the RPC layer opens now. Holds the lock. */
    private void openChannel(Metadata headers) {
        long timeoutNs = remainingNs();
        byte[] prelude = GrpcWire.encodeRequest(callId, timeoutNs, channel.authority(), headers, null);
        Outbound outbound = new Outbound(this::requestsReady, () -> { });
        requests = outbound;
        Results subscriber = new Results();
        results = subscriber;
        HomaClient client = channel.homaClient();
        client.<byte[]>channel(service, bareMethod, new Object[] {prelude, Flux.from(outbound)}, byte[].class,
                homaOptions(timeoutNs)).subscribe(subscriber);
    }

    @Override
    public void request(int numMessages) {
        if (numMessages <= 0) {
            throw new IllegalArgumentException("numMessages must be positive, was " + numMessages);
        }
        Results subscriber;
        synchronized (this) {
            if (!started) {
                throw new IllegalStateException("Not started");
            }
            subscriber = results;
            if (subscriber == null) {
                // The response stream opens at half-close: it asks for these then.
                pendingRequests.addAndGet(numMessages);
            }
        }
        appRequested.accumulateAndGet(numMessages, (a, b) -> (int) Math.min(Integer.MAX_VALUE, (long) a + b));
        if (subscriber != null) {
            subscriber.request(numMessages);
        }
        callbacks.execute(this::deliver);
    }

    @Override
    public void cancel(@Nullable String message, @Nullable Throwable cause) {
        if (message == null && cause == null) {
            message = "Cancelled without a message or cause";
        }
        Status status = Status.CANCELLED.withDescription(message);
        if (cause != null) {
            status = status.withCause(cause);
        }
        synchronized (this) {
            if (!started) {
                // As grpc-java: a call never started has no listener to tell.
                return;
            }
        }
        closeLocally(status, new Metadata());
    }

    @Override
    public void halfClose() {
        Metadata sendHeaders;
        byte[] message;
        long timeoutNs;
        synchronized (this) {
            if (!started) {
                throw new IllegalStateException("Not started");
            }
            if (halfClosed) {
                throw new IllegalStateException("call already half-closed");
            }
            halfClosed = true;
            if (finished) {
                return;
            }
            if (!method.getType().clientSendsOneMessage()) {
                if (requests != null) {
                    requests.complete();
                }
                return;
            }
            sendHeaders = headers == null ? new Metadata() : headers;
            message = unaryMessage;
            timeoutNs = remainingNs();
        }
        byte[] request = GrpcWire.encodeRequest(callId, timeoutNs, channel.authority(), sendHeaders, message);
        HomaClient client = channel.homaClient();
        synchronized (this) {
            if (finished) {
                return;
            }
            if (method.getType().serverSendsOneMessage()) {
                unarySent = true;
                unary = client.<byte[]>call(service, bareMethod, new Object[] {request}, byte[].class,
                        homaOptions(timeoutNs)).subscribe(this::unaryAnswered, this::rpcFailed,
                        () -> rpcFailed(new IllegalStateException("empty response")));
            } else {
                Results subscriber = new Results();
                results = subscriber;
                client.<byte[]>stream(service, bareMethod, new Object[] {request}, byte[].class, homaOptions(timeoutNs))
                        .subscribe(subscriber);
            }
        }
    }

    @Override
    public void sendMessage(ReqT message) {
        byte[] bytes;
        try (InputStream stream = method.streamRequest(message)) {
            bytes = stream.readAllBytes();
        } catch (IOException | RuntimeException e) {
            closeLocally(Status.INTERNAL.withDescription("Failed to marshal the request").withCause(e), new Metadata());
            return;
        }
        synchronized (this) {
            if (!started) {
                throw new IllegalStateException("Not started");
            }
            if (halfClosed) {
                throw new IllegalStateException("call was half-closed");
            }
            if (finished) {
                return;
            }
            if (method.getType().clientSendsOneMessage()) {
                unaryMessages++;
                unaryMessage = bytes;
                if (unaryMessages == 1) {
                    return;
                }
            } else {
                if (requests != null) {
                    requests.offer(bytes);
                }
                return;
            }
        }
        {
            closeLocally(Status.INTERNAL.withDescription("More than one request message for "
                    + method.getType() + " method " + method.getFullMethodName()), new Metadata());
        }
    }

    @Override
    public synchronized boolean isReady() {
        if (!started || halfClosed || finished) {
            return false;
        }
        return requests == null || requests.isReady();
    }

    @Override
    public io.grpc.Attributes getAttributes() {
        return channel.callAttributes();
    }

    private void requestsReady() {
        callbacks.execute(() -> {
            Listener<RespT> l = listener;
            if (!closeDelivered && l != null) {
                l.onReady();
            }
        });
    }

    private void unaryAnswered(byte[] response) {
        synchronized (this) {
            unaryAnswered = true;
        }
        List<GrpcWire.Frame> frames;
        try {
            frames = GrpcWire.decodeFrames(response);
        } catch (IllegalArgumentException e) {
            closeLocally(Status.INTERNAL.withDescription(e.getMessage()).withCause(e), new Metadata());
            return;
        }
        received(frames);
        synchronized (this) {
            if (!finished) {
                // A unary response always ends with the trailers.
                finished = true;
                inbound.add(new Delivery(null, null, Status.INTERNAL.withDescription(
                        "response without trailers for " + method.getFullMethodName()), new Metadata()));
            }
        }
        callbacks.execute(this::deliver);
    }

    /** Queues frames that arrived from the server; the trailers finish the call. */
    private void received(List<GrpcWire.Frame> frames) {
        synchronized (this) {
            for (GrpcWire.Frame frame : frames) {
                if (finished) {
                    return;
                }
                switch (frame.type()) {
                    case GrpcWire.HEADERS -> inbound.add(new Delivery(frame.headers(), null, null, null));
                    case GrpcWire.MESSAGE -> inbound.add(new Delivery(null, frame.message(), null, null));
                    default -> {
                        finished = true;
                        inbound.add(new Delivery(null, null, frame.status(), frame.trailers()));
                        if (requests != null) {
                            // The server waits for the end of the request stream before it ends its own.
                            requests.complete();
                        }
                        endRpc(false);
                    }
                }
            }
        }
    }

    private void rpcFailed(Throwable error) {
        closeLocally(Statuses.fromRpcError(error, method.getFullMethodName()), new Metadata());
    }

    private void deadlinePassed() {
        closeLocally(Status.DEADLINE_EXCEEDED.withDescription("deadline exceeded after "
                + (System.nanoTime() - startNs) + " ns for " + method.getFullMethodName()), new Metadata());
    }

    private void contextCancelled(Context cancelled) {
        closeLocally(statusOfCancelledContext(), new Metadata());
    }

    private Status statusOfCancelledContext() {
        Throwable cause = context.cancellationCause();
        if (cause instanceof java.util.concurrent.TimeoutException) {
            return Status.DEADLINE_EXCEEDED.withDescription("Context deadline exceeded").withCause(cause);
        }
        return Status.CANCELLED.withDescription("io.grpc.Context was cancelled").withCause(cause);
    }

    /**
     * Ends the call here: messages not yet delivered are dropped, the listener gets {@code status}
     * next, and the server is told (the stream's cancel, or the cancel RPC for a unary call).
     */
    private void closeLocally(Status status, Metadata trailers) {
        synchronized (this) {
            if (finished) {
                return;
            }
            finished = true;
            inbound.clear();
            inbound.add(new Delivery(null, null, status, trailers));
            endRpc(true);
        }
        callbacks.execute(this::deliver);
    }

    /** Stops what the call still runs. Holds the lock. */
    private void endRpc(boolean abandon) {
        if (deadlineTimer != null) {
            deadlineTimer.cancel(false);
        }
        context.removeListener(contextListener);
        if (!abandon) {
            return;
        }
        if (results != null) {
            results.dispose();
        }
        if (requests != null) {
            requests.complete();
        }
        if (unary != null) {
            unary.dispose();
            if (unarySent && !unaryAnswered) {
                // Homa has no cancel of its own: tell the server's call with an RPC of ours.
                channel.homaClient().call(GrpcWire.CANCEL_SERVICE, GrpcWire.CANCEL_METHOD,
                                new Object[] {GrpcWire.encodeCallId(callId)}, byte[].class,
                                CallOptions.defaults().withTimeout(HomaManagedChannel.CANCEL_TIMEOUT))
                        .subscribe(ignored -> { }, ignored -> { });
            }
        }
    }

    /** Gives the listener what it may have now. Runs on the callback executor only. */
    private void deliver() {
        Listener<RespT> l = listener;
        if (l == null || closeDelivered) {
            return;
        }
        Delivery next;
        while ((next = inbound.peek()) != null) {
            if (next.status != null) {
                inbound.poll();
                closeDelivered = true;
                try {
                    l.onClose(next.status, next.trailers == null ? new Metadata() : next.trailers);
                } finally {
                    channel.callEnded(this);
                }
                return;
            }
            if (next.headers != null) {
                inbound.poll();
                try {
                    l.onHeaders(next.headers);
                } catch (RuntimeException e) {
                    closeLocally(Status.CANCELLED.withDescription("Failed to read headers").withCause(e), new Metadata());
                }
                continue;
            }
            if (appRequested.get() <= 0) {
                return;
            }
            inbound.poll();
            appRequested.decrementAndGet();
            RespT message;
            try {
                message = method.parseResponse(next.message.stream());
            } catch (RuntimeException e) {
                closeLocally(Status.INTERNAL.withDescription("Failed to read message.").withCause(e), new Metadata());
                continue;
            }
            try {
                l.onMessage(message);
            } catch (RuntimeException e) {
                closeLocally(Status.CANCELLED.withDescription("Failed to read message.").withCause(e), new Metadata());
            }
        }
    }

    /** Cancels the call as the channel's {@code shutdownNow} does. */
    void shutdownNow() {
        closeLocally(Status.UNAVAILABLE.withDescription("Channel shutdownNow invoked"), new Metadata());
    }

    @Override
    public String toString() {
        return "HomaClientCall{" + method.getFullMethodName() + "}";
    }

    /** One thing for the listener: headers, a message, or the close. */
    private record Delivery(@Nullable Metadata headers, GrpcWire.@Nullable Slice message, @Nullable Status status,
                            @Nullable Metadata trailers) {
    }

    /**
     * Receives the items of a response stream: the stream of the RPC layer is requested what the
     * application requested plus one item, so that the trailers can come after the messages it
     * asked for.
     */
    private final class Results extends BaseSubscriber<byte[]> {
        @Override
        protected void hookOnSubscribe(Subscription subscription) {
            subscription.request(1L + Math.max(0, pendingRequests.getAndSet(0)));
        }

        @Override
        protected void hookOnNext(byte[] item) {
            List<GrpcWire.Frame> frames;
            try {
                frames = GrpcWire.decodeFrames(item);
            } catch (IllegalArgumentException e) {
                closeLocally(Status.INTERNAL.withDescription(e.getMessage()).withCause(e), new Metadata());
                return;
            }
            received(frames);
            callbacks.execute(HomaClientCall.this::deliver);
        }

        @Override
        protected void hookOnError(Throwable error) {
            rpcFailed(error);
        }

        @Override
        protected void hookOnComplete() {
            closeLocally(Status.INTERNAL.withDescription("stream of " + method.getFullMethodName()
                    + " ended without trailers"), new Metadata());
        }
    }
}
