package io.homa.spring.test.slice;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.spring.client.ImportHomaClients;
import io.homa.spring.test.AutoConfigureHomaTest;
import io.homa.spring.test.app.GreetingClient;
import io.homa.spring.test.app.GreetingService;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** Without auto-configuration (as in a test slice), the annotation brings the starter's. */
@SpringBootTest(classes = SliceTests.Slice.class)
@AutoConfigureHomaTest
class SliceTests {

    @Autowired
    private GreetingClient greetingClient;

    @Test
    void shouldServeAndCallTheServiceWithTheStartersAutoConfiguration() {
        assertThat(this.greetingClient.greet("Ada").block(Duration.ofSeconds(10))).isEqualTo("Hello, Ada");
    }

    @Configuration(proxyBeanMethods = false)
    @Import(GreetingService.class)
    @ImportHomaClients(GreetingClient.class)
    static class Slice {
    }
}
