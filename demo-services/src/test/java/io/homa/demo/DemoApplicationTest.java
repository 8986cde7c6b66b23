package io.homa.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
        assertThat(SpringApplication.exit(context)).isZero();
        assertThat(output.getOut())
                .contains("Homa echo workload w1")
                .contains("Unloaded RTT (median of 5 sequential RPCs per length)")
                .contains("Decile  Length (bytes)")
                .contains(", 0 failed RPCs");
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
