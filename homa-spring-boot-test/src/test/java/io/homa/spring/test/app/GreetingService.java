package io.homa.spring.test.app;

import io.homa.spring.HomaService;

/** Service {@value #SERVICE}, exported by {@link GreetingApplication}. */
@HomaService(GreetingService.SERVICE)
public class GreetingService {

    public static final String SERVICE = "greeting";

    public String greet(String name) {
        return "Hello, " + name;
    }
}
