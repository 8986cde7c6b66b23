package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.internal.rpc.FrameCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Turns call arguments and results into bytes and back. Implementations: {@link JsonPayloadCodec}
 * ({@code "json"}, the default), {@link SmilePayloadCodec} ({@code "smile"}),
 * {@link CborPayloadCodec} ({@code "cbor"}); {@link PayloadCodecs} holds the ones a peer speaks.
 *
 * <p>Arguments ({@link #encodeArguments}): zero arguments are an empty payload; one argument is
 * the encoded value itself (so a one-argument call looks the same as a result); two or more are
 * one encoded array. The defaults here frame two or more arguments as a count and length-prefixed
 * values ({@code u32 count | count x (u32 length | bytes)}, big-endian); the Jackson codecs
 * override them with a real array (a JSON array, a Smile or CBOR array), so any peer of that
 * format can read it.
 */
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

    /**
     * Decodes a value from {@code bytes[offset, offset + length)}, e.g. the payload inside a
     * received message, so that a long payload is not copied out first. The default copies the
     * range (unless it is the whole array) and calls {@link #decode(byte[], Type)}; the Jackson
     * codecs read the range in place. The array is the received message's memory, reused for
     * later messages once the call is decoded: the value must not keep a reference to it (copy
     * what it holds, as the default does).
     *
     * @throws IndexOutOfBoundsException if the range is not inside {@code bytes}
     * @throws io.homa.reactive.HomaException with status INVALID_ARGUMENT if the bytes do not decode
     */
    default @Nullable Object decode(byte[] bytes, int offset, int length, Type type) {
        return decode(range(bytes, offset, length), type);
    }

    /**
     * Decodes a value from the readable bytes of {@code payload}, leaving its indices unchanged
     * (it is not released): a long received payload arrives as the transport's 16 KiB chunks, a
     * composite buffer without one array. The default decodes from the buffer's array where the
     * bytes are part of one ({@link #decode(byte[], int, int, Type)}) and from a copy otherwise
     * (a whole array too, which {@link #decode(byte[], Type)} might return as the value); the Jackson
     * codecs copy a raw {@code byte[]} straight out of the chunks, once.
     *
     * @throws io.homa.reactive.HomaException with status INVALID_ARGUMENT if the bytes do not decode
     */
    default @Nullable Object decode(ByteBuf payload, Type type) {
        if (partOfArray(payload)) {
            return decode(payload.array(), payload.arrayOffset() + payload.readerIndex(), payload.readableBytes(), type);
        }
        return decode(ByteBufUtil.getBytes(payload), type);
    }

    /**
     * Encodes a value as parts, its bytes in order across several arrays, so that bytes the value
     * already holds need not be copied behind a codec's framing: the RPC layer sends the parts as
     * they are. The default is the one array of {@link #encode}; the Jackson codecs return a raw
     * {@code byte[]} value as its one-byte tag and the array itself (which must then not change
     * until the call ends).
     *
     * @throws io.homa.reactive.HomaException with status INTERNAL if the value cannot be encoded
     */
    default byte[][] encodeParts(@Nullable Object value) {
        return new byte[][] {encode(value)};
    }

    /**
     * Encodes a call's arguments: none → empty payload, one → {@link #encode} of it, two or more →
     * one array.
     *
     * @param arguments the arguments; {@code null} means none
     * @throws HomaException with status INTERNAL if an argument cannot be encoded
     */
    default byte[] encodeArguments(@Nullable Object @Nullable [] arguments) {
        if (arguments == null || arguments.length == 0) {
            return new byte[0];
        }
        if (arguments.length == 1) {
            return encode(arguments[0]);
        }
        List<byte[]> frames = new ArrayList<>(arguments.length);
        for (Object argument : arguments) {
            frames.add(encode(argument));
        }
        return FrameCodec.encodeFrames(frames);
    }

    /**
     * {@link #encodeArguments} as parts ({@link #encodeParts}): the default is its one array; the
     * Jackson codecs give one argument's parts.
     *
     * @throws io.homa.reactive.HomaException with status INTERNAL if an argument cannot be encoded
     */
    default byte[][] encodeArgumentParts(@Nullable Object @Nullable [] arguments) {
        return new byte[][] {encodeArguments(arguments)};
    }

    /**
     * Decodes arguments encoded by {@link #encodeArguments}. With no types the payload is ignored;
     * with one type an empty payload is a {@code null} argument.
     *
     * @param bytes the payload
     * @param types the parameter types, in order
     * @return one value per type (elements may be {@code null})
     * @throws HomaException with status INVALID_ARGUMENT if the payload does not decode into
     *     {@code types.length} values of those types
     */
    default @Nullable Object[] decodeArguments(byte[] bytes, Type[] types) {
        return decodeArguments(bytes, 0, bytes.length, types);
    }

    /**
     * Decodes arguments from {@code bytes[offset, offset + length)}; see
     * {@link #decodeArguments(byte[], Type[])}.
     *
     * @throws IndexOutOfBoundsException if the range is not inside {@code bytes}
     * @throws HomaException with status INVALID_ARGUMENT if the payload does not decode into
     *     {@code types.length} values of those types
     */
    default @Nullable Object[] decodeArguments(byte[] bytes, int offset, int length, Type[] types) {
        Objects.checkFromIndexSize(offset, length, bytes.length);
        if (types.length == 0) {
            return new Object[0];
        }
        if (types.length == 1) {
            return new Object[] {length == 0 ? null : decode(bytes, offset, length, types[0])};
        }
        List<byte[]> frames = FrameCodec.decodeFrames(range(bytes, offset, length));
        if (frames.size() != types.length) {
            throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                    "expected " + types.length + " arguments, got " + frames.size());
        }
        Object[] values = new Object[types.length];
        for (int i = 0; i < types.length; i++) {
            values[i] = decode(frames.get(i), types[i]);
        }
        return values;
    }

    /**
     * Decodes arguments from the readable bytes of {@code payload}, leaving its indices unchanged
     * (it is not released); see {@link #decodeArguments(byte[], Type[])}. From the buffer's array
     * where it has one; otherwise one argument is {@link #decode(ByteBuf, Type)} of the buffer
     * (a long payload is not joined first), and more are decoded from a copy.
     *
     * @throws HomaException with status INVALID_ARGUMENT if the payload does not decode into
     *     {@code types.length} values of those types
     */
    default @Nullable Object[] decodeArguments(ByteBuf payload, Type[] types) {
        if (partOfArray(payload)) {
            return decodeArguments(payload.array(), payload.arrayOffset() + payload.readerIndex(),
                    payload.readableBytes(), types);
        }
        if (types.length == 1 && payload.isReadable()) {
            return new Object[] {decode(payload, types[0])};
        }
        return decodeArguments(ByteBufUtil.getBytes(payload), types);
    }

    /**
     * Whether {@code payload}'s readable bytes lie in its array but are not all of it. Bytes that are
     * a whole array are decoded from a copy: {@link #decode(byte[], Type)} may return its argument
     * (a raw {@code byte[]}), and a received message's arrays are reused once it is released.
     */
    private static boolean partOfArray(ByteBuf payload) {
        return payload.hasArray()
                && (payload.arrayOffset() + payload.readerIndex() > 0 || payload.readableBytes() < payload.array().length);
    }

    /** {@code bytes[offset, offset + length)}: the array itself when that is all of it, else a copy. */
    private static byte[] range(byte[] bytes, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, bytes.length);
        return offset == 0 && length == bytes.length ? bytes : java.util.Arrays.copyOfRange(bytes, offset, offset + length);
    }
}
