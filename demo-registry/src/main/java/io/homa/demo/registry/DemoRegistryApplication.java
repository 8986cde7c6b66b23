package io.homa.demo.registry;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.netflix.eureka.server.EnableEurekaServer;

/**
 * The multi-host demo's service registry: a Eureka server (Spring Cloud Netflix) on HTTP port
 * 8761, standalone (it neither registers with nor fetches from another registry). Its intervals
 * are shortened in {@code application.yml} so that a shard that dies leaves the registry within
 * seconds; see "Multi-host demo with a service registry" in docs/testbed.md.
 */
@SpringBootApplication
@EnableEurekaServer
public class DemoRegistryApplication {

    public static void main(String[] args) {
        SpringApplication.run(DemoRegistryApplication.class, args);
    }
}
