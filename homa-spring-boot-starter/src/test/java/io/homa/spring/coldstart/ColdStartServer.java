package io.homa.spring.coldstart;

import io.homa.spring.HomaService;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A minimal Spring Boot application exporting one {@code @HomaService}, started in a fresh JVM by
 * {@link ColdStartTests}: it prints {@code READY <port>} once its context is ready.
 */
@SpringBootApplication(proxyBeanMethods = false)
public class ColdStartServer {

    /** The exported service. */
    @HomaService("cold")
    public static class Cold {
        public String echo(String text) {
            return "cold:" + text;
        }
    }

    public static void main(String[] args) {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(ColdStartServer.class)
                .properties("homa.server.port=0", "homa.server.bind-address=127.0.0.1", "spring.main.banner-mode=off")
                .run(args);
        System.out.println("READY " + context.getEnvironment().getProperty("local.homa.port"));
        System.out.flush();
    }
}
