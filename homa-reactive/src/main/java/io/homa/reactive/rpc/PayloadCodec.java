package io.homa.reactive.rpc;

import java.lang.reflect.Type;
import org.jspecify.annotations.Nullable;

/** Turns call arguments and results into bytes and back (JSON by default: {@link JsonPayloadCodec}). */
public interface PayloadCodec {
    /** The codec's name as carried in the request envelope, e.g. {@code "json"}: 1..255 printable ASCII characters. */
    String name();

    /**
     * Encodes a value.
     *
     * @param value the value, possibly {@code null}
     * @throws io.homa.reactive.HomaException with status INTERNAL if the value cannot be encoded
     */
    byte[] encode(@Nullable Object value);

    /**
     * Decodes a value.
     *
     * @param bytes the encoded value
     * @param type the target type (a {@code Class} or a generic type)
     * @return the value, or {@code null} if the bytes encode {@code null}
     * @throws io.homa.reactive.HomaException with status INVALID_ARGUMENT if the bytes do not decode
     */
    @Nullable Object decode(byte[] bytes, Type type);
}
