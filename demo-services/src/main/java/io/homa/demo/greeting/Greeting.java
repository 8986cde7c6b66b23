package io.homa.demo.greeting;

/**
 * Result of {@link GreetingService#greet}.
 *
 * @param message the greeting
 * @param count how many greetings this server has handed out, this one included
 */
public record Greeting(String message, long count) {}
