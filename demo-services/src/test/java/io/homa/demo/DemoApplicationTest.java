package io.homa.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.demo.aggregator.AggregateStats;
import io.homa.demo.aggregator.KvDemo;
import io.homa.demo.greeting.GreetingClient;
import io.homa.demo.workload.WorkloadResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/** The whole application, as {@code java -jar demo-services.jar} runs it, with a short workload. */
@ExtendWith(OutputCaptureExtension.class)
class DemoApplicationTest {

    @Test
    void shouldRunAShortLocalWorkloadWithoutFailuresAndExitWithZero(CapturedOutput output) {
        ConfigurableApplicationContext context = SpringApplication.run(DemoApplication.class,
                "--duration=2s", "--workload=w1", "--concurrency=4", "--warmup=200ms", "--probe-samples=5");

        WorkloadResult result = context.getBean(DemoRunner.class).result();
        assertThat(result.completedRpcs()).isPositive();
        assertThat(result.failedRpcs()).isZero();
        assertThat(result.rows()).hasSize(10);
        assertThat(context.getBean(GreetingClient.class).greeting().message())
                .isEqualTo("Hello, Homa demo, over Homa!");
        AggregateStats kvStats = context.getBean(KvDemo.class).stats();
        assertThat(kvStats.keys()).isEqualTo(KvDemo.KEYS);
        assertThat(kvStats.shards()).hasSize(3).allSatisfy(shard -> assertThat(shard.keys()).isPositive());
        assertThat(context.getEnvironment().getProperty("local.server.port"))
                .as("no HTTP server without the web profile").isNull();
        assertThat(SpringApplication.exit(context)).isZero();
        assertThat(output.getOut())
                .contains("Homa echo workload w1")
                .contains("Unloaded RTT (median of 5 sequential RPCs per length)")
                .contains("Decile  Length (bytes)")
                .contains(", 0 failed RPCs")
                .contains("Key-value demo: 3 shards (kv-0 127.0.0.1:")
                .containsPattern("Put 100 keys through the aggregator \\(16 outstanding\\) in [0-9.]+ ms; keys per shard: kv-0 \\d+, kv-1 \\d+, kv-2 \\d+")
                .contains("get(key-042) = value-042; get(no-such-key) -> NOT_FOUND (KeyNotFoundException: no value for key 'no-such-key')")
                .contains("records, key-090, key-091, key-092, key-093, key-094")
                .containsPattern("Aggregated stats\\(prefix \"key-\"\\) over 3 shards: 100 keys, 900 value characters");
        assertThat(output.getOut()).as("Spring Boot stays quiet: no banner, no startup info")
                .doesNotContain(":: Spring Boot ::").doesNotContain("Started DemoApplication");
    }

    @Test
    void shouldRefuseToStartWithABadArgument() {
        assertThatThrownBy(() -> SpringApplication.run(DemoApplication.class, "--workload=w9"))
                .rootCause()
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--workload must be one of w1, w2, w3, w4, w5, was 'w9'");
        assertThatThrownBy(() -> SpringApplication.run(DemoApplication.class, "--concurrency=0"))
                .rootCause()
                .hasMessage("--concurrency must be between 1 and 1024, was 0");
    }
}
