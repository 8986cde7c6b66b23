package io.homa.demo.greeting;

/**
 * Argument of {@link GreetingService#greet}.
 *
 * @param name who to greet, 1..100 characters
 */
public record GreetingRequest(String name) {}
