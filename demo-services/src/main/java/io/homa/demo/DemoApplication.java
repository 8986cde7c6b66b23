package io.homa.demo;

import org.springframework.boot.DefaultApplicationArguments;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The Homa demo: with no arguments, runs the key-value demo (an aggregator in front of three
 * key-value shards, see {@link io.homa.demo.aggregator.KvDemo}), then the W3 workload for 10 s over
 * Homa on loopback (an echo server and a client in this JVM), and prints RTT, slowdown and
 * throughput per length decile. With {@code --spring.profiles.active=web} it also serves
 * Actuator's health and metrics over HTTP.
 * See {@link DemoProperties} for the arguments. Exit status: 0 when every RPC succeeded, 1 after a
 * failed RPC or a bad argument.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class DemoApplication {

    public static void main(String[] args) {
        try {
            DemoProperties.checkOptionNames(new DefaultApplicationArguments(args).getOptionNames());
        } catch (IllegalArgumentException e) {
            System.err.println("Error: " + e.getMessage());
            System.exit(1);
        }
        ConfigurableApplicationContext context;
        try {
            context = SpringApplication.run(DemoApplication.class, args);
        } catch (RuntimeException e) {
            // Spring Boot has already reported why start-up failed (e.g. a bad argument).
            System.exit(1);
            return;
        }
        // Server mode: serve until a signal closes the context (its shutdown hook closes the server).
        if (context.getBean(DemoRunner.class).awaitServerClosed()) {
            return; // closed by a signal: the JVM is already shutting down
        }
        int status = SpringApplication.exit(context);
        System.exit(status);
    }
}
