package io.homa.spring.client.scan;

import reactor.core.publisher.Mono;

/** Not annotated: never registered. */
public interface NotAClient {

    Mono<String> nothing();
}
