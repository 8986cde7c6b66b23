package io.homa.spring.client.scan.sub;

import io.homa.spring.client.EnableHomaClients;
import org.springframework.context.annotation.Configuration;

/** {@code @EnableHomaClients} without attributes: scans this package. */
@Configuration(proxyBeanMethods = false)
@EnableHomaClients
public class SubConfiguration {
}
