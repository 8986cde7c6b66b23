package io.homa.demo.greeting;

import io.homa.demo.DemoProperties;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.rpc.HomaClient;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.ExitCodeGenerator;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * At start-up, before the workload, calls {@link GreetingService} through the injected
 * {@link HomaClient} (the RPC layer: JSON arguments and results in a Homa RPC) and logs the
 * result. In {@code local} mode a failed call makes the exit code 1; in the other modes the
 * greeting server may simply not be there, so a failure is only logged.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
public class GreetingClient implements ApplicationRunner, ExitCodeGenerator {
    private static final Logger log = LoggerFactory.getLogger(GreetingClient.class);
    static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final HomaClient homaClient;
    private final HomaTransport endpoint;
    private final DemoProperties properties;
    private volatile Greeting greeting;
    private volatile boolean failed;

    /**
     * @param homaClient the starter's client
     * @param endpoint the starter's endpoint, which serves {@link GreetingService}
     * @param properties the demo's arguments
     */
    public GreetingClient(HomaClient homaClient, HomaTransport endpoint, DemoProperties properties) {
        this.homaClient = homaClient;
        this.endpoint = endpoint;
        this.properties = properties;
    }

    @Override
    public void run(ApplicationArguments args) {
        log.info("@HomaService endpoint (GreetingService) on UDP {}", endpoint.localAddress());
        try {
            greeting = homaClient.call(GreetingService.SERVICE, "greet", new GreetingRequest("Homa demo"), Greeting.class)
                    .block(TIMEOUT);
            log.info("GreetingService answered over Homa: \"{}\" (greeting #{})",
                    greeting == null ? null : greeting.message(), greeting == null ? 0 : greeting.count());
        } catch (RuntimeException e) {
            failed = properties.mode() == DemoProperties.Mode.LOCAL;
            log.warn("GreetingService call failed: {}", e.getMessage());
        }
    }

    /** The greeting received at start-up, or {@code null} if the call failed. */
    public Greeting greeting() {
        return greeting;
    }

    @Override
    public int getExitCode() {
        return failed ? 1 : 0;
    }
}
