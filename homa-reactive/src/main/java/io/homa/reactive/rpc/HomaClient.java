package io.homa.reactive.rpc;

import io.homa.engine.MessageBytes;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.NanoClock;
import io.homa.reactive.internal.rpc.EnvelopeCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.lang.reflect.Type;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The RPC layer's client: calls methods of remote services and decodes the results. Thread-safe;
 * share one per application. Build one with {@link #builder(HomaTransport)}.
 *
 * <p>Each unary call encodes the arguments with the call's codec (named in the request envelope,
 * so the server answers in it), resolves the service's endpoint and sends one Homa RPC on the
 * transport. A {@link #stream stream} call fetches items in batches, one Homa RPC each, driven by
 * the subscriber's demand, several in flight at once within the {@link Builder#streamWindowBytes
 * stream window}.
 *
 * <p>Deadlines: a call's timeout ({@link CallOptions#timeout()}, else the client's default)
 * starts at subscription, travels with the request as {@link RpcMetadata#TIMEOUT_MS} and, when it
 * passes, the client abandons the exchange (the Homa RPC is cancelled) and signals
 * {@code HomaException(DEADLINE_EXCEEDED)}.
 *
 * <p>Threading: by default results are decoded and signalled on the thread that completes the
 * RPC (the transport's event loop): keep downstream work non-blocking, move it with
 * {@code publishOn}, or set a {@link Builder#resultScheduler result scheduler}. A response longer
 * than {@link Builder#offloadBytes(int)} is decoded and signalled on {@link Schedulers#parallel()}
 * instead, so that parsing megabytes never holds up the event loop (which must keep answering the
 * protocol).
 */
public class HomaClient {
    /** Default most items fetched by one stream batch RPC. */
    public static final int DEFAULT_STREAM_BATCH_SIZE = 256;
    /**
     * Default stream window (2 MiB): the bytes a stream keeps in flight in each direction, four
     * batches of the server's default 512 KiB ({@link RpcDispatcher#DEFAULT_STREAM_BATCH_BYTES}).
     * One batch's round trip on a datacenter network is its transmission (0.4 ms for 512 KiB at
     * 10 Gbit/s) plus a few tens of microseconds of propagation and switching, plus encoding it at
     * the server and decoding it at the client: with four in flight the server encodes one while
     * the network carries another and the client decodes a third, so the pipe never drains; more
     * only adds to what waits in buffers. See docs/streaming.md.
     */
    public static final int DEFAULT_STREAM_WINDOW_BYTES = 2 * 1024 * 1024;
    /** Default longest response decoded on the event loop (as the server's {@link RpcDispatcher#DEFAULT_OFFLOAD_BYTES}). */
    public static final int DEFAULT_OFFLOAD_BYTES = RpcDispatcher.DEFAULT_OFFLOAD_BYTES;

    private final HomaTransport transport;
    private final ServiceResolver resolver;
    private final PayloadCodecs codecs;
    private final PayloadCodec defaultCodec;
    private final @Nullable Duration defaultTimeout;
    private final BiFunction<String, String, @Nullable Duration> timeouts;
    private final List<HomaClientInterceptor> interceptors;
    private final @Nullable Scheduler resultScheduler;
    private final int streamBatchSize;
    private final int streamWindowBytes;
    private final boolean eagerStreams;
    private final NanoClock clock;
    private final UnaryExchange unaryExchange;

    /**
     * A client that decodes results on the transport's event loop (no thread hop), speaks only
     * {@code codec} and has no default timeout and no interceptors.
     *
     * @param transport the message layer to send on
     * @param resolver finds the endpoint of each service
     * @param codec encodes arguments and decodes results
     */
    public HomaClient(HomaTransport transport, ServiceResolver resolver, PayloadCodec codec) {
        this(transport, resolver, codec, null);
    }

    /**
     * As {@link #HomaClient(HomaTransport, ServiceResolver, PayloadCodec)}, decoding results and
     * signalling subscribers on {@code resultScheduler}.
     *
     * @param resultScheduler where results are decoded and emitted; {@code null} for the event loop
     */
    public HomaClient(
            HomaTransport transport, ServiceResolver resolver, PayloadCodec codec, @Nullable Scheduler resultScheduler) {
        this(builder(transport).resolver(resolver).codecs(PayloadCodecs.of(codec)).defaultCodec(codec.name())
                .resultScheduler(resultScheduler));
    }

    /** Built by {@link Builder#build()}. */
    protected HomaClient(Builder builder) {
        this.transport = builder.transport;
        this.clock = builder.clock != null ? builder.clock : builder.transport.clock();
        this.resolver = Objects.requireNonNull(builder.resolver, "resolver must be set");
        this.codecs = builder.codecs;
        this.defaultCodec = codecs.get(builder.defaultCodec);
        this.defaultTimeout = builder.defaultTimeout;
        this.timeouts = builder.timeouts;
        this.interceptors = List.copyOf(builder.interceptors);
        this.resultScheduler = builder.resultScheduler;
        this.streamBatchSize = builder.streamBatchSize;
        this.streamWindowBytes = builder.streamWindowBytes;
        this.eagerStreams = builder.eagerStreams;
        this.unaryExchange = new UnaryExchange(this, transport, resolver, resultScheduler, builder.offloadBytes, clock);
    }

    /** A builder sending on {@code transport}. */
    public static Builder builder(HomaTransport transport) {
        return new Builder(transport);
    }

    /**
     * Calls {@code service.method(argument)} with default options. Lazy: nothing is sent before
     * subscribe; cancelling abandons the RPC. Each subscription is a new RPC.
     *
     * @param service the service name
     * @param method the method name
     * @param argument the argument, or {@code null} for a method without one (a one-parameter
     *     method then receives {@code null})
     * @param responseType the result type
     * @return the decoded result (empty for a {@code null} result), or an error:
     *     {@link HomaRemoteException} with the server's status, message and exception type,
     *     {@link io.homa.reactive.HomaTimeoutException}, or {@link HomaException} (UNAVAILABLE
     *     when the service cannot be resolved, DEADLINE_EXCEEDED when the deadline passes,
     *     INTERNAL when the argument cannot be encoded or the response cannot be decoded)
     */
    public <T> Mono<T> call(String service, String method, @Nullable Object argument, Class<T> responseType) {
        return call(service, method, argument, (Type) responseType);
    }

    /**
     * {@link #call(String, String, Object, Class)} for a generic result type, e.g. the
     * {@code Type} of {@code List<Item>}. The caller chooses {@code T} to match {@code responseType}.
     */
    public <T> Mono<T> call(String service, String method, @Nullable Object argument, Type responseType) {
        return call(service, method, argument == null ? new Object[0] : new Object[] {argument}, responseType,
                CallOptions.defaults());
    }

    /** {@link #call(String, String, Object[], Type, CallOptions)} with a class, so {@code T} is inferred. */
    public <T> Mono<T> call(String service, String method, @Nullable Object[] arguments, Class<T> responseType,
                            CallOptions options) {
        return call(service, method, arguments, (Type) responseType, options);
    }

    /** {@link #stream(String, String, Object[], Type, CallOptions)} with a class, so {@code T} is inferred. */
    public <T> Flux<T> stream(String service, String method, @Nullable Object[] arguments, Class<T> elementType,
                              CallOptions options) {
        return stream(service, method, arguments, (Type) elementType, options);
    }

    /**
     * Calls {@code service.method(arguments...)}.
     *
     * @param arguments the arguments, in order (elements may be {@code null}); empty for none
     * @param responseType the result type
     * @param options timeout, codec, metadata
     * @return as {@link #call(String, String, Object, Class)}
     */
    public <T> Mono<T> call(String service, String method, @Nullable Object[] arguments, Type responseType,
                            CallOptions options) {
        RpcCall call = new RpcCall(service, method, arguments.clone(), responseType, options, false);
        return intercepted(call, Mono.defer(() -> unaryExchange.<T>exchange(call, true)));
    }

    /**
     * As {@link #call(String, String, Object[], Type, CallOptions)}, with the response metadata the
     * server's method set ({@link HomaCallContext#responseMetadata()}).
     *
     * @return the result and the response metadata (never empty: a {@code null} result is a
     *     {@link HomaResponse} with a {@code null} value), or an error as for {@code call}
     */
    public <T> Mono<HomaResponse<T>> callForResponse(String service, String method, @Nullable Object[] arguments,
                                                     Type responseType, CallOptions options) {
        RpcCall call = new RpcCall(service, method, arguments.clone(), responseType, options, false);
        return intercepted(call, Mono.defer(() -> unaryExchange.<HomaResponse<T>>exchange(call, false)));
    }

    /**
     * Calls a streaming method and emits its items. Items are fetched in batches of at most the
     * subscriber's outstanding demand (and at most the client's stream batch size), one Homa RPC
     * per batch, several in flight within the {@link Builder#streamWindowBytes stream window}; the
     * batches in flight together never ask for more than the outstanding demand, so a slow
     * subscriber slows the server's producer, and the items are emitted in the server's order
     * whatever order the batches arrive in. Cancelling the returned
     * {@code Flux} cancels the server's subscription. The timeout bounds the whole stream.
     *
     * @param arguments the arguments, in order; empty for none
     * @param elementType the type of each item
     * @return the items, then completion or an error as for {@link #call}
     */
    public <T> Flux<T> stream(String service, String method, @Nullable Object[] arguments, Type elementType,
                              CallOptions options) {
        RpcCall call = new RpcCall(service, method, arguments.clone(), elementType, options, true);
        return intercepted(call, Flux.defer(() -> streamExchange(call, -1)));
    }

    /**
     * Calls a method that takes a request stream (a {@code Flux} parameter: client streaming or
     * bidirectional streaming) and emits its results. The request stream is the one argument that
     * is a {@code Publisher}; the others travel in the open. The call opens at subscription; then
     * the request stream's items are pushed in batches, one Homa RPC each, several in flight within
     * the stream window, never more than the server's method asked for (so a slow method slows the
     * source: it is requested at most one batch ahead of what was pushed, within what the server
     * granted), while results are fetched as {@link #stream} does,
     * driven by the subscriber's demand. For a method returning a {@code Mono}, take the result
     * with {@code singleOrEmpty()}.
     *
     * <p>Ends: cancelling the returned {@code Flux} cancels the server's method and the source;
     * the method cancelling its request stream (e.g. {@code take(n)}) cancels the source, and the
     * results go on; the source failing is told to the method (its {@code Flux} parameter fails
     * with {@link HomaRemoteException} carrying the source's status if it is a
     * {@link HomaException}, else CANCELLED) and the returned {@code Flux} fails with the source's
     * error; the method failing fails the returned {@code Flux} with {@link HomaRemoteException}
     * and cancels the source. The timeout bounds the whole exchange.
     *
     * @param arguments the arguments in order, exactly one of them a {@code Publisher} (the request
     *     stream; each subscription of the returned {@code Flux} subscribes to it once)
     * @param elementType the type of each result
     * @return the results, then completion or an error as for {@link #call}
     * @throws IllegalArgumentException if not exactly one argument is a {@code Publisher}
     */
    public <T> Flux<T> channel(String service, String method, @Nullable Object[] arguments, Type elementType,
                               CallOptions options) {
        int index = -1;
        for (int i = 0; i < arguments.length; i++) {
            if (arguments[i] instanceof Publisher<?>) {
                if (index >= 0) {
                    throw new IllegalArgumentException("a channel call of " + service + "." + method
                            + " takes one request stream (Publisher) argument, got more (positions " + index + " and " + i + ")");
                }
                index = i;
            }
        }
        if (index < 0) {
            throw new IllegalArgumentException("a channel call of " + service + "." + method
                    + " needs one Publisher argument, the request stream");
        }
        int requestStreamIndex = index;
        RpcCall call = new RpcCall(service, method, arguments.clone(), elementType, options, true);
        return intercepted(call, Flux.defer(() -> streamExchange(call, requestStreamIndex)));
    }

    /** {@link #channel(String, String, Object[], Type, CallOptions)} with a class, so {@code T} is inferred. */
    public <T> Flux<T> channel(String service, String method, @Nullable Object[] arguments, Class<T> elementType,
                               CallOptions options) {
        return channel(service, method, arguments, (Type) elementType, options);
    }

    /** The transport this client sends on. */
    public HomaTransport transport() {
        return transport;
    }

    /** The codecs this client can encode with. */
    public PayloadCodecs codecs() {
        return codecs;
    }

    /** The codec used when a call names none. */
    public PayloadCodec defaultCodec() {
        return defaultCodec;
    }

    /** The timeout used when a call names none, or {@code null} for none. */
    public @Nullable Duration defaultTimeout() {
        return defaultTimeout;
    }

    /** The interceptors, outermost first. */
    public List<HomaClientInterceptor> interceptors() {
        return interceptors;
    }

    /** Whether this client's batch RPCs ask to be answered as soon as they hold an item ({@link Builder#eagerStreams(boolean)}). */
    boolean eagerStreams() {
        return eagerStreams;
    }

    /** The configured stream window in bytes ({@link Builder#streamWindowBytes(int)}). */
    public int streamWindowBytes() {
        return streamWindowBytes;
    }

    // ------------------------------------------------------------------ exchanges

    /** The clock this client measures deadlines on. */
    NanoClock clock() {
        return clock;
    }

    /**
     * The stream window to use with {@code server}, in bytes: how much a stream keeps in flight in
     * each direction (the server may name a smaller one). The hook for a per-peer window: today
     * every peer gets the configured {@link Builder#streamWindowBytes}; an estimate of the path's
     * bandwidth-delay product (the transport's smoothed RTT to that peer times the link rate, plus
     * a batch's encoding and decoding time) would go here.
     */
    int streamWindowBytes(InetSocketAddress server) {
        return streamWindowBytes;
    }

    /** A unary exchange wrapped in the interceptors, the first one outermost. */
    private <R> Mono<R> intercepted(RpcCall call, Mono<R> exchange) {
        Mono<R> chain = exchange;
        for (int i = interceptors.size() - 1; i >= 0; i--) {
            chain = interceptors.get(i).interceptUnary(call, chain);
        }
        return chain;
    }

    /** A stream or channel exchange wrapped in the interceptors, the first one outermost. */
    private <T> Flux<T> intercepted(RpcCall call, Flux<T> exchange) {
        Flux<T> chain = exchange;
        for (int i = interceptors.size() - 1; i >= 0; i--) {
            chain = interceptors.get(i).interceptStream(call, chain);
        }
        return chain;
    }

    /** @param requestStreamIndex the request stream's position among the arguments (a channel), or -1 */
    private <T> Flux<T> streamExchange(RpcCall call, int requestStreamIndex) {
        PayloadCodec codec = codec(call);
        long timeoutNs = timeoutNs(call);
        return Flux.create(
                sink -> new ClientStream<T>(this, call, codec, timeoutNs, streamBatchSize, resultScheduler, sink,
                        requestStreamIndex).start(),
                FluxSink.OverflowStrategy.BUFFER);
    }

    // ------------------------------------------------------------------ helpers

    PayloadCodec codec(RpcCall call) {
        String name = call.options().codec();
        return name == null ? defaultCodec : codecs.get(name);
    }

    /**
     * The effective timeout in ns, 0 for none: the call's own ({@link CallOptions#timeout()}), else
     * the one configured for its service and method ({@link Builder#timeouts}), else the default.
     */
    long timeoutNs(RpcCall call) {
        Duration timeout = call.options().timeout();
        if (timeout == null) {
            timeout = timeouts.apply(call.service(), call.method());
        }
        if (timeout == null) {
            timeout = defaultTimeout;
        }
        return timeout == null || timeout.isZero() ? 0 : Math.max(1, saturatedNanos(timeout));
    }

    Mono<InetSocketAddress> resolve(RpcCall call) {
        return ClientErrors.orNoPeer(call, resolver.resolve(call.service()));
    }

    /**
     * A request message: its envelope ({@link #encodeRequest}), then {@code payload}. A long
     * payload's parts (a codec's, e.g. a raw {@code byte[]} and its tag, or a push's items) go
     * behind the envelope as they are, copied only into the packets
     * ({@link EnvelopeCodec#SEPARATE_PAYLOAD_BYTES}); a short one is joined into it.
     *
     * @throws HomaException as {@link #encodeRequest} does
     */
    ByteBuf requestMessage(RpcCall call, PayloadCodec codec, long startNs, long timeoutNs, Map<String, String> extra,
                           byte[][] payload) {
        if (MessageBytes.lengthBytes(payload) < EnvelopeCodec.SEPARATE_PAYLOAD_BYTES) {
            return Unpooled.wrappedBuffer(encodeRequest(call, codec, startNs, timeoutNs, extra, payload));
        }
        return EnvelopeCodec.behindEnvelope(encodeRequest(call, codec, startNs, timeoutNs, extra, EnvelopeCodec.NO_PAYLOAD),
                payload);
    }

    /**
     * The request envelope: the call's metadata, the remaining deadline ({@code timeoutNs} 0 =
     * none), {@code extra} (stream control keys) and the payload (encoded arguments, items, or none).
     *
     * @throws HomaException DEADLINE_EXCEEDED if the deadline passed, INVALID_ARGUMENT for bad
     *     metadata, INTERNAL if an argument cannot be encoded
     */
    byte[] encodeRequest(RpcCall call, PayloadCodec codec, long startNs, long timeoutNs, Map<String, String> extra,
                         byte[] payload) {
        return encodeRequest(call, codec, startNs, timeoutNs, extra, new byte[][] {payload});
    }

    /** {@link #encodeRequest(RpcCall, PayloadCodec, long, long, Map, byte[])} with the payload in parts, copied once. */
    byte[] encodeRequest(RpcCall call, PayloadCodec codec, long startNs, long timeoutNs, Map<String, String> extra,
                         byte[][] payload) {
        Map<String, String> own = call.metadata();
        // most calls carry no metadata and no deadline: no map to build then
        Map<String, String> metadata = own.isEmpty() && extra.isEmpty() && timeoutNs <= 0 ? Map.of()
                : new LinkedHashMap<>(own);
        for (String key : metadata.keySet()) {
            if (RpcMetadata.isReserved(key)) {
                throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                        "metadata key '" + key + "' of " + call.fullMethodName() + " is reserved (prefix homa-)");
            }
        }
        if (timeoutNs > 0) {
            long remainingNs = startNs + timeoutNs - clock.nanoTime();
            if (remainingNs <= 0) {
                throw ClientErrors.deadlineExceeded(call, timeoutNs);
            }
            metadata.put(RpcMetadata.TIMEOUT_MS, Long.toString(
                    Math.max(1, TimeUnit.NANOSECONDS.toMillis(remainingNs + 999_999))));
        }
        if (!extra.isEmpty()) {
            metadata.putAll(extra);
        }
        try {
            return EnvelopeCodec.encodeRequest(call.service(), call.method(), codec.name(), metadata, payload);
        } catch (IllegalArgumentException e) {
            throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                    "cannot call " + call.fullMethodName() + ": " + e.getMessage(), e);
        }
    }

    private static long saturatedNanos(Duration duration) {
        try {
            return duration.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE / 4;
        }
    }

    /** Configures a {@link HomaClient}; not thread-safe. */
    public static final class Builder {
        private final HomaTransport transport;
        private @Nullable ServiceResolver resolver;
        private PayloadCodecs codecs = PayloadCodecs.of(new JsonPayloadCodec());
        private String defaultCodec = JsonPayloadCodec.NAME;
        private @Nullable Duration defaultTimeout;
        private BiFunction<String, String, @Nullable Duration> timeouts = (service, method) -> null;
        private List<HomaClientInterceptor> interceptors = List.of();
        private @Nullable Scheduler resultScheduler;
        private int streamBatchSize = DEFAULT_STREAM_BATCH_SIZE;
        private int streamWindowBytes = DEFAULT_STREAM_WINDOW_BYTES;
        private boolean eagerStreams;
        private int offloadBytes = DEFAULT_OFFLOAD_BYTES;
        private @Nullable NanoClock clock;

        private Builder(HomaTransport transport) {
            this.transport = Objects.requireNonNull(transport, "transport must not be null");
        }

        /** Finds the endpoint of each service (required). */
        public Builder resolver(ServiceResolver resolver) {
            this.resolver = Objects.requireNonNull(resolver, "resolver must not be null");
            return this;
        }

        /** The codecs calls may name (default: json only). */
        public Builder codecs(PayloadCodecs codecs) {
            this.codecs = Objects.requireNonNull(codecs, "codecs must not be null");
            return this;
        }

        /** The codec used when a call names none (default {@code "json"}); must be in {@link #codecs}. */
        public Builder defaultCodec(String name) {
            this.defaultCodec = Objects.requireNonNull(name, "defaultCodec must not be null");
            return this;
        }

        /** The timeout used when a call names none; {@code null} or zero = no deadline (the default). */
        public Builder defaultTimeout(@Nullable Duration timeout) {
            if (timeout != null && timeout.isNegative()) {
                throw new IllegalArgumentException("defaultTimeout must be zero (none) or positive, was " + timeout);
            }
            this.defaultTimeout = timeout;
            return this;
        }

        /**
         * The timeout of each service's methods when a call names none: {@code (service, method)}
         * to a duration ({@link Duration#ZERO} = no deadline), or {@code null} to fall back to
         * {@link #defaultTimeout}. The Spring Boot starter sets it from
         * {@code homa.client.services.<service>[.methods.<method>].timeout}.
         */
        public Builder timeouts(BiFunction<String, String, @Nullable Duration> timeouts) {
            this.timeouts = Objects.requireNonNull(timeouts, "timeouts must not be null");
            return this;
        }

        /** The interceptors, outermost first (replaces earlier ones). */
        public Builder interceptors(List<? extends HomaClientInterceptor> interceptors) {
            this.interceptors = List.copyOf(interceptors);
            return this;
        }

        /** Where results are decoded and emitted; {@code null} (the default) for the event loop. */
        public Builder resultScheduler(@Nullable Scheduler scheduler) {
            this.resultScheduler = scheduler;
            return this;
        }

        /** Most items one stream batch RPC asks for, 1..65536 (default {@value #DEFAULT_STREAM_BATCH_SIZE}). */
        public Builder streamBatchSize(int items) {
            if (items < 1 || items > 65_536) {
                throw new IllegalArgumentException("streamBatchSize must be 1 to 65536 items, was " + items);
            }
            this.streamBatchSize = items;
            return this;
        }

        /**
         * The stream window: how many bytes a stream or channel keeps in flight in each direction,
         * in batch RPCs (each counted at the bytes of the items it asks for, the server's batch
         * limit, 512 KiB by default, while the items' size is unknown) and in pushes
         * (their payloads). Size it to the bandwidth-delay product of the path, counting a batch's
         * encoding and decoding time in the delay; the server may name a smaller one
         * ({@link RpcDispatcher#streamWindowBytes(int)}, 8 MiB by default), and then that one
         * holds. Below one batch, one batch RPC and one push are in flight at a time. Backpressure
         * does not depend on it: the batches in flight never ask for more than the subscriber's
         * demand, nor the pushes carry more than the server's method asked for. Default
         * {@value HomaClient#DEFAULT_STREAM_WINDOW_BYTES} (2 MiB).
         *
         * @param windowBytes 0..64 MiB
         * @throws IllegalArgumentException if {@code windowBytes} is out of range
         */
        /**
         * Whether each batch RPC of a stream asks the server to answer it as soon as it holds an
         * item ({@link RpcMetadata#STREAM_EAGER}), instead of when it is full or the server's
         * batch linger ({@link RpcDispatcher#streamBatchLinger(java.time.Duration)}, 2 ms by
         * default) has passed. For message-at-a-time streams whose subscriber asks for more than
         * comes at once (gRPC's, which keep one item of demand for the trailers): each item then
         * goes out at once, at the cost of fewer items per batch RPC. Default {@code false}.
         */
        public Builder eagerStreams(boolean eager) {
            this.eagerStreams = eager;
            return this;
        }

        public Builder streamWindowBytes(int windowBytes) {
            if (windowBytes < 0 || windowBytes > RpcDispatcher.MAX_STREAM_WINDOW_BYTES) {
                throw new IllegalArgumentException("streamWindowBytes must be 0 to "
                        + RpcDispatcher.MAX_STREAM_WINDOW_BYTES + " bytes, was " + windowBytes);
            }
            this.streamWindowBytes = windowBytes;
            return this;
        }

        /**
         * Without a {@link #resultScheduler}, the longest response (bytes) decoded on the event
         * loop; a longer one is decoded and signalled on {@link Schedulers#parallel()}. 0
         * offloads every response. Default {@value HomaClient#DEFAULT_OFFLOAD_BYTES}.
         */
        public Builder offloadBytes(int lengthBytes) {
            if (lengthBytes < 0) {
                throw new IllegalArgumentException("offloadBytes must be at least 0, was " + lengthBytes);
            }
            this.offloadBytes = lengthBytes;
            return this;
        }

        /** The clock deadlines are measured on; default: the transport's ({@link HomaTransport#clock()}). */
        public Builder clock(NanoClock clock) {
            this.clock = Objects.requireNonNull(clock, "clock must not be null");
            return this;
        }

        /**
         * @throws IllegalStateException if no resolver is set
         * @throws HomaException INVALID_ARGUMENT if the default codec is not among the codecs
         */
        public HomaClient build() {
            if (resolver == null) {
                throw new IllegalStateException("resolver must be set");
            }
            return new HomaClient(this);
        }
    }
}
