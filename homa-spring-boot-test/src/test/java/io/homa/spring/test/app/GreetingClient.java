package io.homa.spring.test.app;

import io.homa.spring.client.HomaExchange;
import reactor.core.publisher.Mono;

/** The application's declarative client of its own {@link GreetingService}. */
@HomaExchange(service = GreetingService.SERVICE, timeout = "5s")
public interface GreetingClient {

    Mono<String> greet(String name);
}
