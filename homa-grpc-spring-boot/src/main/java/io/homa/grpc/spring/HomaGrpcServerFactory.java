package io.homa.grpc.spring;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.grpc.Server;
import io.grpc.ServerInterceptor;
import io.grpc.ServerServiceDefinition;
import io.homa.grpc.HomaGrpcRegistrar;
import io.homa.reactive.rpc.RpcDispatcher;
import org.jspecify.annotations.Nullable;
import org.springframework.grpc.server.GrpcServerFactory;
import org.springframework.grpc.server.service.ServerInterceptorFilter;

/**
 * A spring-grpc {@link GrpcServerFactory} whose server serves its services on an existing Homa
 * endpoint, through its {@link RpcDispatcher} (with {@link HomaGrpcRegistrar}): the same UDP port
 * as the application's {@code @HomaService} beans. Declared as a bean, it makes Spring Boot's own
 * gRPC server (grpc-netty) back off.
 *
 * <p>The server does not own the endpoint: {@link Server#start()} registers the services on the
 * dispatcher, {@link Server#getPort()} is the endpoint's port, and {@link Server#shutdown()} only
 * marks it shut down (terminated at once): the endpoint stays up for the {@code @HomaService}
 * methods, and drains the calls in flight, gRPC ones too, when the application context stops
 * ({@code homa.server.shutdown-grace-period}). A dispatcher cannot forget a method, so the
 * services stay registered until then.
 *
 * <p>Thread-safe.
 */
public class HomaGrpcServerFactory implements GrpcServerFactory {

    private final RpcDispatcher dispatcher;
    private final Supplier<InetSocketAddress> address;
    private final List<ServerServiceDefinition> services = new ArrayList<>();
    private @Nullable ServerInterceptorFilter interceptorFilter;

    /**
     * @param dispatcher the endpoint's dispatcher, which the services join
     * @param address the endpoint's UDP address and port, asked by {@link Server#getPort()} and
     *     {@link Server#getListenSockets()}
     */
    public HomaGrpcServerFactory(RpcDispatcher dispatcher, Supplier<InetSocketAddress> address) {
        this.dispatcher = Objects.requireNonNull(dispatcher, "dispatcher must not be null");
        this.address = Objects.requireNonNull(address, "address must not be null");
    }

    /** Which global interceptors spring-grpc's service configurer applies to which service; default all. */
    public void setInterceptorFilter(@Nullable ServerInterceptorFilter interceptorFilter) {
        this.interceptorFilter = interceptorFilter;
    }

    @Override
    public boolean supports(ServerInterceptor interceptor, ServerServiceDefinition service) {
        ServerInterceptorFilter filter = interceptorFilter;
        return filter == null || filter.filter(interceptor, service);
    }

    /** Adds a service (intercepted as spring-grpc's configurer made it) for the servers created from now on. */
    @Override
    public void addService(ServerServiceDefinition service) {
        Objects.requireNonNull(service, "service must not be null");
        synchronized (services) {
            services.add(service);
        }
    }

    /** The services added, in order. */
    public List<ServerServiceDefinition> services() {
        synchronized (services) {
            return List.copyOf(services);
        }
    }

    @Override
    public Server createServer() {
        return new DispatcherServer(dispatcher, address, services());
    }

    /** An {@link io.grpc.Server} view of the services on a dispatcher it does not own. */
    private static final class DispatcherServer extends Server {
        private final RpcDispatcher dispatcher;
        private final Supplier<InetSocketAddress> address;
        private final List<ServerServiceDefinition> services;
        private boolean started;
        private boolean shutdown;

        DispatcherServer(RpcDispatcher dispatcher, Supplier<InetSocketAddress> address, List<ServerServiceDefinition> services) {
            this.dispatcher = dispatcher;
            this.address = address;
            this.services = services;
        }

        @Override
        public synchronized Server start() throws IOException {
            if (started) {
                throw new IllegalStateException("already started");
            }
            if (shutdown) {
                throw new IllegalStateException("shut down");
            }
            started = true;
            HomaGrpcRegistrar registrar = HomaGrpcRegistrar.on(dispatcher);
            services.forEach(registrar::addService);
            return this;
        }

        @Override
        public int getPort() {
            return address.get().getPort();
        }

        @Override
        public List<? extends java.net.SocketAddress> getListenSockets() {
            return List.of(address.get());
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
        public synchronized Server shutdown() {
            shutdown = true;
            notifyAll();
            return this;
        }

        @Override
        public Server shutdownNow() {
            return shutdown();
        }

        @Override
        public synchronized boolean isShutdown() {
            return shutdown;
        }

        /** Terminated as soon as shut down: it owns no endpoint and no calls (the endpoint drains them). */
        @Override
        public synchronized boolean isTerminated() {
            return shutdown;
        }

        @Override
        public synchronized boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
            long deadline = System.nanoTime() + unit.toNanos(timeout);
            while (!shutdown) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return true;
        }

        @Override
        public synchronized void awaitTermination() throws InterruptedException {
            while (!shutdown) {
                wait();
            }
        }

        @Override
        public String toString() {
            return "HomaGrpcServer{port=" + getPort() + ", services=" + services.size() + "}";
        }
    }
}
