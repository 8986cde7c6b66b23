package io.homa.spring;

import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.ServiceResolver;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.util.StringUtils;
import reactor.core.publisher.Mono;

/**
 * {@code homa.client.local-services}: sends the calls to the services this application exports
 * to its own endpoint, and every other call to the application's resolver. A service is sent
 * here when it is selected ({@code *} selects all), has no {@code homa.client.peers} entry, and
 * has a method registered with the {@link RpcDispatcher} at the time of the call.
 */
final class LocalServiceResolver implements ServiceResolver {

    /** The property this resolver implements. */
    static final String PROPERTY = "homa.client.local-services";

    private final ServiceResolver delegate;

    private final InetSocketAddress local;

    private final RpcDispatcher dispatcher;

    private final Set<String> peers;

    /** The selected services, or {@code null} for every exported one. */
    private final @Nullable Set<String> selected;

    private LocalServiceResolver(ServiceResolver delegate, InetSocketAddress local, RpcDispatcher dispatcher,
            Set<String> peers, @Nullable Set<String> selected) {
        this.delegate = delegate;
        this.local = local;
        this.dispatcher = dispatcher;
        this.peers = peers;
        this.selected = selected;
    }

    /**
     * {@code resolver} as it is when {@code homa.client.local-services} is empty, else wrapped.
     *
     * @param resolver the application's resolver, asked for every call not sent here
     * @param client the {@code homa.client.*} settings (local services and peers)
     * @param dispatcher the server side of this endpoint, whose registered methods say which
     *     services it exports
     * @param bound the address the endpoint bound; a wildcard address is replaced by the loopback
     *     address of its family
     * @throws InvalidConfigurationPropertyValueException naming {@code homa.client.local-services}
     *     if an entry is blank
     */
    static ServiceResolver wrap(ServiceResolver resolver, HomaProperties.Client client, RpcDispatcher dispatcher,
            InetSocketAddress bound) {
        List<String> names = client.getLocalServices();
        if (names.isEmpty()) {
            return resolver;
        }
        Set<String> selected = new LinkedHashSet<>();
        for (String name : names) {
            if (!StringUtils.hasText(name)) {
                throw new InvalidConfigurationPropertyValueException(PROPERTY, String.join(",", names),
                        "must list service names, or * for every service this application exports");
            }
            selected.add(name.trim());
        }
        return new LocalServiceResolver(resolver, reachable(bound), dispatcher, Set.copyOf(client.getPeers().keySet()),
                selected.contains("*") ? null : Set.copyOf(selected));
    }

    /** {@code bound}, with a wildcard address replaced by the loopback address of its family. */
    static InetSocketAddress reachable(InetSocketAddress bound) {
        InetAddress address = bound.getAddress();
        if (address == null || !address.isAnyLocalAddress()) {
            return bound;
        }
        return new InetSocketAddress(address instanceof Inet6Address ? "::1" : "127.0.0.1", bound.getPort());
    }

    @Override
    public Mono<InetSocketAddress> resolve(String service) {
        if (this.peers.contains(service) || (this.selected != null && !this.selected.contains(service))) {
            return this.delegate.resolve(service);
        }
        return Mono.defer(() -> this.dispatcher.exports(service) ? Mono.just(this.local) : this.delegate.resolve(service));
    }

    @Override
    public String toString() {
        return "LocalServiceResolver[" + (this.selected != null ? this.selected : "*") + " at " + this.local
                + ", else " + this.delegate + "]";
    }
}
