package io.homa.grpc;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.rpc.JsonPayloadCodec;
import io.homa.reactive.rpc.PayloadCodecs;
import io.homa.reactive.rpc.RpcDispatcher;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A grpc-java {@link Server} on a Homa endpoint of its own, for applications that use plain
 * grpc-java; to serve gRPC services on the same port as {@code @HomaService} methods, use
 * {@link HomaGrpcRegistrar} on that endpoint's {@link RpcDispatcher} instead.
 *
 * <pre>{@code
 * Server server = HomaGrpcServer.builder(HomaTransportConfig.builder().port(4000).build())
 *         .addService(ServerInterceptors.intercept(new GreeterImpl(), new AuthInterceptor()))
 *         .build()
 *         .start();
 * }</pre>
 *
 * <p>Lifecycle as grpc-java's: {@link #shutdown()} refuses new calls (UNAVAILABLE) and lets calls
 * in flight finish (for up to the {@link Builder#shutdownGracePeriod grace period}); then the
 * endpoint drains and closes. {@link #shutdownNow()} cancels the calls in flight too.
 */
public final class HomaGrpcServer extends Server {
    /** Default longest wait of {@link #shutdown()} for calls in flight. */
    public static final Duration DEFAULT_SHUTDOWN_GRACE_PERIOD = Duration.ofSeconds(30);
    /** How long the endpoint keeps answering retransmissions after the last call, at shutdown. */
    private static final Duration DRAIN_PERIOD = Duration.ofSeconds(2);

    private final HomaTransportConfig config;
    private final List<ServerServiceDefinition> services;
    private final @Nullable Executor executor;
    private final Duration gracePeriod;
    private final Scheduler scheduler = Schedulers.newBoundedElastic(
            Math.max(2, Runtime.getRuntime().availableProcessors()), 10_000, "homa-grpc-server", 60, true);
    private final RpcDispatcher dispatcher = new RpcDispatcher(PayloadCodecs.of(new JsonPayloadCodec()), scheduler);
    private final CountDownLatch terminated = new CountDownLatch(1);
    // Guarded by this.
    private @Nullable HomaTransport transport;
    private boolean started;
    private boolean shutdown;

    private HomaGrpcServer(Builder builder) {
        this.config = builder.config;
        this.services = List.copyOf(builder.services);
        this.executor = builder.executor;
        this.gracePeriod = builder.gracePeriod;
    }

    /** A builder of a server that binds an endpoint with {@code config} at {@link #start()}. */
    public static Builder builder(HomaTransportConfig config) {
        return new Builder(Objects.requireNonNull(config, "config must not be null"));
    }

    /**
     * Binds the endpoint and serves.
     *
     * @throws IllegalStateException if started already or shut down
     * @throws java.io.IOException never (the signature is grpc-java's); a bind failure is an
     *     {@code IllegalStateException}
     */
    @Override
    public synchronized HomaGrpcServer start() throws java.io.IOException {
        if (started) {
            throw new IllegalStateException("Already started");
        }
        if (shutdown) {
            throw new IllegalStateException("Shutting down");
        }
        started = true;
        HomaGrpcRegistrar registrar = HomaGrpcRegistrar.on(dispatcher);
        if (executor != null) {
            registrar.executor(executor);
        }
        services.forEach(registrar::addService);
        transport = HomaTransport.bindNow(config, dispatcher, Duration.ofSeconds(10));
        dispatcher.clock(transport.clock());
        return this;
    }

    /** The bound UDP (Homa) port, or -1 before {@link #start()}. */
    @Override
    public synchronized int getPort() {
        return transport == null ? -1 : transport.localAddress().getPort();
    }

    @Override
    public synchronized List<? extends SocketAddress> getListenSockets() {
        return transport == null ? List.of() : List.of(transport.localAddress());
    }

    /** The bound address, or {@code null} before {@link #start()}. */
    public synchronized @Nullable InetSocketAddress localAddress() {
        return transport == null ? null : transport.localAddress();
    }

    @Override
    public List<ServerServiceDefinition> getServices() {
        return services;
    }

    @Override
    public List<ServerServiceDefinition> getImmutableServices() {
        return services;
    }

    @Override
    public List<ServerServiceDefinition> getMutableServices() {
        return List.of();
    }

    @Override
    public HomaGrpcServer shutdown() {
        stop(gracePeriod);
        return this;
    }

    @Override
    public HomaGrpcServer shutdownNow() {
        stop(Duration.ZERO);
        return this;
    }

    private void stop(Duration grace) {
        HomaTransport bound;
        synchronized (this) {
            bound = transport;
            if (shutdown && grace.isZero() && bound != null) {
                // shutdownNow after shutdown: cancel what is still running.
                dispatcher.shutdown(Duration.ZERO).subscribe();
                return;
            }
            if (shutdown) {
                return;
            }
            shutdown = true;
        }
        if (bound == null) {
            scheduler.dispose();
            terminated.countDown();
            return;
        }
        dispatcher.shutdown(grace)
                .then(bound.drain(grace.isZero() ? Duration.ZERO : DRAIN_PERIOD))
                .onErrorResume(error -> Mono.empty())
                .doFinally(signal -> {
                    bound.dispose();
                    scheduler.dispose();
                    terminated.countDown();
                })
                .subscribe();
    }

    @Override
    public synchronized boolean isShutdown() {
        return shutdown;
    }

    @Override
    public boolean isTerminated() {
        return terminated.getCount() == 0;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return terminated.await(timeout, unit);
    }

    @Override
    public void awaitTermination() throws InterruptedException {
        terminated.await();
    }

    @Override
    public String toString() {
        return "HomaGrpcServer{port=" + getPort() + ", services=" + services.size() + "}";
    }

    /** Builds a {@link HomaGrpcServer}. Not thread-safe. */
    public static final class Builder {
        private final HomaTransportConfig config;
        private final List<ServerServiceDefinition> services = new ArrayList<>();
        private @Nullable Executor executor;
        private Duration gracePeriod = DEFAULT_SHUTDOWN_GRACE_PERIOD;

        private Builder(HomaTransportConfig config) {
            this.config = config;
        }

        /** Serves {@code service}. */
        public Builder addService(BindableService service) {
            return addService(service.bindService());
        }

        /** Serves {@code service} (wrap it with {@code ServerInterceptors.intercept} for interceptors). */
        public Builder addService(ServerServiceDefinition service) {
            services.add(Objects.requireNonNull(service, "service must not be null"));
            return this;
        }

        /** Where listeners run (see {@link HomaGrpcRegistrar#executor}); default a shared cached pool. */
        public Builder executor(Executor executor) {
            this.executor = Objects.requireNonNull(executor, "executor must not be null");
            return this;
        }

        /** Longest wait of {@link HomaGrpcServer#shutdown()} for calls in flight (default 30 s). */
        public Builder shutdownGracePeriod(Duration gracePeriod) {
            Objects.requireNonNull(gracePeriod, "gracePeriod must not be null");
            if (gracePeriod.isNegative()) {
                throw new IllegalArgumentException("gracePeriod must not be negative, was " + gracePeriod);
            }
            this.gracePeriod = gracePeriod;
            return this;
        }

        /** The server, not started. */
        public HomaGrpcServer build() {
            return new HomaGrpcServer(this);
        }
    }
}
