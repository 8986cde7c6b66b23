package io.homa.spring.test.app;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** The application under test: exports {@link GreetingService}, calls it through {@link GreetingClient}. */
@SpringBootApplication
public class GreetingApplication {
}
