package io.homa.spring.client.scan;

import org.springframework.boot.autoconfigure.AutoConfigurationPackage;
import org.springframework.context.annotation.Configuration;

/** Stands in for a {@code @SpringBootApplication} class in this package. */
@Configuration(proxyBeanMethods = false)
@AutoConfigurationPackage
public class ScanApplication {
}
