package io.homa.demo.kv;

/**
 * One key and its value, as {@link KvService#scan} streams them.
 *
 * @param key the key, 1..{@value KvService#MAX_KEY_LENGTH} characters
 * @param value the value, at most {@value KvService#MAX_VALUE_LENGTH} characters
 */
public record KvRecord(String key, String value) {}
