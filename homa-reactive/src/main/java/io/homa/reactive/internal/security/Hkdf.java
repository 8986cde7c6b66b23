package io.homa.reactive.internal.security;

import java.security.GeneralSecurityException;
import java.security.InvalidKeyException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * HKDF with HMAC-SHA256 (RFC 5869), on the JDK's {@link Mac} (JDK 17 has no HKDF class). Used by
 * {@link PacketSealer} to derive each sender's AES-256-GCM subkey from a pre-shared key. Not
 * thread-safe: one instance per event loop.
 */
final class Hkdf {
    private static final String HMAC = "HmacSHA256";
    /** HMAC-SHA256 output, bytes. */
    static final int HASH_BYTES = 32;

    private final Mac mac;

    Hkdf() {
        try {
            this.mac = Mac.getInstance(HMAC);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK lacks " + HMAC, e);
        }
    }

    /** RFC 5869 2.2: PRK = HMAC-Hash(salt, IKM); an empty salt is {@value #HASH_BYTES} zero bytes. */
    byte[] extract(byte[] salt, byte[] ikm) {
        init(salt.length == 0 ? new byte[HASH_BYTES] : salt);
        return mac.doFinal(ikm);
    }

    /** RFC 5869 2.3: T(1) | T(2) | ... truncated to {@code length} bytes, at most 255 x 32. */
    byte[] expand(byte[] prk, byte[] info, int length) {
        if (length < 0 || length > 255 * HASH_BYTES) {
            throw new IllegalArgumentException("HKDF length must be between 0 and " + 255 * HASH_BYTES + ", was " + length);
        }
        init(prk);
        byte[] out = new byte[length];
        byte[] previous = new byte[0];
        int done = 0;
        for (int i = 1; done < length; i++) {
            mac.update(previous);
            mac.update(info);
            mac.update((byte) i);
            previous = mac.doFinal();
            int n = Math.min(previous.length, length - done);
            System.arraycopy(previous, 0, out, done, n);
            done += n;
        }
        return out;
    }

    /** Extract then expand. */
    byte[] derive(byte[] salt, byte[] ikm, byte[] info, int length) {
        return expand(extract(salt, ikm), info, length);
    }

    private void init(byte[] key) {
        try {
            mac.init(new SecretKeySpec(key, HMAC));
        } catch (InvalidKeyException e) {
            throw new IllegalStateException(e);
        }
    }
}
