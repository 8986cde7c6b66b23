package io.homa.reactive;

import io.homa.engine.InvalidSettingException;
import io.homa.reactive.internal.security.PacketSealer;
import java.util.Arrays;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Packet authentication of one {@link HomaTransport}:
 * off, or every datagram sealed with AES-256-GCM under a key shared by the endpoints that talk to
 * each other. Immutable; the keys are copied in and out, and {@link #toString()} never shows them.
 *
 * <p>Keys are pre-shared, 32 bytes each, named by a key id 0..255 that travels in every packet.
 * Every key in {@link #keys()} is accepted on receive; only {@link #activeKeyId()} is used to send.
 * Keys rotate without downtime in three rolling steps: add the new key to every endpoint, then make
 * it the active key everywhere, then remove the old one.
 *
 * <p>What goes on the wire is described in {@link PacketSealer}: a 41-byte trailer after each
 * Homa packet; the engine's MTU is lowered by those 41 bytes so that sealed datagrams still fit
 * the device's MTU.
 *
 * @param mode {@link Mode#OFF} (default), {@link Mode#AUTHENTICATE} or {@link Mode#ENCRYPT}
 * @param keys key id (0..255) to its 32-byte AES-256 key; may be empty only when the mode is off
 * @param activeKeyId the key id used to send, 0..255 and one of {@code keys}; {@link #NO_ACTIVE_KEY}
 *     (-1) is allowed only when the mode is off
 * @throws InvalidSettingException naming {@code security.mode}, {@code security.keys} or
 *     {@code security.active-key} and what it allows
 */
public record HomaSecurityConfig(Mode mode, Map<Integer, byte[]> keys, int activeKeyId) {

    /** Length of every pre-shared key, bytes (AES-256). */
    public static final int KEY_BYTES = 32;
    /** Largest key id (it travels as one byte). */
    public static final int MAX_KEY_ID = 255;
    /** {@link #activeKeyId()} when no key sends (mode off). */
    public static final int NO_ACTIVE_KEY = -1;

    private static final HomaSecurityConfig OFF = new HomaSecurityConfig(Mode.OFF, Map.of(), NO_ACTIVE_KEY);

    public HomaSecurityConfig {
        if (mode == null) {
            throw new InvalidSettingException("security.mode", null, null, null, InvalidSettingException.Unit.NONE,
                    "security.mode must be one of off, authenticate, encrypt, was null");
        }
        Objects.requireNonNull(keys, "security.keys must not be null");
        SortedMap<Integer, byte[]> copy = new TreeMap<>();
        for (Map.Entry<Integer, byte[]> entry : keys.entrySet()) {
            Integer id = entry.getKey();
            if (id == null || id < 0 || id > MAX_KEY_ID) {
                throw new InvalidSettingException("security.keys", id, 0, MAX_KEY_ID, InvalidSettingException.Unit.NONE,
                        "security.keys: key id must be between 0 and " + MAX_KEY_ID + ", was " + id);
            }
            byte[] key = entry.getValue();
            if (key == null || key.length != KEY_BYTES) {
                throw new InvalidSettingException("security.keys", id, null, null, InvalidSettingException.Unit.NONE,
                        "security.keys: key " + id + " must be " + KEY_BYTES + " bytes (AES-256), was "
                                + (key == null ? "null" : key.length + " bytes"));
            }
            copy.put(id, key.clone());
        }
        keys = Collections.unmodifiableSortedMap(copy);
        if (mode != Mode.OFF) {
            if (copy.isEmpty()) {
                throw new InvalidSettingException("security.keys", "", null, null, InvalidSettingException.Unit.NONE,
                        "security.keys must hold at least one " + KEY_BYTES + "-byte key when security.mode is "
                                + mode.propertyValue());
            }
            if (!copy.containsKey(activeKeyId)) {
                throw new InvalidSettingException("security.active-key", activeKeyId, null, null,
                        InvalidSettingException.Unit.NONE,
                        "security.active-key must be the id of one of the keys " + copy.keySet() + " when security.mode is "
                                + mode.propertyValue() + ", was " + (activeKeyId == NO_ACTIVE_KEY ? "unset" : activeKeyId));
            }
        } else if (activeKeyId != NO_ACTIVE_KEY && (activeKeyId < 0 || activeKeyId > MAX_KEY_ID)) {
            throw new InvalidSettingException("security.active-key", activeKeyId, 0, MAX_KEY_ID,
                    InvalidSettingException.Unit.NONE,
                    "security.active-key must be between 0 and " + MAX_KEY_ID + ", was " + activeKeyId);
        }
    }

    /** Authentication off: datagrams are plain Homa packets, as the draft has them. */
    public static HomaSecurityConfig off() {
        return OFF;
    }

    /**
     * Every datagram carries a tag; the Homa packet stays in clear.
     *
     * @param keys key id to 32-byte key
     * @param activeKeyId the id of the key that sends
     */
    public static HomaSecurityConfig authenticate(Map<Integer, byte[]> keys, int activeKeyId) {
        return new HomaSecurityConfig(Mode.AUTHENTICATE, keys, activeKeyId);
    }

    /**
     * Every datagram carries a tag and the Homa packet (header and payload) is encrypted.
     *
     * @param keys key id to 32-byte key
     * @param activeKeyId the id of the key that sends
     */
    public static HomaSecurityConfig encrypt(Map<Integer, byte[]> keys, int activeKeyId) {
        return new HomaSecurityConfig(Mode.ENCRYPT, keys, activeKeyId);
    }

    /** Whether datagrams are sealed (any mode but off). */
    public boolean enabled() {
        return mode != Mode.OFF;
    }

    /** Key id to a copy of its key, in id order. */
    @Override
    public Map<Integer, byte[]> keys() {
        SortedMap<Integer, byte[]> copy = new TreeMap<>();
        keys.forEach((id, key) -> copy.put(id, key.clone()));
        return copy;
    }

    /** The key of {@code id} (a copy), or null if it is not accepted. */
    public byte[] key(int id) {
        byte[] key = keys.get(id);
        return key == null ? null : key.clone();
    }

    /** Bytes each sealed datagram carries on top of its Homa packet: 41 when on, 0 when off. */
    public int overheadBytes() {
        return enabled() ? PacketSealer.TRAILER_BYTES : 0;
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof HomaSecurityConfig that) || mode != that.mode || activeKeyId != that.activeKeyId
                || !keys.keySet().equals(that.keys.keySet())) {
            return false;
        }
        for (Map.Entry<Integer, byte[]> entry : keys.entrySet()) {
            if (!Arrays.equals(entry.getValue(), that.keys.get(entry.getKey()))) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        return Objects.hash(mode, keys.keySet(), activeKeyId);
    }

    /** Mode, key ids and active key id; never the keys. */
    @Override
    public String toString() {
        return "HomaSecurityConfig[mode=" + mode.propertyValue() + ", keyIds=" + keys.keySet() + ", activeKeyId="
                + (activeKeyId == NO_ACTIVE_KEY ? "none" : Integer.toString(activeKeyId)) + "]";
    }

    /** What sealing does to each datagram ({@code homa.security.mode}). */
    public enum Mode {
        /** Plain Homa packets (the default). */
        OFF,
        /** A 41-byte trailer with an AES-GCM tag over the packet and its addresses; the packet stays readable. */
        AUTHENTICATE,
        /** As {@link #AUTHENTICATE}, and the Homa packet (header and payload) is the GCM ciphertext. */
        ENCRYPT;

        /** The property value: {@code off}, {@code authenticate} or {@code encrypt}. */
        public String propertyValue() {
            return name().toLowerCase(Locale.ROOT);
        }
    }
}
