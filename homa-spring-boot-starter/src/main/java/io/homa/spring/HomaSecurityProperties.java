package io.homa.spring;

import io.homa.reactive.HomaSecurityConfig;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Packet authentication, {@code homa.security.*}: every datagram sealed with
 * AES-256-GCM under a pre-shared key. See {@link HomaSecurityConfig} for the wire format and
 * the key rotation steps.
 */
public class HomaSecurityProperties {

    /**
     * Packet authentication: off (plain Homa packets, as the draft has them), authenticate
     * (a 41-byte trailer with an AES-256-GCM tag over each packet and its addresses; a peer
     * without the key cannot talk to this endpoint, its packets are dropped and counted), or
     * encrypt (as authenticate, and the packet's header and payload are encrypted).
     */
    private String mode = "off";

    /**
     * Pre-shared keys: key id (0-255) to the base64 of a 32-byte key (e.g. from "openssl rand
     * -base64 32"). Every key listed is accepted; homa.security.active-key sends. Rotate by
     * adding the new key everywhere, then switching the active key, then removing the old one.
     */
    private Map<String, String> keys = new LinkedHashMap<>();

    /** Id of the key that seals the packets this endpoint sends; required unless the mode is off. */
    private @Nullable Integer activeKey;

    public String getMode() {
        return this.mode;
    }

    public void setMode(String mode) {
        this.mode = mode;
    }

    public Map<String, String> getKeys() {
        return this.keys;
    }

    public void setKeys(Map<String, String> keys) {
        this.keys = keys;
    }

    public @Nullable Integer getActiveKey() {
        return this.activeKey;
    }

    public void setActiveKey(@Nullable Integer activeKey) {
        this.activeKey = activeKey;
    }
}
