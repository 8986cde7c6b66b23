package io.homa.spring.test.app;

import io.homa.spring.client.HomaExchange;
import reactor.core.publisher.Mono;

/** A client of service {@code inventory}, which the application calls but does not export. */
@HomaExchange(service = "inventory", timeout = "5s")
public interface InventoryClient {

    Mono<Integer> count(String item);
}
