package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

/**
 * The codecs a peer speaks, by name. A client encodes with one of them (named in each request
 * envelope); a server decodes each request with the codec it names and answers in the same codec,
 * so clients with different codecs can call one server. Immutable.
 *
 * <p>JSON needs only jackson-databind. Smile and CBOR each need a Jackson dataformat that is an
 * optional dependency of this module ({@value #SMILE_DEPENDENCY}, {@value #CBOR_DEPENDENCY}): an
 * application adds the one it wants, and {@link #defaults} includes a codec only when its
 * dataformat is on the classpath ({@link #isAvailable}).
 */
public final class PayloadCodecs {
    /** The dependency (Maven groupId:artifactId) that {@link SmilePayloadCodec} needs: Jackson's Smile dataformat. */
    public static final String SMILE_DEPENDENCY = "tools.jackson.dataformat:jackson-dataformat-smile";

    /** The dependency (Maven groupId:artifactId) that {@link CborPayloadCodec} needs: Jackson's CBOR dataformat. */
    public static final String CBOR_DEPENDENCY = "tools.jackson.dataformat:jackson-dataformat-cbor";

    /** Per optional built-in codec: the class that shows its dataformat is present, and the dependency to add. */
    private static final Map<String, String[]> DATAFORMATS = Map.of(
            SmilePayloadCodec.NAME, new String[] {"tools.jackson.dataformat.smile.SmileMapper", SMILE_DEPENDENCY},
            CborPayloadCodec.NAME, new String[] {"tools.jackson.dataformat.cbor.CBORMapper", CBOR_DEPENDENCY});

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

    /**
     * json (over {@code jsonMapper}), then smile and cbor (over default mappers), each only when
     * {@code classLoader} can load its Jackson dataformat ({@link #isAvailable}).
     *
     * @param classLoader where to look for the dataformats; {@code null} means this class's loader
     */
    public static PayloadCodecs defaults(JsonMapper jsonMapper, @Nullable ClassLoader classLoader) {
        Objects.requireNonNull(jsonMapper, "jsonMapper must not be null");
        Map<String, PayloadCodec> byName = new LinkedHashMap<>();
        byName.put(JsonPayloadCodec.NAME, new JsonPayloadCodec(jsonMapper));
        // SmilePayloadCodec and CborPayloadCodec link against their dataformat: create them only when it is there.
        if (isAvailable(SmilePayloadCodec.NAME, classLoader)) {
            byName.put(SmilePayloadCodec.NAME, new SmilePayloadCodec());
        }
        if (isAvailable(CborPayloadCodec.NAME, classLoader)) {
            byName.put(CborPayloadCodec.NAME, new CborPayloadCodec());
        }
        return new PayloadCodecs(byName);
    }

    /** json (over {@code jsonMapper}), smile and cbor (over default mappers) when their dataformats are on the classpath. */
    public static PayloadCodecs defaults(JsonMapper jsonMapper) {
        return defaults(jsonMapper, null);
    }

    /** json, smile and cbor over default mappers, smile and cbor when their dataformats are on the classpath. */
    public static PayloadCodecs defaults() {
        return defaults(JsonMapper.builder().build());
    }

    /**
     * Whether the built-in codec {@code name} can be created with the classes {@code classLoader}
     * sees: json always; smile and cbor when their Jackson dataformat ({@link #requiredDependency})
     * is there; {@code false} for a name of no built-in codec.
     *
     * @param classLoader where to look; {@code null} means this class's loader
     */
    public static boolean isAvailable(String name, @Nullable ClassLoader classLoader) {
        Objects.requireNonNull(name, "name must not be null");
        if (JsonPayloadCodec.NAME.equals(name)) {
            return true;
        }
        String[] dataformat = DATAFORMATS.get(name);
        if (dataformat == null) {
            return false;
        }
        try {
            Class.forName(dataformat[0], false, classLoader != null ? classLoader : PayloadCodecs.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /**
     * The dependency (Maven groupId:artifactId) that the built-in codec {@code name} needs besides
     * jackson-databind: {@value #SMILE_DEPENDENCY} for smile, {@value #CBOR_DEPENDENCY} for cbor;
     * empty for json and for a name of no built-in codec.
     */
    public static Optional<String> requiredDependency(String name) {
        Objects.requireNonNull(name, "name must not be null");
        String[] dataformat = DATAFORMATS.get(name);
        return dataformat == null ? Optional.empty() : Optional.of(dataformat[1]);
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
