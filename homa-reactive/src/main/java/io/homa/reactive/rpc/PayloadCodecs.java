package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import tools.jackson.databind.json.JsonMapper;

/**
 * The codecs a peer speaks, by name. A client encodes with one of them (named in each request
 * envelope); a server decodes each request with the codec it names and answers in the same codec,
 * so clients with different codecs can call one server. Immutable.
 */
public final class PayloadCodecs {
    private final Map<String, PayloadCodec> byName;

    private PayloadCodecs(Map<String, PayloadCodec> byName) {
        this.byName = Collections.unmodifiableMap(byName);
    }

    /**
     * A registry of {@code codecs}, in that order.
     *
     * @throws IllegalArgumentException if there are none or two share a name
     */
    public static PayloadCodecs of(PayloadCodec... codecs) {
        Objects.requireNonNull(codecs, "codecs must not be null");
        if (codecs.length == 0) {
            throw new IllegalArgumentException("codecs must name at least one codec");
        }
        Map<String, PayloadCodec> byName = new LinkedHashMap<>();
        for (PayloadCodec codec : codecs) {
            Objects.requireNonNull(codec, "codecs must not contain null");
            if (byName.putIfAbsent(codec.name(), codec) != null) {
                throw new IllegalArgumentException("two codecs are named '" + codec.name() + "'");
            }
        }
        return new PayloadCodecs(byName);
    }

    /** json (over {@code jsonMapper}), smile and cbor (over default mappers). */
    public static PayloadCodecs defaults(JsonMapper jsonMapper) {
        return of(new JsonPayloadCodec(jsonMapper), new SmilePayloadCodec(), new CborPayloadCodec());
    }

    /** json, smile and cbor over default mappers. */
    public static PayloadCodecs defaults() {
        return defaults(JsonMapper.builder().build());
    }

    /**
     * The codec named {@code name}.
     *
     * @throws HomaException with status INVALID_ARGUMENT naming the supported codecs if there is none
     */
    public PayloadCodec get(String name) {
        PayloadCodec codec = byName.get(name);
        if (codec == null) {
            throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                    "codec '" + name + "' is not supported; supported: " + String.join(", ", byName.keySet()));
        }
        return codec;
    }

    /** Whether a codec is named {@code name}. */
    public boolean contains(String name) {
        return byName.containsKey(name);
    }

    /** The codec names, in registration order. */
    public Set<String> names() {
        return byName.keySet();
    }

    @Override
    public String toString() {
        return "PayloadCodecs" + byName.keySet();
    }
}
