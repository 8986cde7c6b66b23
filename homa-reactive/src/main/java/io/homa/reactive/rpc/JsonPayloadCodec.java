package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import java.lang.reflect.Type;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * The default {@link PayloadCodec}: JSON through a Jackson 3 {@link ObjectMapper}. A {@code null}
 * value encodes as the JSON literal {@code null}, which decodes back to {@code null}.
 */
public final class JsonPayloadCodec implements PayloadCodec {
    /** The name carried in request envelopes. */
    public static final String NAME = "json";

    private final ObjectMapper mapper;

    /** A codec over a default {@code JsonMapper.builder().build()}. */
    public JsonPayloadCodec() {
        this(JsonMapper.builder().build());
    }

    /** A codec over {@code mapper} (e.g. the application's configured one). */
    public JsonPayloadCodec(ObjectMapper mapper) {
        this.mapper = Objects.requireNonNull(mapper, "mapper must not be null");
    }

    @Override
    public String name() {
        return NAME;
    }

    /** The mapper this codec uses. */
    public ObjectMapper mapper() {
        return mapper;
    }

    @Override
    public byte[] encode(@Nullable Object value) {
        try {
            return mapper.writeValueAsBytes(value);
        } catch (JacksonException e) {
            throw new HomaException(HomaStatus.INTERNAL,
                    "cannot encode " + (value == null ? "null" : value.getClass().getName()) + " as JSON: " + e.getOriginalMessage(), e);
        }
    }

    @Override
    public @Nullable Object decode(byte[] bytes, Type type) {
        Objects.requireNonNull(bytes, "bytes must not be null");
        Objects.requireNonNull(type, "type must not be null");
        try {
            return mapper.readValue(bytes, mapper.getTypeFactory().constructType(type));
        } catch (JacksonException e) {
            throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                    "cannot decode JSON as " + type.getTypeName() + ": " + e.getOriginalMessage(), e);
        }
    }
}
