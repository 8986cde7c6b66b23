package com.example.greeting;

import io.homa.spring.HomaMethod;
import io.homa.spring.HomaService;
import java.time.Duration;
import reactor.core.publisher.Flux;

@HomaService("greeting")
public class GreetingService {
    public Greeting greet(GreetingRequest request) {
        return new Greeting("Hello, " + request.name());
    }

    @HomaMethod(name = "count", idempotent = true)      // rename; mark safe to retry
    public Flux<Integer> countTo(int limit, Duration every) {
        return Flux.range(1, limit).delayElements(every);
    }
}
