package io.homa.grpc;

import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.homa.grpc.internal.GrpcThreads;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.rpc.HomaClient;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * A grpc-java {@link ManagedChannel} whose calls travel over Homa, to one server endpoint: generated
 * stubs work unchanged ({@code TestServiceGrpc.newBlockingStub(channel)}). Each call rides on the
 * RPC layer of {@code homa-reactive} (see docs/grpc.md, "Wire mapping"): unary calls are one Homa
 * RPC, streaming calls are streams of the RPC layer with its backpressure and cancellation.
 *
 * <pre>{@code
 * HomaManagedChannel channel = HomaManagedChannel.builder(transport, "10.0.0.5:4000").build();
 * GreeterGrpc.GreeterBlockingStub greeter = GreeterGrpc.newBlockingStub(channel);
 * }</pre>
 *
 * <p>Lifecycle as grpc-java's: after {@link #shutdown()} new calls fail with UNAVAILABLE and calls
 * in flight finish; {@link #shutdownNow()} also cancels those (UNAVAILABLE); the channel is
 * terminated once no call is left, and then disposes the transport if it bound it itself
 * ({@link Builder#build()} from a {@link HomaTransportConfig}). There is no connection: Homa is
 * connectionless, so the channel is always {@link ConnectivityState#READY} until shut down.
 *
 * <p>Thread-safe.
 */
public final class HomaManagedChannel extends ManagedChannel {
    /** How long the cancel RPC of a unary call may take (it is fire-and-forget). */
    static final Duration CANCEL_TIMEOUT = Duration.ofSeconds(5);

    private final HomaTransport transport;
    private final boolean ownsTransport;
    private final HomaClient client;
    private final InetSocketAddress target;
    private final String authority;
    private final Executor executor;
    private final Attributes attributes;
    private final Set<HomaClientCall<?, ?>> calls = new LinkedHashSet<>();
    private final CountDownLatch terminated = new CountDownLatch(1);
    // Guarded by calls.
    private boolean shutdown;

    private HomaManagedChannel(Builder builder, HomaTransport transport, boolean ownsTransport) {
        this.transport = transport;
        this.ownsTransport = ownsTransport;
        this.target = builder.target;
        this.authority = builder.authority;
        this.executor = builder.executor == null ? GrpcThreads.defaultExecutor() : builder.executor;
        InetSocketAddress server = builder.target;
        // gRPC delivers message by message, and asks for one item more than the application (the
        // trailers): without eager batches each would wait the server's batch linger for it
        HomaClient.Builder clientBuilder = HomaClient.builder(transport).resolver(service -> Mono.just(server))
                .eagerStreams(true);
        if (builder.streamWindowBytes >= 0) {
            clientBuilder.streamWindowBytes(builder.streamWindowBytes);
        }
        this.client = clientBuilder.build();
        this.attributes = Attributes.newBuilder()
                .set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, target)
                .set(Grpc.TRANSPORT_ATTR_LOCAL_ADDR, transport.localAddress())
                .build();
    }

    /**
     * A builder of a channel to {@code target} over {@code transport}, which the channel shares and
     * never disposes.
     */
    public static Builder builder(HomaTransport transport, InetSocketAddress target) {
        return new Builder(Objects.requireNonNull(transport, "transport must not be null"), null, target);
    }

    /** As {@link #builder(HomaTransport, InetSocketAddress)} to {@code "host:port"}. */
    public static Builder builder(HomaTransport transport, String target) {
        return builder(transport, parseTarget(target));
    }

    /**
     * A builder of a channel that binds a transport of its own with {@code config} (a client
     * endpoint: it serves nothing) and disposes it when it terminates.
     */
    public static Builder builder(HomaTransportConfig config, InetSocketAddress target) {
        return new Builder(null, Objects.requireNonNull(config, "config must not be null"), target);
    }

    /** As {@link #builder(HomaTransportConfig, InetSocketAddress)} to {@code "host:port"}. */
    public static Builder builder(HomaTransportConfig config, String target) {
        return builder(config, parseTarget(target));
    }

    /**
     * {@code "host:port"} (or {@code "[v6]:port"}) as an address, resolved now.
     *
     * @throws IllegalArgumentException if there is no port or it is not 1..65535
     */
    static InetSocketAddress parseTarget(String target) {
        Objects.requireNonNull(target, "target must not be null");
        int colon = target.lastIndexOf(':');
        if (colon <= 0 || colon == target.length() - 1) {
            throw new IllegalArgumentException("target must be host:port, was '" + target + "'");
        }
        String host = target.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(target.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("target must be host:port, was '" + target + "'", e);
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port must be 1 to 65535, was " + port + " in '" + target + "'");
        }
        return new InetSocketAddress(host, port);
    }

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> newCall(MethodDescriptor<ReqT, RespT> method,
                                                         CallOptions callOptions) {
        Executor callExecutor = callOptions.getExecutor() != null ? callOptions.getExecutor() : executor;
        return new HomaClientCall<>(this, method, callOptions, callExecutor);
    }

    @Override
    public String authority() {
        return authority;
    }

    /** The server endpoint this channel calls. */
    public InetSocketAddress target() {
        return target;
    }

    HomaClient homaClient() {
        return client;
    }

    Attributes callAttributes() {
        return attributes;
    }

    /** Counts a call in flight; false once shut down (the call then fails with UNAVAILABLE). */
    boolean callStarted(HomaClientCall<?, ?> call) {
        synchronized (calls) {
            if (shutdown) {
                return false;
            }
            calls.add(call);
            return true;
        }
    }

    /** A call's listener has had onClose. */
    void callEnded(HomaClientCall<?, ?> call) {
        boolean terminate;
        synchronized (calls) {
            terminate = calls.remove(call) && shutdown && calls.isEmpty();
        }
        if (terminate) {
            terminate();
        }
    }

    @Override
    public ManagedChannel shutdown() {
        boolean terminate;
        synchronized (calls) {
            terminate = !shutdown && calls.isEmpty();
            shutdown = true;
        }
        if (terminate) {
            terminate();
        }
        return this;
    }

    @Override
    public ManagedChannel shutdownNow() {
        shutdown();
        List<HomaClientCall<?, ?>> inFlight;
        synchronized (calls) {
            inFlight = new ArrayList<>(calls);
        }
        for (HomaClientCall<?, ?> call : inFlight) {
            call.shutdownNow();
        }
        return this;
    }

    private void terminate() {
        if (ownsTransport) {
            transport.dispose();
        }
        terminated.countDown();
    }

    @Override
    public boolean isShutdown() {
        synchronized (calls) {
            return shutdown;
        }
    }

    @Override
    public boolean isTerminated() {
        return terminated.getCount() == 0;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return terminated.await(timeout, unit);
    }

    /** READY until shut down, then SHUTDOWN: Homa has no connection to set up or lose. */
    @Override
    public ConnectivityState getState(boolean requestConnection) {
        return isShutdown() ? ConnectivityState.SHUTDOWN : ConnectivityState.READY;
    }

    @Override
    public String toString() {
        return "HomaManagedChannel{" + authority + "}";
    }

    /** Builds a {@link HomaManagedChannel}. Not thread-safe. */
    public static final class Builder {
        private final @Nullable HomaTransport transport;
        private final @Nullable HomaTransportConfig config;
        private final InetSocketAddress target;
        private String authority;
        private @Nullable Executor executor;
        private int streamWindowBytes = -1;

        private Builder(@Nullable HomaTransport transport, @Nullable HomaTransportConfig config,
                        InetSocketAddress target) {
            this.transport = transport;
            this.config = config;
            this.target = Objects.requireNonNull(target, "target must not be null");
            this.authority = target.getHostString() + ":" + target.getPort();
        }

        /**
         * Where listener callbacks run when a call's {@code CallOptions} names no executor, one at
         * a time per call. Default: a shared cached pool of daemon threads, as grpc-java's.
         */
        public Builder executor(Executor executor) {
            this.executor = Objects.requireNonNull(executor, "executor must not be null");
            return this;
        }

        /** Runs listener callbacks on the thread that completes the RPC (an event loop): they must not block. */
        public Builder directExecutor() {
            return executor(Runnable::run);
        }

        /** The authority the server sees ({@code ServerCall.getAuthority()}); default {@code host:port} of the target. */
        public Builder overrideAuthority(String authority) {
            this.authority = Objects.requireNonNull(authority, "authority must not be null");
            return this;
        }

        /**
         * The bytes a streaming call keeps in flight in each direction (see
         * {@code HomaClient.Builder.streamWindowBytes}); default the RPC layer's, 2 MiB.
         */
        public Builder streamWindowBytes(int windowBytes) {
            this.streamWindowBytes = windowBytes;
            return this;
        }

        /**
         * The channel. From a {@link HomaTransportConfig} it binds its transport now (blocking up
         * to 10 s).
         *
         * @throws io.homa.reactive.HomaException if the transport cannot bind
         */
        public HomaManagedChannel build() {
            if (transport != null) {
                return new HomaManagedChannel(this, transport, false);
            }
            HomaTransport bound = HomaTransport.bindNow(Objects.requireNonNull(config), null, Duration.ofSeconds(10));
            return new HomaManagedChannel(this, bound, true);
        }
    }
}
