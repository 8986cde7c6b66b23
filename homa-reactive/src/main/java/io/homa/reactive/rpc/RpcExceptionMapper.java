package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import org.jspecify.annotations.Nullable;

/**
 * Chooses the status and message a method's exception is answered with, e.g.
 * {@code IllegalArgumentException → INVALID_ARGUMENT}, {@code NoSuchElementException → NOT_FOUND}.
 * The dispatcher asks its mappers in order; the first non-null answer wins. Without an answer a
 * {@link HomaException} keeps its status and message, and any other exception becomes INTERNAL
 * with {@code "ExceptionType: message"}.
 */
@FunctionalInterface
public interface RpcExceptionMapper {
    /**
     * @param error what the method threw or signalled
     * @return the exception whose status and message to answer with, or {@code null} to pass
     */
    @Nullable HomaException map(Throwable error);
}
