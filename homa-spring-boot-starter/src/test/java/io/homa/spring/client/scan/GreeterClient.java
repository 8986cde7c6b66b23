package io.homa.spring.client.scan;

import io.homa.spring.client.HomaExchange;
import reactor.core.publisher.Mono;

@HomaExchange("Greeter")
public interface GreeterClient {

    Mono<String> greet(String name);
}
