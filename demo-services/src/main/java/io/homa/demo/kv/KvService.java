package io.homa.demo.kv;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.spring.HomaMethod;
import io.homa.spring.HomaService;
import java.util.Map;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import reactor.core.publisher.Flux;

/**
 * An in-memory key-value store exported as service {@value #SERVICE}: one shard of the demo's
 * sharded store (see {@link KvShards}). Keys are kept in {@link String#compareTo} order, so
 * {@link #scan} returns them sorted. Every demo endpoint exports one; the aggregator's shards are
 * the endpoints that {@link KvShards} names {@code kv-0}, {@code kv-1}, ...
 *
 * <p>Errors: a bad argument is a {@link HomaException} with status {@code INVALID_ARGUMENT}
 * (the status travels as is); a missing key is a {@link KeyNotFoundException}, which
 * {@link KvExceptionAdvice} maps to {@code NOT_FOUND}.
 */
@HomaService(KvService.SERVICE)
public class KvService {
    /** The service name. */
    public static final String SERVICE = "kv";
    /** Longest key, in characters. */
    public static final int MAX_KEY_LENGTH = 256;
    /** Longest value, in characters. */
    public static final int MAX_VALUE_LENGTH = 65_536;
    /** Most records one {@link #scan} returns. */
    public static final int MAX_SCAN_LIMIT = 10_000;

    private final ConcurrentNavigableMap<String, String> store = new ConcurrentSkipListMap<>();

    /**
     * The value of {@code key}.
     *
     * @throws KeyNotFoundException (NOT_FOUND at the caller) if the key has no value
     * @throws HomaException INVALID_ARGUMENT if the key is empty or longer than {@value #MAX_KEY_LENGTH}
     */
    @HomaMethod(idempotent = true)
    public String get(String key) {
        checkKey("key", key);
        String value = store.get(key);
        if (value == null) {
            throw new KeyNotFoundException(key);
        }
        return value;
    }

    /**
     * Sets the value of {@code key}, replacing any previous one. Idempotent: putting the same
     * value twice leaves the same state as once.
     *
     * @throws HomaException INVALID_ARGUMENT if the key is empty or too long, or the value is
     *     missing or longer than {@value #MAX_VALUE_LENGTH} characters
     */
    @HomaMethod(idempotent = true)
    public void put(String key, String value) {
        checkKey("key", key);
        if (value == null || value.length() > MAX_VALUE_LENGTH) {
            throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                    "value must be present and at most " + MAX_VALUE_LENGTH + " characters");
        }
        store.put(key, value);
    }

    /**
     * The records whose key is at or after {@code fromKey}, in key order, at most {@code limit}
     * of them, streamed: the store is read as the caller asks for more, so a slow caller slows
     * the scan down and a cancelled one stops it.
     *
     * @param fromKey first key of the range (inclusive); {@code ""} starts at the beginning
     * @param limit most records returned, 1..{@value #MAX_SCAN_LIMIT}
     * @throws HomaException INVALID_ARGUMENT (signalled by the {@code Flux}) if the arguments are
     *     out of range
     */
    @HomaMethod(idempotent = true)
    public Flux<KvRecord> scan(String fromKey, int limit) {
        if (fromKey == null || fromKey.length() > MAX_KEY_LENGTH) {
            return Flux.error(new HomaException(HomaStatus.INVALID_ARGUMENT,
                    "fromKey must be present and at most " + MAX_KEY_LENGTH + " characters"));
        }
        if (limit < 1 || limit > MAX_SCAN_LIMIT) {
            return Flux.error(new HomaException(HomaStatus.INVALID_ARGUMENT,
                    "limit must be between 1 and " + MAX_SCAN_LIMIT + ", was " + limit));
        }
        return Flux.fromIterable(store.tailMap(fromKey, true).entrySet())
                .take(limit, true)
                .map(entry -> new KvRecord(entry.getKey(), entry.getValue()));
    }

    /**
     * How many keys start with {@code prefix} and how long their values are together.
     *
     * @param prefix key prefix; {@code ""} counts every key
     * @throws HomaException INVALID_ARGUMENT if the prefix is missing or too long
     */
    @HomaMethod(idempotent = true)
    public KvStats stats(String prefix) {
        if (prefix == null || prefix.length() > MAX_KEY_LENGTH) {
            throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                    "prefix must be present and at most " + MAX_KEY_LENGTH + " characters");
        }
        long keys = 0;
        long valueChars = 0;
        for (Map.Entry<String, String> entry : store.tailMap(prefix, true).entrySet()) {
            if (!entry.getKey().startsWith(prefix)) {
                break;
            }
            keys++;
            valueChars += entry.getValue().length();
        }
        return new KvStats(keys, valueChars);
    }

    /**
     * Checks a key argument.
     *
     * @param name the argument name, for the message
     * @throws HomaException INVALID_ARGUMENT if the key is missing, empty or longer than {@value #MAX_KEY_LENGTH}
     */
    public static void checkKey(String name, String key) {
        if (key == null || key.isEmpty() || key.length() > MAX_KEY_LENGTH) {
            throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                    name + " must be 1.." + MAX_KEY_LENGTH + " characters, was "
                            + (key == null ? "missing" : key.length() + " characters"));
        }
    }
}
