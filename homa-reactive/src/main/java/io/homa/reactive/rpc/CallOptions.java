package io.homa.reactive.rpc;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Per-call settings of {@link HomaClient}. Immutable; the {@code with*} methods return copies.
 *
 * @param timeout the call's deadline, relative to subscription: it travels with the request
 *     ({@link RpcMetadata#TIMEOUT_MS}) and, when it passes, the client abandons the call with
 *     {@code HomaException(DEADLINE_EXCEEDED)}. For a stream it bounds the whole stream.
 *     {@code null} = the client's default timeout; {@link Duration#ZERO} = no deadline
 * @param idempotent whether the call may safely run twice (a hint for retry interceptors)
 * @param codec the codec to encode with, by name; {@code null} = the client's default codec
 * @param metadata extra request metadata (unmodifiable); keys starting with {@code homa-} are
 *     reserved and rejected
 */
public record CallOptions(@Nullable Duration timeout, boolean idempotent, @Nullable String codec,
                          Map<String, String> metadata) {
    private static final CallOptions DEFAULTS = new CallOptions(null, false, null, Map.of());

    /**
     * Validates.
     *
     * @throws IllegalArgumentException if the timeout is negative or a metadata key is reserved
     */
    public CallOptions {
        if (timeout != null && timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be zero (none) or positive, was " + timeout);
        }
        Objects.requireNonNull(metadata, "metadata must not be null");
        Map<String, String> copy = new LinkedHashMap<>();
        metadata.forEach((key, value) -> {
            Objects.requireNonNull(key, "metadata keys must not be null");
            Objects.requireNonNull(value, () -> "metadata value of '" + key + "' must not be null");
            if (RpcMetadata.isReserved(key)) {
                throw new IllegalArgumentException("metadata key '" + key + "' is reserved (prefix homa-)");
            }
            copy.put(key, value);
        });
        metadata = Collections.unmodifiableMap(copy);
    }

    /** No timeout override, not idempotent, the default codec, no metadata. */
    public static CallOptions defaults() {
        return DEFAULTS;
    }

    /** A copy with {@code timeout} ({@code null} = client default, zero = none). */
    public CallOptions withTimeout(@Nullable Duration timeout) {
        return new CallOptions(timeout, idempotent, codec, metadata);
    }

    /** A copy with {@code idempotent}. */
    public CallOptions withIdempotent(boolean idempotent) {
        return new CallOptions(timeout, idempotent, codec, metadata);
    }

    /** A copy with {@code codec} ({@code null} = client default). */
    public CallOptions withCodec(@Nullable String codec) {
        return new CallOptions(timeout, idempotent, codec, metadata);
    }

    /** A copy with {@code metadata} replacing the current metadata. */
    public CallOptions withMetadata(Map<String, String> metadata) {
        return new CallOptions(timeout, idempotent, codec, metadata);
    }

    /** A copy with one more metadata entry. */
    public CallOptions withMetadata(String key, String value) {
        Map<String, String> more = new LinkedHashMap<>(metadata);
        more.put(key, value);
        return new CallOptions(timeout, idempotent, codec, more);
    }
}
