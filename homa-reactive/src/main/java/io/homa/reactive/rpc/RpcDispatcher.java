package io.homa.reactive.rpc;

import static io.homa.reactive.rpc.MethodInvoker.checkDeadline;
import static io.homa.reactive.rpc.MethodInvoker.deadlineNs;
import static io.homa.reactive.rpc.MethodInvoker.decodeArguments;
import static io.homa.reactive.rpc.MethodInvoker.invoke;
import static io.homa.reactive.rpc.MethodInvoker.withResponseMetadata;
import static io.homa.reactive.rpc.ResponseMessages.encodeWithinLimit;
import static io.homa.reactive.rpc.ResponseMessages.ready;
import static io.homa.reactive.rpc.ResponseMessages.tooLarge;
import static io.homa.reactive.rpc.ServerErrors.unavailable;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRequest;
import io.homa.reactive.HomaRequestHandler;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.NanoClock;
import io.homa.reactive.internal.rpc.EnvelopeCodec;
import io.netty.buffer.ByteBuf;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.Fuseable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The RPC layer's server side: a {@link HomaRequestHandler} that decodes the request envelope,
 * finds the {@link RpcMethod}, runs it and encodes the result or error in the response envelope,
 * in the codec the request named.
 *
 * <p>Threads: the transport calls {@link #handle} on its event loop. A request whose payload is
 * at most {@link #offloadBytes(int)} long is decoded there, and a non-blocking method
 * ({@link RpcMethod#blocking()} false) runs there too, with no thread hop, as WebFlux and RSocket
 * run reactive handlers; a blocking method runs on the dispatcher's scheduler (one hop there, one
 * back). A longer request is decoded, run and encoded on the scheduler, so that the event loop
 * keeps answering the protocol (RESEND, BUSY, GRANT) while megabytes are parsed. A scheduler that
 * rejects the work (its queue is full) answers RESOURCE_EXHAUSTED.
 *
 * <p>Overload: while {@link #overloaded()} (at least {@link #maxCallsInService(int)} calls in
 * service, or {@link #maxBlockingCalls(int)} calls of blocking methods, or work waiting longer than
 * {@link #maxQueueDelay(Duration)} for a thread of the scheduler), the transport refuses new requests before they reach {@link #handle}: they are not
 * decoded and nothing runs, and the caller fails with UNAVAILABLE "server overloaded: not
 * executed", which is safe to retry for any method (see docs/architecture.md, "Overload").
 *
 * <p>Every request gets a response:
 *
 * <ul>
 *   <li>a malformed envelope, or a codec this dispatcher does not have: INVALID_ARGUMENT;
 *   <li>the dispatcher is shutting down ({@link #shutdown}): UNAVAILABLE;
 *   <li>unknown service or method: UNIMPLEMENTED, naming {@code service.method};
 *   <li>arguments that do not decode: INVALID_ARGUMENT;
 *   <li>the request's deadline ({@link RpcMetadata#TIMEOUT_MS}) passed before the method started,
 *       or while it ran (the method's {@code Mono}/{@code Flux} is then cancelled): DEADLINE_EXCEEDED;
 *   <li>a method that throws or signals an error: the first answer of the
 *       {@link #addExceptionMapper exception mappers}, else the status and message of a
 *       {@link HomaException}, else INTERNAL with {@code "ExceptionType: message"}; the response
 *       metadata {@link RpcMetadata#ERROR_TYPE} names the exception's class;
 *   <li>otherwise OK with the encoded result ({@code null} for an empty {@code Mono}).
 * </ul>
 *
 * <p>Streaming methods ({@link RpcMethod.Kind#STREAM}) are served in batches: the client opens
 * the stream, the dispatcher subscribes to the method's {@code Flux} and requests from it only
 * what the client asked for; each batch RPC returns 1..n items (see {@link RpcMetadata#STREAM}).
 * A waiting batch is answered as soon as it is full (by count or by {@link #streamBatchBytes}),
 * the stream ended, or {@link #streamBatchLinger} passed since its first item. A client may keep
 * several batch requests and pushes of a stream in flight, within {@link #streamWindowBytes}; they
 * are numbered ({@link RpcMetadata#STREAM_SEQ}) and taken in order, whatever order they arrive in.
 * A stream that is not fetched for {@link #streamIdleTimeout} is cancelled.
 *
 * <p>Thread-safe: methods, mappers and interceptors may be added while requests are served.
 */
public class RpcDispatcher implements HomaRequestHandler {
    /** Default bound on the encoded items of one stream batch. */
    public static final int DEFAULT_STREAM_BATCH_BYTES = 512 * 1024;

    /**
     * Default stream window of the server (8 MiB): the most bytes a client may keep in flight on
     * one stream in each direction, in batch requests counted at {@link #streamBatchBytes(int)} each
     * and in pushes' payloads. The client's own window, 2 MiB by default
     * ({@link HomaClient#DEFAULT_STREAM_WINDOW_BYTES}), is what decides; this bounds what a server
     * holds for one stream (pushes that arrive ahead of their turn) whatever clients ask for.
     */
    public static final int DEFAULT_STREAM_WINDOW_BYTES = 8 * 1024 * 1024;
    /** Largest stream window, of a server ({@link #streamWindowBytes(int)}) or a client. */
    public static final int MAX_STREAM_WINDOW_BYTES = 64 * 1024 * 1024;

    /**
     * Default largest response: the protocol's cap on any message (64 MiB). Set the transport's
     * own {@code maxMessageBytes} with {@link #maxResponseBytes(int)} (the starter does).
     */
    public static final int DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
    /** Default wait for more items once a batch has its first one. */
    public static final Duration DEFAULT_STREAM_BATCH_LINGER = Duration.ofMillis(2);
    /** Default time an open stream may go without a fetch before it is cancelled. */
    public static final Duration DEFAULT_STREAM_IDLE_TIMEOUT = Duration.ofSeconds(30);
    /** Most items one batch RPC may ask for. */
    public static final int MAX_STREAM_REQUEST = 65_536;
    /**
     * Default longest request payload decoded on the event loop: short enough that parsing it
     * does not hold up the protocol work the loop also does; a longer one is decoded on the
     * scheduler.
     */
    public static final int DEFAULT_OFFLOAD_BYTES = 16 * 1024;
    /** Smallest default of {@link #maxCallsInService(int)}, whatever the threads: reactive methods that wait (for a downstream call, say) hold no thread. */
    public static final int MIN_DEFAULT_MAX_CALLS_IN_SERVICE = 128;
    /**
     * Calls in service per thread that runs them, in the defaults of {@link #maxCallsInService(int)}
     * and {@link #maxBlockingCalls(int)}: one running and three waiting, so that a queued call waits
     * about three of its own service times at most.
     */
    public static final int DEFAULT_CALLS_IN_SERVICE_PER_THREAD = 4;
    /** Most {@link #maxCallsInService(int)} and {@link #maxBlockingCalls(int)} may be. */
    public static final int MAX_CALLS_IN_SERVICE = 1_000_000;
    /**
     * Default longest wait of work for a thread of the scheduler before new requests are refused:
     * a few tens of milliseconds, far above a healthy queue's and far below a call's deadline.
     */
    public static final Duration DEFAULT_MAX_QUEUE_DELAY = Duration.ofMillis(50);
    /** Longest {@link #maxQueueDelay(Duration)}. */
    public static final Duration MAX_QUEUE_DELAY = Duration.ofMinutes(1);

    private final PayloadCodecs codecs;
    private final Scheduler scheduler;
    private final MethodTable methods = new MethodTable();
    private final ServerErrors errors = new ServerErrors();
    private final ServerInterceptorChain interceptors = new ServerInterceptorChain();
    private final ServerStreams streams = new ServerStreams(this, methods);
    private final DispatcherDrain drain = new DispatcherDrain();
    private final DispatcherLoad load = new DispatcherLoad(
            defaultMaxCallsInService(10 * Runtime.getRuntime().availableProcessors(), 1),
            defaultMaxBlockingCalls(10 * Runtime.getRuntime().availableProcessors()),
            DEFAULT_MAX_QUEUE_DELAY.toNanos());
    private volatile int streamBatchBytes = DEFAULT_STREAM_BATCH_BYTES;
    private volatile int streamWindowBytes = DEFAULT_STREAM_WINDOW_BYTES;
    private volatile int maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES;
    private volatile int offloadBytes = DEFAULT_OFFLOAD_BYTES;
    private volatile Duration streamBatchLinger = DEFAULT_STREAM_BATCH_LINGER;
    private volatile Duration streamIdleTimeout = DEFAULT_STREAM_IDLE_TIMEOUT;
    private volatile NanoClock clock = NanoClock.system();

    /**
     * A dispatcher that speaks one codec.
     *
     * @param codec decodes arguments and encodes results
     * @param scheduler where blocking methods and long requests run (a bounded one)
     */
    public RpcDispatcher(PayloadCodec codec, Scheduler scheduler) {
        this(PayloadCodecs.of(Objects.requireNonNull(codec, "codec must not be null")), scheduler);
    }

    /**
     * A dispatcher that answers each request in the codec it names.
     *
     * @param codecs the codecs requests may use
     * @param scheduler where blocking methods and long requests run (a bounded one)
     */
    public RpcDispatcher(PayloadCodecs codecs, Scheduler scheduler) {
        this.codecs = Objects.requireNonNull(codecs, "codecs must not be null");
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler must not be null");
    }

    /**
     * Exports a method; a later registration of the same service and method replaces it.
     *
     * @return this dispatcher
     */
    public RpcDispatcher register(RpcMethod method) {
        methods.register(method);
        return this;
    }

    /**
     * The longest request payload (the whole envelope, bytes) decoded and dispatched on the
     * thread that delivers it, the transport's event loop; a longer one is decoded, run and
     * encoded on the scheduler. 0 offloads every request. Default {@value #DEFAULT_OFFLOAD_BYTES}.
     *
     * @return this dispatcher
     * @throws IllegalArgumentException if {@code lengthBytes} is negative
     */
    public RpcDispatcher offloadBytes(int lengthBytes) {
        if (lengthBytes < 0) {
            throw new IllegalArgumentException("offloadBytes must be at least 0, was " + lengthBytes);
        }
        this.offloadBytes = lengthBytes;
        return this;
    }

    /**
     * The default of {@link #maxCallsInService(int)}: {@value #DEFAULT_CALLS_IN_SERVICE_PER_THREAD}
     * calls per thread that runs methods, the scheduler's threads and the transport's event loops
     * (where reactive methods run), at least {@value #MIN_DEFAULT_MAX_CALLS_IN_SERVICE}: enough
     * to keep every thread busy with a few calls queued behind each, not so many that a queued call
     * waits longer than a few of its own service times.
     *
     * @param handlerThreads threads of the scheduler blocking methods run on ({@code homa.server.threads}), at least 1
     * @param loops event loops reactive methods run on, at least 1
     * @return max(128, 4 x (handlerThreads + loops)), at most {@value #MAX_CALLS_IN_SERVICE}
     * @throws IllegalArgumentException if either is below 1
     */
    public static int defaultMaxCallsInService(int handlerThreads, int loops) {
        if (handlerThreads < 1 || loops < 1) {
            throw new IllegalArgumentException("handlerThreads and loops must be at least 1, were " + handlerThreads
                    + " and " + loops);
        }
        long perThreads = (long) DEFAULT_CALLS_IN_SERVICE_PER_THREAD * ((long) handlerThreads + loops);
        return (int) Math.min(MAX_CALLS_IN_SERVICE, Math.max(MIN_DEFAULT_MAX_CALLS_IN_SERVICE, perThreads));
    }

    /**
     * Bounds the calls in service: unary calls and stream opens from their dispatch until their
     * response, whether they run on the event loop, wait for a thread or run on one (stream batches
     * are not counted: they wait for items, which costs nothing). While this many are in service,
     * {@link #overloaded()} is true and the transport refuses new requests unexecuted. Default
     * {@link #defaultMaxCallsInService defaultMaxCallsInService}(10 x available processors, 1), the
     * starter's {@code homa.server.threads} default; the starter sets it from its properties.
     *
     * @param calls 1..{@value #MAX_CALLS_IN_SERVICE}
     * @return this dispatcher
     * @throws IllegalArgumentException if {@code calls} is out of range
     */
    public RpcDispatcher maxCallsInService(int calls) {
        if (calls < 1 || calls > MAX_CALLS_IN_SERVICE) {
            throw new IllegalArgumentException("maxCallsInService must be 1 to " + MAX_CALLS_IN_SERVICE + ", was " + calls);
        }
        load.maxCallsInService(calls);
        return this;
    }

    /**
     * The default of {@link #maxBlockingCalls(int)}: {@value #DEFAULT_CALLS_IN_SERVICE_PER_THREAD}
     * per thread of the scheduler.
     *
     * @param handlerThreads threads of the scheduler blocking methods run on ({@code homa.server.threads}), at least 1
     * @return 4 x handlerThreads, at most {@value #MAX_CALLS_IN_SERVICE}
     * @throws IllegalArgumentException if {@code handlerThreads} is below 1
     */
    public static int defaultMaxBlockingCalls(int handlerThreads) {
        if (handlerThreads < 1) {
            throw new IllegalArgumentException("handlerThreads must be at least 1, was " + handlerThreads);
        }
        return (int) Math.min(MAX_CALLS_IN_SERVICE, (long) DEFAULT_CALLS_IN_SERVICE_PER_THREAD * handlerThreads);
    }

    /**
     * Bounds the blocking calls in service: unary calls of {@link RpcMethod#blocking() blocking}
     * methods from their dispatch until their response, waiting for a thread of the scheduler or
     * running on one. They hold a thread each, so this bound, unlike {@link #maxCallsInService(int)},
     * follows the scheduler's threads: with this many in service, {@link #overloaded()} is true and
     * the transport refuses new requests unexecuted, so a call that is admitted waits behind at
     * most this many others. With CPU-bound methods on a scheduler of one thread per core, a call's
     * latency under overload stays within a few service times. Default
     * {@link #defaultMaxBlockingCalls defaultMaxBlockingCalls}(10 x available processors), the
     * starter's {@code homa.server.threads} default; the starter sets it from its properties.
     *
     * @param calls 1..{@value #MAX_CALLS_IN_SERVICE}
     * @return this dispatcher
     * @throws IllegalArgumentException if {@code calls} is out of range
     */
    public RpcDispatcher maxBlockingCalls(int calls) {
        if (calls < 1 || calls > MAX_CALLS_IN_SERVICE) {
            throw new IllegalArgumentException("maxBlockingCalls must be 1 to " + MAX_CALLS_IN_SERVICE + ", was " + calls);
        }
        load.maxBlockingCalls(calls);
        return this;
    }

    /**
     * Bounds how long work (a blocking method, a long request to decode) may wait for a thread of
     * the scheduler: while the oldest waiting work has waited longer, {@link #overloaded()} is true
     * and the transport refuses new requests unexecuted. Zero: no bound. Default
     * {@link #DEFAULT_MAX_QUEUE_DELAY} (50 ms).
     *
     * @param delay 0 to 1 min
     * @return this dispatcher
     * @throws IllegalArgumentException if {@code delay} is out of range
     */
    public RpcDispatcher maxQueueDelay(Duration delay) {
        Objects.requireNonNull(delay, "maxQueueDelay must not be null");
        if (delay.isNegative() || delay.compareTo(MAX_QUEUE_DELAY) > 0) {
            throw new IllegalArgumentException("maxQueueDelay must be 0 to 1 min, was " + delay);
        }
        load.maxQueueDelayNs(delay.toNanos());
        return this;
    }

    /** The bound on calls in service ({@link #maxCallsInService(int)}). */
    public int maxCallsInService() {
        return load.maxCallsInService();
    }

    /** The bound on blocking calls in service ({@link #maxBlockingCalls(int)}). */
    public int maxBlockingCalls() {
        return load.maxBlockingCalls();
    }

    /** Unary calls of blocking methods in service now (see {@link #maxBlockingCalls(int)}). */
    public int blockingCalls() {
        return load.blockingCalls();
    }

    /** The bound on the wait for a thread ({@link #maxQueueDelay(Duration)}). */
    public Duration maxQueueDelay() {
        return Duration.ofNanos(load.maxQueueDelayNs());
    }

    /** Unary calls and stream opens in service now (see {@link #maxCallsInService(int)}). */
    public int callsInService() {
        return load.callsInService();
    }

    /**
     * Whether this dispatcher is full: {@link #maxCallsInService(int)} calls in service,
     * {@link #maxBlockingCalls(int)} blocking ones, or work that has waited longer than
     * {@link #maxQueueDelay(Duration)} for a thread. The transport asks
     * before it hands over each request, and refuses the request unexecuted while this is true
     * (UNAVAILABLE "server overloaded: not executed" at the caller). Cheap, never blocks.
     */
    @Override
    public boolean overloaded() {
        return load.overloaded(clock);
    }

    /**
     * Adds an exception mapper, asked after those added before it.
     *
     * @return this dispatcher
     */
    public RpcDispatcher addExceptionMapper(RpcExceptionMapper mapper) {
        errors.add(mapper);
        return this;
    }

    /**
     * Adds a server interceptor, inside those added before it (the first added is outermost).
     *
     * @return this dispatcher
     */
    public RpcDispatcher addInterceptor(HomaServerInterceptor interceptor) {
        interceptors.add(interceptor);
        return this;
    }

    /**
     * Bounds the encoded items of one stream batch (default 512 KiB); keep it below the
     * transport's {@code maxMessageBytes} minus a few KiB for the envelope. A single item larger
     * than this fails its stream with RESOURCE_EXHAUSTED.
     *
     * @param lengthBytes 1..64 MiB
     * @return this dispatcher
     */
    public RpcDispatcher streamBatchBytes(int lengthBytes) {
        if (lengthBytes < 1 || lengthBytes > 64 * 1024 * 1024) {
            throw new IllegalArgumentException("streamBatchBytes must be 1 to 67108864 bytes, was " + lengthBytes);
        }
        this.streamBatchBytes = lengthBytes;
        return this;
    }

    /**
     * Bounds the stream window a client may use on this server, in each direction: the batch
     * requests a client keeps in flight (each counted at {@link #streamBatchBytes(int)}) and the
     * bytes of the pushes it keeps in flight. The server names it in the answer to every stream
     * open ({@link RpcMetadata#STREAM_WINDOW_BYTES}); the client uses the smaller of it and its own
     * window. Pushes that arrive ahead of their turn wait here, so this also bounds what one
     * channel holds. Below one batch the client keeps one request of each kind in flight, as
     * without pipelining. Default {@value #DEFAULT_STREAM_WINDOW_BYTES} (8 MiB).
     *
     * @param windowBytes 0..64 MiB
     * @return this dispatcher
     * @throws IllegalArgumentException if {@code windowBytes} is out of range
     */
    public RpcDispatcher streamWindowBytes(int windowBytes) {
        if (windowBytes < 0 || windowBytes > MAX_STREAM_WINDOW_BYTES) {
            throw new IllegalArgumentException("streamWindowBytes must be 0 to " + MAX_STREAM_WINDOW_BYTES
                    + " bytes, was " + windowBytes);
        }
        this.streamWindowBytes = windowBytes;
        return this;
    }

    /**
     * The largest response the transport sends: set it to the transport's {@code maxMessageBytes}
     * ({@code homa.protocol.max-message-size}, which the starter does; default 64 MiB, the
     * protocol's cap). A result whose encoded response is longer is answered RESOURCE_EXHAUSTED,
     * naming both sizes (as gRPC does), instead of being dropped by the transport.
     *
     * @param lengthBytes 1..64 MiB
     * @return this dispatcher
     */
    public RpcDispatcher maxResponseBytes(int lengthBytes) {
        if (lengthBytes < 1 || lengthBytes > 64 * 1024 * 1024) {
            throw new IllegalArgumentException("maxResponseBytes must be 1 to 67108864 bytes, was " + lengthBytes);
        }
        this.maxResponseBytes = lengthBytes;
        return this;
    }

    /**
     * How long a stream batch that has at least one item waits for more before it is sent
     * (default 2 ms); zero sends at once.
     *
     * @return this dispatcher
     */
    public RpcDispatcher streamBatchLinger(Duration linger) {
        Objects.requireNonNull(linger, "streamBatchLinger must not be null");
        if (linger.isNegative() || linger.compareTo(Duration.ofSeconds(1)) > 0) {
            throw new IllegalArgumentException("streamBatchLinger must be 0 to 1 s, was " + linger);
        }
        this.streamBatchLinger = linger;
        return this;
    }

    /**
     * The clock deadlines are measured on (default {@link NanoClock#system()}); use the transport's
     * ({@link io.homa.reactive.HomaTransport#clock()}) when it has another.
     *
     * @return this dispatcher
     */
    public RpcDispatcher clock(NanoClock value) {
        this.clock = Objects.requireNonNull(value, "clock must not be null");
        return this;
    }

    NanoClock clock() {
        return clock;
    }

    int streamBatchBytes() {
        return streamBatchBytes;
    }

    /** The stream window clients may use on this server, in bytes ({@link #streamWindowBytes(int)}). */
    public int streamWindowBytes() {
        return streamWindowBytes;
    }

    Duration streamBatchLinger() {
        return streamBatchLinger;
    }

    Duration streamIdleTimeout() {
        return streamIdleTimeout;
    }

    /**
     * How long an open stream may go without a batch request before it is cancelled (default
     * 30 s): the client went away without cancelling.
     *
     * @return this dispatcher
     */
    public RpcDispatcher streamIdleTimeout(Duration timeout) {
        Objects.requireNonNull(timeout, "streamIdleTimeout must not be null");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("streamIdleTimeout must be positive, was " + timeout);
        }
        this.streamIdleTimeout = timeout;
        return this;
    }

    /** The method exported as {@code service.method}, if any. */
    public Optional<RpcMethod> lookup(String service, String method) {
        return methods.lookup(service, method);
    }

    /** Whether at least one method of {@code service} is exported (no copy: cheap per call). */
    public boolean exports(String service) {
        return methods.exports(service);
    }

    /** The exported methods (a snapshot). */
    public Collection<RpcMethod> methods() {
        return methods.methods();
    }

    /** The first codec of this dispatcher (the only one for a single-codec dispatcher). */
    public PayloadCodec codec() {
        return codecs.get(codecs.names().iterator().next());
    }

    /** The codecs requests may use. */
    public PayloadCodecs codecs() {
        return codecs;
    }

    /** Requests being handled plus open streams. */
    public int inFlight() {
        return drain.inFlight();
    }

    /** Whether {@link #shutdown} was called. */
    public boolean isShuttingDown() {
        return drain.isShuttingDown();
    }

    /**
     * Stops taking new calls: from now on new unary calls and stream opens are answered
     * UNAVAILABLE, while calls in flight and open streams go on. Completes when none is left, or
     * when {@code gracePeriod} ends: the rest are then cancelled and answered UNAVAILABLE. Lazy:
     * nothing happens before subscribe. Idempotent.
     *
     * @param gracePeriod how long to wait for calls in flight; zero cancels them at once
     */
    public Mono<Void> shutdown(Duration gracePeriod) {
        Objects.requireNonNull(gracePeriod, "gracePeriod must not be null");
        if (gracePeriod.isNegative()) {
            throw new IllegalArgumentException("gracePeriod must not be negative, was " + gracePeriod);
        }
        return drain.shutdown(gracePeriod, () -> streams.cancelAll(unavailable()));
    }

    void enter() {
        drain.enter();
    }

    void exit() {
        drain.exit();
    }

    /**
     * Answers one request. Never signals an error and never completes empty: failures become
     * error responses.
     */
    @Override
    public Mono<ByteBuf> handle(HomaRequest request) {
        boolean offload = request.payload().readableBytes() > offloadBytes;
        if (offload) {
            return encoded(request, load.onScheduler(Mono.defer(() -> dispatch(request, true)), scheduler, clock));
        }
        return Mono.defer(() -> {
            Mono<RpcEnvelope.Response> response;
            try {
                response = dispatch(request, false);
            } catch (RuntimeException e) {
                response = Mono.just(errorResponse(e, "request " + request.rpcId()));
            }
            RpcEnvelope.Response ready = ready(response);
            if (ready != null) {
                // Answered while it was dispatched (a method returning Mono.just, or an error):
                // no operator chain per call.
                return Mono.just(encodeWithinLimit(ready, () -> "request " + request.rpcId(), maxResponseBytes, errors));
            }
            return encoded(request, response);
        });
    }

    /** {@code response}'s bytes once it comes, an error becoming an error response. */
    private Mono<ByteBuf> encoded(HomaRequest request, Mono<RpcEnvelope.Response> response) {
        return response
                .onErrorResume(error -> Mono.just(errorResponse(error, "request " + request.rpcId())))
                .map(r -> encodeWithinLimit(r, () -> "request " + request.rpcId(), maxResponseBytes, errors));
    }

    /** @param onScheduler whether this runs on the scheduler already (a long request) */
    private Mono<RpcEnvelope.Response> dispatch(HomaRequest request, boolean onScheduler) {
        long arrivalNs = clock.nanoTime();
        EnvelopeCodec.RequestView envelope = EnvelopeCodec.decodeRequestView(request.payload());
        String phase = envelope.metadata().get(RpcMetadata.STREAM);
        if (drain.isShuttingDown() && (phase == null || phase.equals(RpcMetadata.STREAM_OPEN))) {
            throw unavailable();
        }
        PayloadCodec codec = codecs.get(envelope.codec());
        ServerCall call = new ServerCall(envelope.service(), envelope.method(), envelope.metadata(),
                request.client(), request.rpcId());
        List<HomaServerInterceptor> snapshot = interceptors.snapshot();
        if (snapshot.isEmpty()) {
            return dispatchWithoutInterceptors(call, envelope, codec, arrivalNs, onScheduler);
        }
        Function<ServerCall, Mono<RpcEnvelope.Response>> first = ServerInterceptorChain.around(snapshot,
                c -> Mono.defer(() -> execute(c, envelope, codec, arrivalNs, onScheduler)), errors);
        enter();
        return inFlight(call, Mono.defer(() -> first.apply(call)),
                "a server interceptor completed " + call.fullMethodName() + " without a response");
    }

    /**
     * {@code response} for a call counted in flight ({@link #enter()} done): never empty (an empty
     * one is INTERNAL with {@code emptyWhy}), never an error (it becomes an error response), and
     * {@link #exit()} at its end.
     */
    private Mono<RpcEnvelope.Response> inFlight(ServerCall call, Mono<RpcEnvelope.Response> response, String emptyWhy) {
        return response
                .switchIfEmpty(Mono.fromSupplier(() -> RpcEnvelope.Response.error(HomaStatus.INTERNAL, emptyWhy)))
                .onErrorResume(error -> Mono.just(errorResponse(error, call.fullMethodName())))
                .doFinally(signal -> exit());
    }

    /**
     * {@link #dispatch} with no interceptor: the method runs now, and a response that is ready at
     * once (see {@link #unary}) comes back as {@code Mono.just}, without the chain's operators.
     */
    private Mono<RpcEnvelope.Response> dispatchWithoutInterceptors(ServerCall call, EnvelopeCodec.RequestView envelope,
            PayloadCodec codec, long arrivalNs, boolean onScheduler) {
        enter();
        Mono<RpcEnvelope.Response> response;
        try {
            response = execute(call, envelope, codec, arrivalNs, onScheduler);
        } catch (RuntimeException e) {
            exit();
            return Mono.just(errorResponse(e, call.fullMethodName()));
        }
        if (ready(response) != null) {
            exit();
            return response;
        }
        return inFlight(call, response, call.fullMethodName() + " completed without a response");
    }

    /** The end of the interceptor chain. */
    private Mono<RpcEnvelope.Response> execute(ServerCall call, EnvelopeCodec.RequestView envelope, PayloadCodec codec,
            long arrivalNs, boolean onScheduler) {
        String phase = call.metadata().get(RpcMetadata.STREAM);
        if (phase == null) {
            return counted(unary(call, envelope, codec, arrivalNs, onScheduler));
        }
        return switch (phase) {
            case RpcMetadata.STREAM_OPEN -> counted(streams.open(call, envelope, codec, arrivalNs, onScheduler));
            case RpcMetadata.STREAM_NEXT -> streams.next(call);
            case RpcMetadata.STREAM_PUSH -> streams.push(call, envelope);
            case RpcMetadata.STREAM_CANCEL -> streams.cancel(call);
            default -> throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                    "metadata " + RpcMetadata.STREAM + " must be open, next, push or cancel, was '" + phase + "'");
        };
    }

    /**
     * {@code response} counted in service ({@link #maxCallsInService(int)}) until it ends; one that
     * is ready already is not wrapped: it ended (and the fast path of {@link #handle} stays free
     * of operators).
     */
    private Mono<RpcEnvelope.Response> counted(Mono<RpcEnvelope.Response> response) {
        return ready(response) != null ? response : load.inService(response);
    }

    private Mono<RpcEnvelope.Response> unary(ServerCall call, EnvelopeCodec.RequestView envelope, PayloadCodec codec,
            long arrivalNs, boolean onScheduler) {
        RpcMethod method = methods.method(call);
        if (method.kind() == RpcMethod.Kind.STREAM) {
            throw new HomaException(HomaStatus.FAILED_PRECONDITION,
                    call.fullMethodName() + " is a streaming method; call it with HomaClient.stream");
        }
        if (method.kind().hasRequestStream()) {
            throw new HomaException(HomaStatus.FAILED_PRECONDITION, call.fullMethodName()
                    + " takes a request stream (a Flux parameter); call it with HomaClient.channel");
        }
        long deadlineNs = deadlineNs(call, arrivalNs);
        @Nullable Object[] arguments = decodeArguments(method, codec, envelope);
        HomaCallContext context = new HomaCallContext(call);
        Mono<?> result;
        if (method.blocking() && !onScheduler) {
            result = load.blocking(load.onScheduler(Mono.defer(() -> {
                        checkDeadline(call, deadlineNs, clock);
                        return Mono.<Object>from(invoke(method, arguments));
                    }), scheduler, clock));
        } else {
            // Runs the method now, on the thread that subscribed (it does not block). A result it
            // holds already (Mono.just, Mono.empty, Mono.error) is answered at once: it cannot have
            // read the call's context, which only a subscription gives, nor be late.
            Publisher<?> published;
            try {
                checkDeadline(call, deadlineNs, clock);
                published = invoke(method, arguments);
            } catch (RuntimeException e) {
                return Mono.just(errorResponse(e, call.fullMethodName()));
            }
            if (published instanceof Fuseable.ScalarCallable<?> scalar) {
                try {
                    return Mono.just(ok(call, codec.encodeParts(scalar.call())));
                } catch (Exception e) {
                    return Mono.just(errorResponse(e, call.fullMethodName()));
                }
            }
            result = Mono.from(published);
        }
        if (deadlineNs != 0) {
            long remainingNs = Math.max(0, deadlineNs - clock.nanoTime());
            result = result.timeout(Duration.ofNanos(remainingNs), Mono.error(() -> new HomaException(
                    HomaStatus.DEADLINE_EXCEEDED, "deadline passed while " + call.fullMethodName() + " ran")));
        }
        return drain.untilAborted(result)
                .contextWrite(reactor.util.context.Context.of(HomaCallContext.class, context))
                .map(value -> ok(call, codec.encodeParts(value)))
                .switchIfEmpty(Mono.fromSupplier(() -> ok(call, codec.encodeParts(null))))
                .onErrorResume(error -> Mono.just(errorResponse(error, call.fullMethodName())))
                .map(response -> withResponseMetadata(response, context));
    }

    /**
     * An OK response carrying the encoded parts (a raw {@code byte[]} result is not copied behind
     * its tag), or RESOURCE_EXHAUSTED (seen by the interceptors and metrics) if the payload alone
     * is too long.
     */
    private RpcEnvelope.Response ok(ServerCall call, byte[][] payload) {
        RpcEnvelope.Response response = RpcEnvelope.Response.okParts(payload);
        if (response.payloadLengthBytes() > maxResponseBytes) {
            throw tooLarge(call.fullMethodName(), response.payloadLengthBytes(), maxResponseBytes);
        }
        return response;
    }

    /** Called once by a stream when it ends (delivered its end, cancelled or expired). */
    void streamEnded(ServerStream stream) {
        streams.ended(stream);
    }

    /** The error response for {@code error}: mapped status and message, and the exception's type. */
    RpcEnvelope.Response errorResponse(Throwable error, String what) {
        return errors.errorResponse(error, what);
    }

    /** The scheduler timers of streams run on. */
    Scheduler scheduler() {
        return scheduler;
    }
}
