package io.homa.grpc;

import io.grpc.BindableService;
import io.grpc.MethodDescriptor;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.homa.grpc.internal.GrpcThreads;
import io.homa.grpc.internal.GrpcWire;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.HomaCallContext;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.RpcMethod;
import java.lang.reflect.Type;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * Serves grpc-java services on an {@link RpcDispatcher}, beside its {@code @HomaService} methods
 * on the same Homa port: each method of a {@link ServerServiceDefinition} becomes an
 * {@link RpcMethod} named by the gRPC service and method ({@code grpc.testing.TestService},
 * {@code UnaryCall}) whose payload is the raw bytes of docs/grpc.md's "Wire mapping" (the
 * marshaller's bytes, no JSON). Interceptors: pass {@code ServerInterceptors.intercept(service,
 * interceptors...)}, as with any grpc-java server.
 *
 * <pre>{@code
 * HomaGrpcRegistrar.on(dispatcher).addService(new GreeterImpl());
 * }</pre>
 *
 * <p>A method the dispatcher does not have is answered UNIMPLEMENTED by the dispatcher; the
 * channel words it as grpc-java does ({@code "Method not found: package.Service/Method"}).
 *
 * <p>Also registers the RPC layer method {@value GrpcWire#CANCEL_SERVICE}.{@value GrpcWire#CANCEL_METHOD}
 * that a channel calls to cancel a unary call (Homa itself has no cancel).
 *
 * <p>Thread-safe. One registrar per dispatcher: {@link #on} returns the same one each time.
 */
public final class HomaGrpcRegistrar {
    /** Cancels remembered for calls that had not arrived yet (a cancel may overtake its call). */
    static final int MAX_EARLY_CANCELS = 4096;

    private static final Map<RpcDispatcher, HomaGrpcRegistrar> REGISTRARS = new WeakHashMap<>();
    private static final Type FLUX_OF_BYTES;

    static {
        try {
            FLUX_OF_BYTES = HomaGrpcRegistrar.class.getDeclaredField("fluxOfBytesType").getGenericType();
        } catch (NoSuchFieldException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Only its generic type is used: {@code Flux<byte[]>}, the request stream's parameter type. */
    @SuppressWarnings("unused")
    private static @Nullable Flux<byte[]> fluxOfBytesType;

    private final RpcDispatcher dispatcher;
    private final Map<String, ServerServiceDefinition> services = Collections.synchronizedMap(new LinkedHashMap<>());
    private final Map<CallKey, HomaServerCall<?, ?>> unaryCalls = new ConcurrentHashMap<>();
    private final Map<CallKey, Boolean> earlyCancels = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<CallKey, Boolean> eldest) {
            return size() > MAX_EARLY_CANCELS;
        }
    };
    private volatile Executor executor = GrpcThreads.defaultExecutor();

    private HomaGrpcRegistrar(RpcDispatcher dispatcher) {
        this.dispatcher = dispatcher;
        dispatcher.register(RpcMethod.unary(GrpcWire.CANCEL_SERVICE, GrpcWire.CANCEL_METHOD,
                new Type[] {byte[].class}, arguments -> Mono.deferContextual(context -> {
                    cancelUnary(peer(context), arguments[0]);
                    return Mono.just(new byte[0]);
                })));
    }

    /** The registrar of {@code dispatcher}, made (and its cancel method registered) on first use. */
    public static HomaGrpcRegistrar on(RpcDispatcher dispatcher) {
        Objects.requireNonNull(dispatcher, "dispatcher must not be null");
        synchronized (REGISTRARS) {
            return REGISTRARS.computeIfAbsent(dispatcher, HomaGrpcRegistrar::new);
        }
    }

    /**
     * Where the methods' listeners run, one callback at a time per call, for services added from
     * now on. Default: a shared cached pool of daemon threads, as grpc-java's default executor, since
     * gRPC methods may block. A direct executor ({@code Runnable::run}) runs them on the transport's
     * event loop: only for methods that never block.
     *
     * @return this registrar
     */
    public HomaGrpcRegistrar executor(Executor executor) {
        this.executor = Objects.requireNonNull(executor, "executor must not be null");
        return this;
    }

    /** Serves {@code service}'s methods. */
    public HomaGrpcRegistrar addService(BindableService service) {
        return addService(service.bindService());
    }

    /**
     * Serves the methods of {@code service} (intercepted or not); a later service of the same name
     * replaces its methods.
     *
     * @return this registrar
     */
    public HomaGrpcRegistrar addService(ServerServiceDefinition service) {
        Objects.requireNonNull(service, "service must not be null");
        Executor serviceExecutor = executor;
        for (ServerMethodDefinition<?, ?> method : service.getMethods()) {
            dispatcher.register(rpcMethod(method, serviceExecutor));
        }
        services.put(service.getServiceDescriptor().getName(), service);
        return this;
    }

    /** The services added, in order. */
    public List<ServerServiceDefinition> services() {
        synchronized (services) {
            return List.copyOf(new ArrayList<>(services.values()));
        }
    }

    private <ReqT, RespT> RpcMethod rpcMethod(ServerMethodDefinition<ReqT, RespT> definition, Executor serviceExecutor) {
        MethodDescriptor<ReqT, RespT> descriptor = definition.getMethodDescriptor();
        String service = Objects.requireNonNull(descriptor.getServiceName(),
                () -> "no service in " + descriptor.getFullMethodName());
        String method = Objects.requireNonNull(descriptor.getBareMethodName());
        RpcMethod rpcMethod = switch (descriptor.getType()) {
            case UNARY -> RpcMethod.unary(service, method, new Type[] {byte[].class},
                    arguments -> Mono.deferContextual(context -> {
                        GrpcWire.Request request = request(arguments[0]);
                        CallKey key = new CallKey(peer(context).getAddress(), request.callId());
                        if (takeEarlyCancel(key)) {
                            return Mono.just(cancelledFrames());
                        }
                        HomaServerCall<ReqT, RespT> call = new HomaServerCall<>(descriptor,
                                definition.getServerCallHandler(), request, peer(context), serviceExecutor,
                                () -> unaryCalls.remove(key));
                        unaryCalls.put(key, call);
                        return call.unaryResponse();
                    }));
            case SERVER_STREAMING -> RpcMethod.stream(service, method, new Type[] {byte[].class},
                    arguments -> Flux.deferContextual(context -> Flux.from(
                            new HomaServerCall<>(descriptor, definition.getServerCallHandler(), request(arguments[0]),
                                    peer(context), serviceExecutor, () -> { }).responses(null))));
            default -> RpcMethod.bidiStream(service, method, new Type[] {byte[].class, FLUX_OF_BYTES},
                    arguments -> Flux.deferContextual(context -> {
                        @SuppressWarnings("unchecked")
                        Publisher<byte[]> requests = (Publisher<byte[]>) Objects.requireNonNull(arguments[1]);
                        return Flux.from(new HomaServerCall<>(descriptor, definition.getServerCallHandler(),
                                request(arguments[0]), peer(context), serviceExecutor, () -> { })
                                .responses(requests));
                    }));
        };
        return rpcMethod.withIdempotent(descriptor.isIdempotent());
    }

    private static GrpcWire.Request request(@Nullable Object argument) {
        if (!(argument instanceof byte[] bytes)) {
            throw new HomaException(HomaStatus.INVALID_ARGUMENT, "a homa-grpc request has a byte[] prelude");
        }
        try {
            return GrpcWire.decodeRequest(bytes);
        } catch (IllegalArgumentException e) {
            throw new HomaException(HomaStatus.INVALID_ARGUMENT, e.getMessage(), e);
        }
    }

    private static InetSocketAddress peer(ContextView context) {
        return context.<HomaCallContext>getOrEmpty(HomaCallContext.class)
                .map(HomaCallContext::peer)
                .orElseThrow(() -> new IllegalStateException("no HomaCallContext: not called by an RpcDispatcher"));
    }

    private static byte[] cancelledFrames() {
        java.io.ByteArrayOutputStream frames = new java.io.ByteArrayOutputStream();
        GrpcWire.writeTrailers(frames, Status.CANCELLED.withDescription("cancelled before it arrived"),
                new io.grpc.Metadata());
        return frames.toByteArray();
    }

    /** The client's cancel RPC: the call ends now, or when it arrives if the cancel overtook it. */
    private void cancelUnary(InetSocketAddress peer, @Nullable Object argument) {
        if (!(argument instanceof byte[] bytes)) {
            throw new HomaException(HomaStatus.INVALID_ARGUMENT, "a cancel names a callId");
        }
        CallKey key;
        try {
            key = new CallKey(peer.getAddress(), GrpcWire.decodeCallId(bytes));
        } catch (IllegalArgumentException e) {
            throw new HomaException(HomaStatus.INVALID_ARGUMENT, e.getMessage(), e);
        }
        HomaServerCall<?, ?> call = unaryCalls.get(key);
        if (call != null) {
            call.cancel(Status.CANCELLED.withDescription("cancelled by the client"));
            return;
        }
        synchronized (earlyCancels) {
            earlyCancels.put(key, Boolean.TRUE);
        }
    }

    private boolean takeEarlyCancel(CallKey key) {
        synchronized (earlyCancels) {
            return !earlyCancels.isEmpty() && earlyCancels.remove(key) != null;
        }
    }

    /**
     * A unary call at the server: the client's address (not its port: a client with several event
     * loops may send the cancel from another socket than the call) and its callId.
     */
    private record CallKey(InetAddress address, long callId) {
    }
}
