package io.homa.reactive.rpc;

import java.lang.reflect.Type;

/** Turns call arguments and results into bytes and back (JSON by default). */
public interface PayloadCodec {
    /** The codec's name as carried in the request envelope, e.g. {@code "json"}. */
    String name();

    /**
     * Encodes a value.
     *
     * @throws io.homa.reactive.HomaException with status INTERNAL if the value cannot be encoded
     */
    byte[] encode(Object value);

    /**
     * Decodes a value.
     *
     * @param bytes the encoded value
     * @param type the target type (a {@code Class} or a generic type)
     * @throws io.homa.reactive.HomaException with status INVALID_ARGUMENT if the bytes do not decode
     */
    Object decode(byte[] bytes, Type type);
}
