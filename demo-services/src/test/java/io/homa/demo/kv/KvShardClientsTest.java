package io.homa.demo.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.demo.DemoProperties;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.PayloadCodecs;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.RpcMethod;
import io.homa.reactive.rpc.StaticServiceResolver;
import io.homa.spring.HomaProperties;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.boot.ApplicationArguments;
import org.springframework.core.env.StandardEnvironment;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * {@link KvShardClients} over loopback UDP, in client mode (no shard runs in this JVM): shard 1
 * has a configured peer ({@code homa.client.peers.kv-1}), shard 0 has none.
 */
class KvShardClientsTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private HomaTransport server;
    private HomaTransport client;

    @AfterEach
    void close() {
        for (HomaTransport transport : new HomaTransport[] {client, server}) {
            if (transport != null) {
                transport.disposeNow(TIMEOUT);
            }
        }
    }

    @Test
    void shouldSendEachShardsCallsToItsPeerAndRefuseAShardWithoutOne() {
        RpcDispatcher dispatcher = new RpcDispatcher(PayloadCodecs.defaults(), Schedulers.boundedElastic());
        dispatcher.register(RpcMethod.unary(KvService.SERVICE, "get", new Type[] {String.class},
                arguments -> Mono.just("served " + arguments[0])));
        server = HomaTransport.bindNow(loopback(), dispatcher, TIMEOUT);
        client = HomaTransport.bindNow(loopback(), null, TIMEOUT);
        HomaClient homaClient = HomaClient.builder(client)
                .resolver(new StaticServiceResolver(Map.of()))
                .codecs(PayloadCodecs.defaults())
                .defaultCodec("json")
                .build();
        HomaProperties homaProperties = new HomaProperties();
        homaProperties.getClient().getPeers().put("kv-1", "127.0.0.1:" + server.localAddress().getPort());
        DemoProperties demoProperties = new DemoProperties(DemoProperties.Mode.CLIENT, Duration.ofSeconds(1), 1, "w1",
                4000, "127.0.0.1:4000", 1, Duration.ZERO, 1, Duration.ofSeconds(1), 2);
        KvShardServers none = new KvShardServers(demoProperties, homaProperties,
                new StaticListableBeanFactory().getBeanProvider(ApplicationArguments.class));

        KvShardClients shards = new KvShardClients(homaClient, homaProperties, demoProperties, none,
                new StandardEnvironment());

        assertThat(shards.count()).isEqualTo(2);
        assertThat(shards.shard(1).get("k").block(TIMEOUT)).isEqualTo("served k");
        assertThatThrownBy(() -> shards.shard(0).get("k").block(TIMEOUT))
                .isInstanceOfSatisfying(HomaException.class,
                        e -> assertThat(e.status()).isEqualTo(HomaStatus.UNAVAILABLE))
                .hasMessageContaining("set homa.client.peers.kv-0=host:port");
        assertThat(shards.forKey("k")).isSameAs(shards.shard(KvShards.shardOf("k", 2)));
    }

    private static HomaTransportConfig loopback() {
        return HomaTransportConfig.builder().bindAddress("127.0.0.1").port(0).build();
    }
}
