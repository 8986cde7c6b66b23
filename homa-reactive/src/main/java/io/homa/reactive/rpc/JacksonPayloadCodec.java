package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.lang.reflect.Type;
import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.ObjectMapper;

/**
 * A {@link PayloadCodec} over a Jackson 3 {@link ObjectMapper} of any format (JSON, Smile, CBOR).
 * A {@code null} value encodes as the format's null, which decodes back to {@code null}. Two or
 * more arguments are one array of the format; each element decodes as its parameter's type.
 *
 * <p>Raw bytes: a {@code byte[]} value (a single argument or a result) is carried as itself after
 * one tag byte 0xFF, which starts no JSON, Smile or CBOR value, instead of
 * as a base64 string: no parsing and a third fewer bytes, so a megabyte costs a copy, not
 * milliseconds of the event loop. It decodes back where the declared type is {@code byte[]}
 * (declare {@code byte[]} on both sides); a base64 string of the format still decodes there too.
 */
public abstract class JacksonPayloadCodec implements PayloadCodec {
    /** The byte before a raw {@code byte[]} value (0xFF: never the first byte of a JSON, Smile or CBOR value). */
    static final byte RAW_BYTES_TAG = (byte) 0xFF;
    /** The tag alone, the first part of a raw value ({@link #encodeParts}); never written to. */
    private static final byte[] RAW_BYTES_TAG_PART = {RAW_BYTES_TAG};

    private final String name;
    private final String formatName;
    private final ObjectMapper mapper;

    /**
     * @param name the codec name in envelopes
     * @param formatName the format's name in error messages, e.g. {@code "JSON"}
     * @param mapper the mapper for that format
     */
    protected JacksonPayloadCodec(String name, String formatName, ObjectMapper mapper) {
        this.name = Objects.requireNonNull(name, "name must not be null");
        this.formatName = Objects.requireNonNull(formatName, "formatName must not be null");
        this.mapper = Objects.requireNonNull(mapper, "mapper must not be null");
    }

    @Override
    public final String name() {
        return name;
    }

    /** The mapper this codec uses. */
    public ObjectMapper mapper() {
        return mapper;
    }

    @Override
    public byte[] encode(@Nullable Object value) {
        if (value instanceof byte[] raw) {
            byte[] tagged = new byte[raw.length + 1];
            tagged[0] = RAW_BYTES_TAG;
            System.arraycopy(raw, 0, tagged, 1, raw.length);
            return tagged;
        }
        try {
            return mapper.writeValueAsBytes(value);
        } catch (JacksonException e) {
            throw new HomaException(HomaStatus.INTERNAL, "cannot encode "
                    + (value == null ? "null" : value.getClass().getName()) + " as " + formatName + ": "
                    + e.getOriginalMessage(), e);
        }
    }

    /** A raw {@code byte[]} is its tag and the array itself, not a copy behind the tag. */
    @Override
    public byte[][] encodeParts(@Nullable Object value) {
        if (value instanceof byte[] raw) {
            return new byte[][] {RAW_BYTES_TAG_PART, raw};
        }
        return new byte[][] {encode(value)};
    }

    @Override
    public byte[][] encodeArgumentParts(@Nullable Object @Nullable [] arguments) {
        if (arguments != null && arguments.length == 1) {
            return encodeParts(arguments[0]);
        }
        return new byte[][] {encodeArguments(arguments)};
    }

    /** A raw {@code byte[]} is copied out of the payload once, from however many chunks it spans. */
    @Override
    public @Nullable Object decode(ByteBuf payload, Type type) {
        if (type == byte[].class && payload.isReadable() && payload.getByte(payload.readerIndex()) == RAW_BYTES_TAG) {
            return ByteBufUtil.getBytes(payload, payload.readerIndex() + 1, payload.readableBytes() - 1);
        }
        return PayloadCodec.super.decode(payload, type);
    }

    @Override
    public @Nullable Object decode(byte[] bytes, Type type) {
        Objects.requireNonNull(bytes, "bytes must not be null");
        return decode(bytes, 0, bytes.length, type);
    }

    @Override
    public @Nullable Object decode(byte[] bytes, int offset, int length, Type type) {
        Objects.requireNonNull(bytes, "bytes must not be null");
        Objects.requireNonNull(type, "type must not be null");
        Objects.checkFromIndexSize(offset, length, bytes.length);
        if (type == byte[].class && length > 0 && bytes[offset] == RAW_BYTES_TAG) {
            return Arrays.copyOfRange(bytes, offset + 1, offset + length);
        }
        try {
            return mapper.readValue(bytes, offset, length, mapper.getTypeFactory().constructType(type));
        } catch (JacksonException e) {
            throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                    "cannot decode " + formatName + " as " + type.getTypeName() + ": " + e.getOriginalMessage(), e);
        }
    }

    @Override
    public byte[] encodeArguments(@Nullable Object @Nullable [] arguments) {
        if (arguments == null || arguments.length < 2) {
            return PayloadCodec.super.encodeArguments(arguments);
        }
        return encode(arguments);
    }

    @Override
    public @Nullable Object[] decodeArguments(byte[] bytes, int offset, int length, Type[] types) {
        Objects.requireNonNull(bytes, "bytes must not be null");
        Objects.requireNonNull(types, "types must not be null");
        if (types.length < 2) {
            return PayloadCodec.super.decodeArguments(bytes, offset, length, types);
        }
        Objects.checkFromIndexSize(offset, length, bytes.length);
        Object[] values = new Object[types.length];
        try (JsonParser parser = mapper.createParser(bytes, offset, length)) {
            if (parser.nextToken() != JsonToken.START_ARRAY) {
                throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                        "expected a " + formatName + " array of " + types.length + " arguments");
            }
            for (int i = 0; i < types.length; i++) {
                JsonToken token = parser.nextToken();
                if (token == JsonToken.END_ARRAY || token == null) {
                    throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                            "expected " + types.length + " arguments, got " + i);
                }
                values[i] = mapper.readerFor(mapper.getTypeFactory().constructType(types[i]))
                        .without(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                        .readValue(parser);
            }
            if (parser.nextToken() != JsonToken.END_ARRAY) {
                throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                        "expected " + types.length + " arguments, got more");
            }
        } catch (JacksonException e) {
            throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                    "cannot decode " + formatName + " arguments: " + e.getOriginalMessage(), e);
        }
        return values;
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + name + "]";
    }
}
