package io.homa.demo.kv;

/**
 * {@link KvService#get} was asked for a key it does not hold. {@link KvExceptionAdvice} maps it
 * to status {@code NOT_FOUND}, so a caller gets a
 * {@link io.homa.reactive.HomaRemoteException} with that status, this message and this class's
 * name as {@code remoteType()}.
 */
public class KeyNotFoundException extends RuntimeException {
    private final String key;

    /** @param key the key that was not found */
    public KeyNotFoundException(String key) {
        super("no value for key '" + key + "'");
        this.key = key;
    }

    /** The key that was not found. */
    public String key() {
        return key;
    }
}
