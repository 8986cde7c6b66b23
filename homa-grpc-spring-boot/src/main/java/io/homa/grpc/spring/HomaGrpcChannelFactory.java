package io.homa.grpc.spring;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.homa.grpc.HomaManagedChannel;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.rpc.ServiceResolver;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.grpc.client.ChannelBuilderOptions;
import org.springframework.grpc.client.ClientInterceptorFilter;
import org.springframework.grpc.client.GrpcChannelFactory;
import org.springframework.grpc.client.interceptor.DefaultDeadlineSetupClientInterceptor;

/**
 * A spring-grpc {@link GrpcChannelFactory} for {@code homa:} targets: {@link HomaManagedChannel}s
 * on the application's Homa endpoint (the starter's {@link HomaTransport} bean, shared with its
 * {@code HomaClient}). Other targets are not {@link #supports supported}, so a
 * {@code CompositeGrpcChannelFactory} sends them to grpc-netty.
 *
 * <p>Targets:
 * <ul>
 *   <li>{@code homa://host:port} (or {@code homa://[v6]:port}): that endpoint, resolved when the
 *       channel is created;</li>
 *   <li>{@code homa://name} (no port): the endpoint that the {@link ServiceResolver} bean
 *       ({@code homa.client.peers} or service discovery) gives for {@code name}, asked once when the
 *       channel is created (waiting up to {@code homa.grpc.client.resolve-timeout}): the channel
 *       sticks to that instance. The server sees {@code name} as the call's authority.</li>
 * </ul>
 *
 * <p>{@link ChannelBuilderOptions} applied: {@code interceptors()} after the
 * {@link org.springframework.grpc.client.GlobalClientInterceptor @GlobalClientInterceptor} beans
 * (or sorted together by {@code @Order} with {@code mergeWithGlobalInterceptors()}), the first one
 * running first, as spring-grpc's own factories do, less those an optional
 * {@link ClientInterceptorFilter} rejects; {@code shutdownGracePeriod()}: how long {@link #destroy()}
 * lets the channel's calls finish before it cancels them. Ignored: {@code customizer()}, which
 * customizes a {@code ManagedChannelBuilder} (a Homa channel is not built by one), and channel
 * credentials (no TLS over Homa; see docs/security.md for packet authentication).
 *
 * <p>Thread-safe. The channels it created are shut down when the bean is destroyed.
 */
public class HomaGrpcChannelFactory implements GrpcChannelFactory, DisposableBean {

    /** The target scheme: {@code homa://host:port} or {@code homa://service-name}. */
    public static final String SCHEME = "homa";

    private static final Logger logger = LoggerFactory.getLogger(HomaGrpcChannelFactory.class);

    private final HomaTransport transport;
    private final ServiceResolver resolver;
    private final Supplier<List<ClientInterceptor>> globalInterceptors;
    private final Duration defaultDeadline;
    private final Duration resolveTimeout;
    private final List<Created> channels = new ArrayList<>();
    private @Nullable ClientInterceptorFilter interceptorFilter;

    /**
     * @param transport the endpoint the channels send from (shared, never disposed here)
     * @param resolver finds the endpoint of a {@code homa://name} target
     * @param globalInterceptors the global client interceptors in order, asked at each
     *     {@link #createChannel}
     * @param defaultDeadline the deadline of calls that set none; zero for none
     * @param resolveTimeout how long {@link #createChannel} waits for {@code resolver}; positive
     */
    public HomaGrpcChannelFactory(HomaTransport transport, ServiceResolver resolver,
            Supplier<List<ClientInterceptor>> globalInterceptors, Duration defaultDeadline, Duration resolveTimeout) {
        this.transport = Objects.requireNonNull(transport, "transport must not be null");
        this.resolver = Objects.requireNonNull(resolver, "resolver must not be null");
        this.globalInterceptors = Objects.requireNonNull(globalInterceptors, "globalInterceptors must not be null");
        this.defaultDeadline = Objects.requireNonNull(defaultDeadline, "defaultDeadline must not be null");
        if (defaultDeadline.isNegative()) {
            throw new IllegalArgumentException("defaultDeadline must be zero (none) or positive, was " + defaultDeadline);
        }
        this.resolveTimeout = Objects.requireNonNull(resolveTimeout, "resolveTimeout must not be null");
        if (resolveTimeout.isNegative() || resolveTimeout.isZero()) {
            throw new IllegalArgumentException("resolveTimeout must be positive, was " + resolveTimeout);
        }
    }

    /** Which interceptors (global or per channel) the channels get; default all. */
    public void setInterceptorFilter(@Nullable ClientInterceptorFilter interceptorFilter) {
        this.interceptorFilter = interceptorFilter;
    }

    /** True for {@code homa:...} targets (scheme case-insensitive), false for any other. */
    @Override
    public boolean supports(String target) {
        return target != null && target.regionMatches(true, 0, SCHEME + ":", 0, SCHEME.length() + 1);
    }

    @Override
    public boolean supports(ClientInterceptor interceptor) {
        ClientInterceptorFilter filter = interceptorFilter;
        return filter == null || filter.filter(interceptor);
    }

    /**
     * A channel to {@code target}.
     *
     * @throws IllegalArgumentException if {@code target} is not {@code homa://host:port} or
     *     {@code homa://name}, or its port is not 1..65535
     * @throws IllegalStateException if a {@code homa://name} target cannot be resolved within the
     *     resolve timeout (the resolver's error is the cause)
     */
    @Override
    public ManagedChannel createChannel(String target, ChannelBuilderOptions options) {
        Objects.requireNonNull(options, "options must not be null");
        Target parsed = Target.parse(target);
        InetSocketAddress address = parsed.port() > 0 ? new InetSocketAddress(parsed.host(), parsed.port())
                : resolve(parsed.host(), target);
        HomaManagedChannel channel = HomaManagedChannel.builder(transport, address)
                .overrideAuthority(parsed.authority())
                .build();
        ManagedChannel result = intercept(channel, interceptors(options));
        synchronized (channels) {
            channels.add(new Created(result, options.shutdownGracePeriod()));
        }
        logger.debug("gRPC channel for {} over Homa to {}", target, address);
        return result;
    }

