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
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * One declarative {@link KvClient} per key-value shard, for the aggregator's fan-out. Each is
 * made by the starter's {@link HomaServiceProxyFactory} over a {@link HomaClient} that is the
 * application's client (same transport, codecs, default deadline, interceptors such as metrics
 * and Resilience4j) with one difference: its resolver sends service {@value KvService#SERVICE}
 * to shard {@code i}, that is to peer {@code kv-<i>} of {@code homa.client.peers} if configured,
 * else to the in-process shard of {@link KvShardServers}. A shard with neither fails its calls
 * with UNAVAILABLE, naming the property to set.
 */
@Component
public class KvShardClients {
    private final List<KvClient> clients;

    /**
     * @param homaClient the application's client, whose settings the shard clients copy
     * @param homaProperties {@code homa.client.*}: peers, per-service timeouts and codecs
     * @param demoProperties {@code --kv-shards}
     * @param shardServers the shards running in this JVM
     * @param environment resolves {@code ${...}} in {@code @HomaExchange} / {@code @HomaMethod} values
     */
    public KvShardClients(HomaClient homaClient, HomaProperties homaProperties, DemoProperties demoProperties,
            KvShardServers shardServers, Environment environment) {
        HomaProperties.Client client = homaProperties.getClient();
        StaticServiceResolver configured = StaticServiceResolver.ofPeers(client.peerAddresses());
        List<KvClient> created = new ArrayList<>(demoProperties.kvShards());
        for (int shard = 0; shard < demoProperties.kvShards(); shard++) {
            HomaClient shardClient = HomaClient.builder(homaClient.transport())
                    .resolver(shardResolver(shard, configured, shardServers))
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
            KvShardServers shardServers) {
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
            return Mono.defer(() -> {
                InetSocketAddress address = shardServers.address(shard);
                return address != null ? Mono.just(address) : Mono.error(new HomaException(HomaStatus.UNAVAILABLE,
                        "no peer for key-value shard " + shard + ": set homa.client.peers." + peer + "=host:port"
                                + " (in local and server mode, shards without one run in this JVM)"));
            });
        };
    }
}
