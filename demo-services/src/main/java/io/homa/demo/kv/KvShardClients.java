package io.homa.demo.kv;

import io.homa.demo.DemoProperties;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.ServiceResolver;
import io.homa.reactive.rpc.StaticServiceResolver;
import io.homa.spring.HomaProperties;
import io.homa.spring.client.HomaServiceProxyFactory;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import io.homa.spring.discovery.DiscoveryServiceResolver;
import io.homa.spring.discovery.HomaDiscoveryProperties;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * One declarative {@link KvClient} per key-value shard, for the aggregator's fan-out. Each is
 * made by the starter's {@link HomaServiceProxyFactory} over a {@link HomaClient} that is the
 * application's client (same transport, codecs, default deadline, interceptors such as metrics
 * and Resilience4j) with one difference: its resolver sends service {@value KvService#SERVICE}
 * to shard {@code i}, that is to peer {@code kv-<i>} of {@code homa.client.peers} if configured,
 * else to the in-process shard of {@link KvShardServers} (local and server mode), else (the other
 * modes, e.g. {@code watch}) to an instance of service {@code kv-<i>} found through Spring Cloud
 * discovery and LoadBalancer, when the application has them (the {@code eureka} profile: the
 * shards register under those names with their Homa port in metadata {@code homa-port}), looked
 * up again on every call. A shard with none of them fails its calls with UNAVAILABLE, naming the
 * property to set (or, with discovery, saying that no instance was found).
 */
@Component
public class KvShardClients {
    private final List<KvClient> clients;
    private final List<ServiceResolver> resolvers;
    private final boolean discovery;

    /**
     * @param homaClient the application's client, whose settings the shard clients copy
     * @param homaProperties {@code homa.client.*}: peers, per-service timeouts and codecs
     * @param demoProperties {@code --kv-shards}
     * @param shardServers the shards running in this JVM
     * @param environment resolves {@code ${...}} in {@code @HomaExchange} / {@code @HomaMethod} values
     */
    public KvShardClients(HomaClient homaClient, HomaProperties homaProperties, DemoProperties demoProperties,
            KvShardServers shardServers, Environment environment) {
        this(homaClient, homaProperties, demoProperties, shardServers, environment, null, null);
    }

    /**
     * @param homaClient the application's client, whose settings the shard clients copy
     * @param homaProperties {@code homa.client.*}: peers, per-service timeouts and codecs
     * @param demoProperties {@code --kv-shards}
     * @param shardServers the shards running in this JVM
     * @param environment resolves {@code ${...}} in {@code @HomaExchange} / {@code @HomaMethod} values
     * @param loadBalancers Spring Cloud LoadBalancer's per-service load balancers, if the
     *     application has them (or null): shards neither configured nor in this JVM are discovered
     * @param discovery {@code homa.client.discovery.port-metadata-key} (or null: {@code homa-port})
     */
    @Autowired
    public KvShardClients(HomaClient homaClient, HomaProperties homaProperties, DemoProperties demoProperties,
            KvShardServers shardServers, Environment environment,
            ObjectProvider<ReactiveLoadBalancer.Factory<ServiceInstance>> loadBalancers,
            ObjectProvider<HomaDiscoveryProperties> discovery) {
        HomaProperties.Client client = homaProperties.getClient();
        StaticServiceResolver configured = StaticServiceResolver.ofPeers(client.peerAddresses());
        ServiceResolver discovered = null;
        ReactiveLoadBalancer.Factory<ServiceInstance> factory = loadBalancers == null ? null : loadBalancers.getIfUnique();
        if (factory != null && !shardServers.runsShards()) {
            HomaDiscoveryProperties keys = discovery == null ? null : discovery.getIfAvailable();
            discovered = DiscoveryServiceResolver.loadBalanced(StaticServiceResolver.ofPeers(Map.of()), factory,
                    keys == null ? HomaDiscoveryProperties.DEFAULT_PORT_METADATA_KEY : keys.getPortMetadataKey());
        }
        List<KvClient> created = new ArrayList<>(demoProperties.kvShards());
        List<ServiceResolver> resolvers = new ArrayList<>(demoProperties.kvShards());
        for (int shard = 0; shard < demoProperties.kvShards(); shard++) {
            ServiceResolver resolver = shardResolver(shard, configured, shardServers, discovered);
            resolvers.add(resolver);
            HomaClient shardClient = HomaClient.builder(homaClient.transport())
                    .resolver(resolver)
                    .codecs(homaClient.codecs())
                    .defaultCodec(homaClient.defaultCodec().name())
                    .defaultTimeout(homaClient.defaultTimeout())
                    .streamBatchSize(client.getStreamBatchSize())
                    .interceptors(homaClient.interceptors())
                    .build();
            created.add(new HomaServiceProxyFactory(shardClient, client, homaClient.codecs().names(),
                    environment::resolvePlaceholders).createClient(KvClient.class));
        }
        this.clients = List.copyOf(created);
        this.resolvers = List.copyOf(resolvers);
        this.discovery = discovered != null;
    }

    /** Whether shards that are neither configured nor in this JVM are found through Spring Cloud discovery. */
    public boolean discovers() {
        return discovery;
    }

    /**
     * Where shard {@code shard}'s next call would go (for a discovered shard, a fresh look-up).
     *
     * @return the endpoint, or an error {@code HomaException} with status UNAVAILABLE when the
     *     shard has none
     * @throws IndexOutOfBoundsException if {@code shard} is not in {@code 0..count()-1}
     */
    public Mono<InetSocketAddress> resolve(int shard) {
        return resolvers.get(shard).resolve(KvService.SERVICE);
    }

    /** Number of shards ({@code --kv-shards}). */
    public int count() {
        return clients.size();
    }

    /**
     * The client of shard {@code shard}.
     *
     * @throws IndexOutOfBoundsException if {@code shard} is not in {@code 0..count()-1}
     */
    public KvClient shard(int shard) {
        return clients.get(shard);
    }

    /** The client of the shard that holds {@code key} ({@link KvShards#shardOf}). */
    public KvClient forKey(String key) {
        return clients.get(KvShards.shardOf(key, clients.size()));
    }

    private static ServiceResolver shardResolver(int shard, StaticServiceResolver configured,
            KvShardServers shardServers, ServiceResolver discovered) {
        String peer = KvShards.peerName(shard);
        boolean isConfigured = configured.peers().containsKey(peer);
        return service -> {
            if (!KvService.SERVICE.equals(service)) {
                return Mono.error(new HomaException(HomaStatus.UNAVAILABLE,
                        "the client of key-value shard " + shard + " only calls '" + KvService.SERVICE + "', not '"
                                + service + "'"));
            }
            if (isConfigured) {
                return configured.resolve(peer);
            }
            if (discovered != null) {
                return discovered.resolve(peer);
            }
            return Mono.defer(() -> {
                InetSocketAddress address = shardServers.address(shard);
                return address != null ? Mono.just(address) : Mono.error(new HomaException(HomaStatus.UNAVAILABLE,
                        "no peer for key-value shard " + shard + ": set homa.client.peers." + peer + "=host:port"
                                + " (in local and server mode, shards without one run in this JVM)"));
            });
        };
    }
}
