package io.homa.reactive.rpc;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A unary call's result with the response metadata the server's method set
 * ({@link HomaCallContext#responseMetadata()}). Returned by {@link HomaClient#callForResponse};
 * a {@code @HomaExchange} method declares it as {@code Mono<HomaResponse<T>>} or
 * {@code HomaResponse<T>}.
 *
 * @param value the decoded result, {@code null} for a {@code null} or empty result
 * @param metadata the response metadata (read-only, reserved keys left out)
 */
public record HomaResponse<T>(@Nullable T value, HomaMetadata metadata) {
    public HomaResponse {
        Objects.requireNonNull(metadata, "metadata must not be null");
    }
}
