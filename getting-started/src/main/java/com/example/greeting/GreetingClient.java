package com.example.greeting;

import io.homa.spring.HomaMethod;
import io.homa.spring.client.HomaExchange;
import java.time.Duration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

@HomaExchange(service = "greeting", timeout = "2s")
public interface GreetingClient {
    Mono<Greeting> greet(GreetingRequest request);

    @HomaMethod(name = "count", idempotent = true, timeout = "30s")
    Flux<Integer> countTo(int limit, Duration every);
}
