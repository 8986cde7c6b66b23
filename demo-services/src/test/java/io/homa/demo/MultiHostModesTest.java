package io.homa.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.netflix.appinfo.ApplicationInfoManager;
import com.netflix.discovery.EurekaClient;
import io.homa.demo.kv.shard.KvShardApplication;
import io.homa.spring.HomaAutoConfiguration;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.cloud.client.serviceregistry.Registration;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The modes of the multi-host demo on loopback: {@code shard} (with and without the
 * {@code eureka} profile, never reaching a registry here) and {@code watch} against two shards.
 * The demo across hosts with a real registry is {@code benchmarks/demo-multihost.sh}.
 */
@ExtendWith(OutputCaptureExtension.class)
class MultiHostModesTest {

    @Test
    void aShardWithoutTheEurekaProfileHasNoRegistryClientAndNoLoadBalancer(CapturedOutput output) {
        try (ConfigurableApplicationContext context = SpringApplication.run(DemoApplication.class,
                "--mode=shard", "--shard=2", "--homa.server.port=0", "--homa.server.bind-address=127.0.0.1")) {
            assertThat(context.getBeanProvider(EurekaClient.class).getIfAvailable()).isNull();
            assertThat(context.getBeanProvider(Registration.class).getIfAvailable()).isNull();
            assertThat(context.getBeanNamesForType(ReactiveLoadBalancer.Factory.class)).isEmpty();
            assertThat(context.getEnvironment().getProperty("spring.application.name")).isEqualTo("kv-2");
            String port = context.getEnvironment().getProperty(HomaAutoConfiguration.LOCAL_PORT_PROPERTY);
            assertThat(output.getOut()).contains("Key-value shard kv-2 serving kv on UDP /127.0.0.1:" + port
                    + ", not registered (no service registry: the aggregator needs homa.client.peers.kv-2)");
        }
    }

    @Test
    void aShardWithTheEurekaProfileRegistersAsItsPeerNameWithItsBoundHomaPort(CapturedOutput output) {
        // Neither registers nor fetches: the registration is built, no registry is called.
        try (ConfigurableApplicationContext context = SpringApplication.run(DemoApplication.class,
                "--mode=shard", "--shard=1", "--homa.server.port=0", "--homa.server.bind-address=127.0.0.1",
                "--spring.profiles.active=eureka", "--eureka.client.register-with-eureka=false",
                "--eureka.instance.ip-address=127.0.0.1")) {
            String port = context.getEnvironment().getProperty(HomaAutoConfiguration.LOCAL_PORT_PROPERTY);
            assertThat(Integer.parseInt(port)).isBetween(1, 65535);
            Registration registration = context.getBean(Registration.class);
            assertThat(registration.getServiceId()).isEqualToIgnoringCase("kv-1");
            assertThat(registration.getMetadata()).containsEntry("homa-port", port);
            // What Eureka's client sends to the registry:
            ApplicationInfoManager eureka = context.getBean(ApplicationInfoManager.class);
            assertThat(eureka.getInfo().getMetadata()).containsEntry("homa-port", port);
            assertThat(eureka.getInfo().getVIPAddress()).isEqualTo("kv-1");
            assertThat(context.getBean(EurekaClient.class).getEurekaClientConfig().shouldFetchRegistry())
                    .as("a shard does not need the registry's copy").isFalse();
            assertThat(output.getOut()).contains("Key-value shard kv-1 serving kv on UDP /127.0.0.1:" + port
                    + ", registered as kv-1 at 127.0.0.1 with homa-port " + port);
        }
    }

    @Test
    void theWatchSeesBothShardsAnswerThenTheOneThatStopsFailWithAStatus(CapturedOutput output) throws Exception {
        ConfigurableApplicationContext shard0 = KvShardApplication.start(0, "127.0.0.1", List.of());
        ConfigurableApplicationContext shard1 = KvShardApplication.start(1, "127.0.0.1", List.of());
        InetSocketAddress address0 = KvShardApplication.localAddress(shard0);
        InetSocketAddress address1 = KvShardApplication.localAddress(shard1);
        Thread stopper = new Thread(() -> {
            // Stops shard 1 once the watch has seen both shards answer and printed the figures.
            while (!output.getOut().contains("Aggregated stats")) {
                try {
                    TimeUnit.MILLISECONDS.sleep(50);
                } catch (InterruptedException e) {
                    return;
                }
            }
            shard1.close();
        }, "stop-kv-1");
        stopper.start();
        try (ConfigurableApplicationContext watch = SpringApplication.run(DemoApplication.class,
                "--mode=watch", "--kv-shards=2", "--duration=3s", "--homa.server.bind-address=127.0.0.1",
                "--homa.client.peers.kv-0=127.0.0.1:" + address0.getPort(),
                "--homa.client.peers.kv-1=127.0.0.1:" + address1.getPort())) {
            stopper.join(Duration.ofSeconds(30).toMillis());
            assertThat(SpringApplication.exit(watch)).isZero();
        } finally {
            stopper.interrupt();
            shard0.close();
            shard1.close();
        }
        assertThat(output.getOut())
                .contains("Watching 2 shards through the aggregator in this application")
                .containsPattern("event \\d+\\.\\d{3} kv-0 answering via 127\\.0\\.0\\.1:" + address0.getPort())
                .containsPattern("event \\d+\\.\\d{3} kv-1 answering via 127\\.0\\.0\\.1:" + address1.getPort())
                .contains("Aggregated stats(prefix \"key-\") over 2 shards: 100 keys")
                .containsPattern("event \\d+\\.\\d{3} kv-1 failing UNAVAILABLE: kv shard 1: ")
                .containsPattern("watch \\d+\\.\\d{3}  \\| kv-0 \\d+ ok, 0 failed  \\| kv-1 \\d+ ok, \\d+ failed")
                .containsPattern("Watch done: kv-0 [0-9,]+ answered, 0 failed; kv-1 [0-9,]+ answered, [1-9][0-9,]* failed")
                .doesNotContain("kv-0 failing");
    }
}
