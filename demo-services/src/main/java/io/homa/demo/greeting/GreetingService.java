package io.homa.demo.greeting;

import io.homa.spring.HomaService;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The demo's {@code @HomaService}: exported by the starter as service {@value #SERVICE} on the
 * application's Homa endpoint ({@code homa.server.port}). Call it with
 * {@code homaClient.call("greeting", "greet", new GreetingRequest("Ada"), Greeting.class)}.
 */
@HomaService(GreetingService.SERVICE)
public class GreetingService {
    /** The service name. */
    public static final String SERVICE = "greeting";
    /** Longest accepted name, in characters. */
    public static final int MAX_NAME_LENGTH = 100;

    private final AtomicLong count = new AtomicLong();

    /**
     * Greets someone.
     *
     * @throws IllegalArgumentException (INTERNAL at the caller, with this message) if the name is
     *     missing, blank or longer than {@value #MAX_NAME_LENGTH} characters
     */
    public Greeting greet(GreetingRequest request) {
        String name = request == null ? null : request.name();
        if (name == null || name.isBlank() || name.length() > MAX_NAME_LENGTH) {
            throw new IllegalArgumentException("name must be 1.." + MAX_NAME_LENGTH + " characters, not blank");
        }
        return new Greeting("Hello, " + name.strip() + ", over Homa!", count.incrementAndGet());
    }
}
