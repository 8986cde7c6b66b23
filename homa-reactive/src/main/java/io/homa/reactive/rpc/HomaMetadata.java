package io.homa.reactive.rpc;

import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * Call metadata: text entries and binary ones, as gRPC's {@code Metadata}. On the wire every entry
 * is text in the envelope's metadata; a binary value is stored base64 (RFC 4648, with padding)
 * under a key ending in {@value #BINARY_SUFFIX}, gRPC's convention. Keys are non-empty, at most
 * 255 characters, and those starting with {@code homa-} are reserved for the RPC layer
 * ({@link RpcMetadata}).
 *
 * <p>Uses: an argument of a {@code @HomaExchange} method (its entries join that call's request
 * metadata; it is not sent as an argument), {@link CallOptions#withMetadata(Map)},
 * {@link HomaCallContext#requestMetadata()} (read-only) and
 * {@link HomaCallContext#responseMetadata()} on the server, {@link HomaResponse#metadata()} on
 * the client. Thread-safe; iteration order is insertion order.
 */
public final class HomaMetadata {
    /** The suffix of keys whose values are binary (base64 on the wire). */
    public static final String BINARY_SUFFIX = "-bin";

    /** Made at the first entry: most calls' response metadata stays empty. */
    private @Nullable Map<String, String> entries;
    private final boolean readOnly;

    private HomaMetadata(boolean readOnly) {
        this.readOnly = readOnly;
    }

    /** Empty, mutable metadata. */
    public static HomaMetadata create() {
        return new HomaMetadata(false);
    }

    /**
     * Read-only metadata holding {@code wire}'s entries (as received: binary values still base64),
     * reserved keys left out.
     */
    public static HomaMetadata readOnlyOf(Map<String, String> wire) {
        HomaMetadata metadata = new HomaMetadata(true);
        synchronized (metadata) {
            wire.forEach((key, value) -> {
                if (!RpcMetadata.isReserved(key)) {
                    metadata.entries().put(key, value);
                }
            });
        }
        return metadata;
    }

    /**
     * Sets a text entry.
     *
     * @return this metadata
     * @throws IllegalArgumentException for a reserved, empty or too long key, or a key ending in
     *     {@value #BINARY_SUFFIX} (use {@link #putBinary})
     * @throws UnsupportedOperationException if this metadata is read-only
     */
    public HomaMetadata put(String key, String value) {
        checkKey(key);
        Objects.requireNonNull(value, () -> "metadata value of '" + key + "' must not be null");
        if (key.endsWith(BINARY_SUFFIX)) {
            throw new IllegalArgumentException("metadata key '" + key + "' ends in " + BINARY_SUFFIX
                    + ", which marks a binary value: use putBinary");
        }
        return store(key, value);
    }

    /**
     * Sets a binary entry (base64 on the wire).
     *
     * @return this metadata
     * @throws IllegalArgumentException for a reserved, empty or too long key, or a key not ending in
     *     {@value #BINARY_SUFFIX}
     * @throws UnsupportedOperationException if this metadata is read-only
     */
    public HomaMetadata putBinary(String key, byte[] value) {
        checkKey(key);
        Objects.requireNonNull(value, () -> "metadata value of '" + key + "' must not be null");
        if (!key.endsWith(BINARY_SUFFIX)) {
            throw new IllegalArgumentException("binary metadata key '" + key + "' must end in " + BINARY_SUFFIX);
        }
        return store(key, Base64.getEncoder().encodeToString(value));
    }

    private synchronized HomaMetadata store(String key, String value) {
        if (readOnly) {
            throw new UnsupportedOperationException("this metadata is read-only (the request's, as received)");
        }
        entries().put(key, value);
        return this;
    }

    private Map<String, String> entries() {
        if (entries == null) {
            entries = new LinkedHashMap<>();
        }
        return entries;
    }

    /** The text value of {@code key}, or {@code null}; for a binary key, its base64 text. */
    public synchronized @Nullable String get(String key) {
        return entries == null ? null : entries.get(key);
    }

    /**
     * The binary value of {@code key}, or {@code null}.
     *
     * @throws IllegalArgumentException if the key does not end in {@value #BINARY_SUFFIX} or its
     *     value is not base64
     */
    public @Nullable byte[] getBinary(String key) {
        if (!key.endsWith(BINARY_SUFFIX)) {
            throw new IllegalArgumentException("binary metadata key '" + key + "' must end in " + BINARY_SUFFIX);
        }
        String value = get(key);
        return value == null ? null : Base64.getDecoder().decode(value);
    }

    /** Whether there is no entry. */
    public synchronized boolean isEmpty() {
        return entries == null || entries.isEmpty();
    }

    /** The entries as they travel (binary values base64): an unmodifiable snapshot. */
    public synchronized Map<String, String> asMap() {
        return entries == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(entries));
    }

    /** Calls {@code action} for each entry of a snapshot, in insertion order. */
    public void forEach(BiConsumer<String, String> action) {
        asMap().forEach(action);
    }

    private static void checkKey(String key) {
        Objects.requireNonNull(key, "metadata key must not be null");
        if (key.isEmpty() || key.length() > 255) {
            throw new IllegalArgumentException("metadata key must be 1 to 255 characters, was '" + key + "'");
        }
        if (RpcMetadata.isReserved(key)) {
            throw new IllegalArgumentException("metadata key '" + key + "' is reserved (prefix homa-)");
        }
    }

    @Override
    public String toString() {
        return "HomaMetadata" + asMap();
    }
}