    private InetSocketAddress resolve(String name, String target) {
        try {
            InetSocketAddress address = resolver.resolve(name).block(resolveTimeout);
            if (address == null) {
                throw new IllegalStateException("no endpoint for '" + name + "'");
            }
            return address;
        } catch (RuntimeException e) {
            throw new IllegalStateException("cannot resolve the Homa service '" + name + "' of target '" + target
                    + "' within " + resolveTimeout + " (homa.grpc.client.resolve-timeout): " + e.getMessage(), e);
        }
    }

    /** The interceptors in the order they run, the first one outermost. */
    private List<ClientInterceptor> interceptors(ChannelBuilderOptions options) {
        List<ClientInterceptor> interceptors = new ArrayList<>(globalInterceptors.get());
        interceptors.addAll(options.interceptors());
        interceptors.removeIf((interceptor) -> !supports(interceptor));
        if (options.mergeWithGlobalInterceptors()) {
            AnnotationAwareOrderComparator.sort(interceptors);
        }
        if (!defaultDeadline.isZero()) {
            // Innermost: every interceptor sees the deadline the call will have.
            interceptors.add(new DefaultDeadlineSetupClientInterceptor(defaultDeadline));
        }
        return interceptors;
    }

    private static ManagedChannel intercept(HomaManagedChannel channel, List<ClientInterceptor> interceptors) {
        if (interceptors.isEmpty()) {
            return channel;
        }
        // ClientInterceptors.intercept runs the last of its list first.
        List<ClientInterceptor> reversed = new ArrayList<>(interceptors);
        Collections.reverse(reversed);
        return new InterceptedChannel(channel, ClientInterceptors.intercept(channel, reversed));
    }

    /**
     * Shuts down the channels created: new calls fail at once, calls in flight get each channel's
     * shutdown grace period (from its options) and are then cancelled.
     */
    @Override
    public void destroy() throws InterruptedException {
        List<Created> created;
        synchronized (channels) {
            created = new ArrayList<>(channels);
            channels.clear();
        }
        created.forEach((c) -> c.channel().shutdown());
        long start = System.nanoTime();
        for (Created c : created) {
            long left = c.grace().toNanos() - (System.nanoTime() - start);
            if (left <= 0 || !c.channel().awaitTermination(left, TimeUnit.NANOSECONDS)) {
                c.channel().shutdownNow();
            }
        }
    }

    private record Created(ManagedChannel channel, Duration grace) {
    }

    /** A parsed {@code homa://authority}: host and port, or a name (port 0). */
    record Target(String authority, String host, int port) {

        static Target parse(String target) {
            Objects.requireNonNull(target, "target must not be null");
            String prefix = SCHEME + "://";
            if (!target.regionMatches(true, 0, prefix, 0, prefix.length())) {
                throw invalid(target);
            }
            String authority = target.substring(prefix.length());
            int slash = authority.indexOf('/');
            if (slash >= 0) {
                if (slash != authority.length() - 1) {
                    throw invalid(target);
                }
                authority = authority.substring(0, slash);
            }
            if (authority.isEmpty()) {
                throw invalid(target);
            }
            int colon = authority.lastIndexOf(':');
            boolean bracketed = authority.startsWith("[");
            if (colon < 0 || (bracketed && colon < authority.indexOf(']'))) {
                if (bracketed) {
                    throw invalid(target); // an IPv6 address needs a port: it is not a service name
                }
                return new Target(authority, authority, 0);
            }
            String host = authority.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            int port;
            try {
                port = Integer.parseInt(authority.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw invalid(target);
            }
            if (host.isEmpty() || port < 1 || port > 65535) {
                throw new IllegalArgumentException("a homa:// target's port must be 1 to 65535 and its host set, was '"
                        + target + "'");
            }
            return new Target(authority, host, port);
        }

        private static IllegalArgumentException invalid(String target) {
            return new IllegalArgumentException("a Homa gRPC target is homa://host:port or homa://service-name, was '"
                    + target + "'");
        }
    }

    /** The Homa channel's lifecycle with the intercepted channel's calls. */
    private static final class InterceptedChannel extends ManagedChannel {
        private final HomaManagedChannel delegate;
        private final Channel intercepted;

        InterceptedChannel(HomaManagedChannel delegate, Channel intercepted) {
            this.delegate = delegate;
            this.intercepted = intercepted;
        }

        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> newCall(MethodDescriptor<ReqT, RespT> method,
                CallOptions callOptions) {
            return intercepted.newCall(method, callOptions);
        }

        @Override
        public String authority() {
            return delegate.authority();
        }

        @Override
        public ManagedChannel shutdown() {
            delegate.shutdown();
            return this;
        }

        @Override
        public ManagedChannel shutdownNow() {
            delegate.shutdownNow();
            return this;
        }

        @Override
        public boolean isShutdown() {
            return delegate.isShutdown();
        }

        @Override
        public boolean isTerminated() {
            return delegate.isTerminated();
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
            return delegate.awaitTermination(timeout, unit);
        }

        @Override
        public ConnectivityState getState(boolean requestConnection) {
            return delegate.getState(requestConnection);
        }

        @Override
        public String toString() {
            return delegate.toString();
        }
    }
}
