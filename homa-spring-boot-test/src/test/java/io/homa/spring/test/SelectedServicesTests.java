package io.homa.spring.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.spring.test.app.GreetingApplication;
import io.homa.spring.test.app.GreetingClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;

/** {@code @AutoConfigureHomaTest(services)}: only the services named go to the application's own endpoint. */
@SpringBootTest(classes = GreetingApplication.class)
@AutoConfigureHomaTest(services = "inventory")
class SelectedServicesTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @Autowired
    private GreetingClient greetingClient;

    @Autowired
    private Environment environment;

    @Test
    void shouldResolveAnExportedServiceThatIsNotNamedAsUsual() {
        assertThat(this.environment.getProperty("homa.client.local-services")).isEqualTo("inventory");
        assertThatThrownBy(() -> this.greetingClient.greet("Ada").block(WAIT))
                .isInstanceOfSatisfying(HomaException.class,
                        (e) -> assertThat(e.status()).isEqualTo(HomaStatus.UNAVAILABLE))
                .hasMessageContaining("no peer for service 'greeting'");
    }
}
