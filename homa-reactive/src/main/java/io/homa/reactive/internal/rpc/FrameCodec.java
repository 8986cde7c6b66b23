package io.homa.reactive.internal.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.PayloadCodec;
import java.lang.reflect.Type;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Frames a list of byte arrays in one payload, {@code u32 count | count x (u32 length | bytes)},
 * big-endian: a stream batch's items, or the arguments of a codec without arrays.
 *
 * <p>Internal: not part of the API.
 */
public final class FrameCodec {
    private FrameCodec() {}

    /**
     * Frames a list of byte arrays (stream items, or the arguments of a codec without arrays):
     * {@code u32 count | count x (u32 length | bytes)}.
     */
    public static byte[] encodeFrames(List<byte[]> frames) {
        Objects.requireNonNull(frames, "frames must not be null");
        long total = 4;
        for (byte[] frame : frames) {
            total += 4 + frame.length;
        }
        if (total > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("frames must total less than 2 GiB, was " + total + " bytes");
        }
        ByteBuffer out = ByteBuffer.allocate((int) total);
        out.putInt(frames.size());
        for (byte[] frame : frames) {
            out.putInt(frame.length).put(frame);
        }
        return out.array();
    }

    /**
     * Decodes stream items, one per frame, as {@code type}.
     *
     * @param status the status of the failure when an item does not decode or decodes as
     *     {@code null} (INTERNAL for results, INVALID_ARGUMENT for what a client sent)
     * @param what the stream, for messages, e.g. {@code "kv.scan"}
     * @throws HomaException with {@code status}, naming {@code what}
     */
    public static List<Object> decodeItems(List<byte[]> frames, PayloadCodec codec, Type type,
                                    HomaStatus status, String what) {
        List<Object> items = new ArrayList<>(frames.size());
        for (byte[] frame : frames) {
            Object item;
            try {
                item = codec.decode(frame, type);
            } catch (HomaException e) {
                throw new HomaException(status, "cannot decode an item of " + what + ": " + e.getMessage(), e);
            }
            if (item == null) {
                throw new HomaException(status, "an item of " + what + " decoded as null");
            }
            items.add(item);
        }
        return items;
    }

    /**
     * Reads frames written by {@link #encodeFrames}.
     *
     * @throws HomaException with status INVALID_ARGUMENT if the bytes are not exactly such frames
     */
    public static List<byte[]> decodeFrames(byte[] bytes) {
        WireReader in = new WireReader(bytes, 0, bytes.length, "frames");
        long count = in.u32();
        if (count > bytes.length / 4) {
            throw in.malformed("count " + count + " exceeds what " + bytes.length + " bytes can hold");
        }
        List<byte[]> frames = new ArrayList<>((int) count);
        for (long i = 0; i < count; i++) {
            long length = in.u32();
            frames.add(in.bytes(length, "frame " + i));
        }
        if (in.remaining() != 0) {
            throw in.malformed(in.remaining() + " bytes follow the last frame");
        }
        return frames;
    }
}
