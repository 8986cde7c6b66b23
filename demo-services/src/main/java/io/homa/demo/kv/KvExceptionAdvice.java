package io.homa.demo.kv;

import io.homa.reactive.HomaStatus;
import io.homa.spring.HomaControllerAdvice;
import io.homa.spring.HomaExceptionHandler;

/**
 * Maps the key-value exceptions of every {@code @HomaService} of an application (the shard's
 * {@link KvService} and the aggregator) to statuses.
 */
@HomaControllerAdvice
public class KvExceptionAdvice {

    /** A missing key is {@code NOT_FOUND}, with the exception's message. */
    @HomaExceptionHandler
    public HomaStatus keyNotFound(KeyNotFoundException e) {
        return HomaStatus.NOT_FOUND;
    }
}
