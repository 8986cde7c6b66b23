package io.homa.reactive.internal.rpc;

import io.homa.engine.MessageBytes;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.PayloadCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.lang.reflect.Type;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

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
     * One item as its codec encoded it, in parts ({@link PayloadCodec#encodeParts}): the arrays
     * are kept, not copied, and must not change afterwards.
     *
     * @param parts the item's bytes, in order
     * @param lengthBytes the sum of the parts' lengths
     */
    public record Item(byte[][] parts, int lengthBytes) {
        /** The item {@code codec} makes of {@code value}, without copying the bytes it holds. */
        public static Item encode(PayloadCodec codec, @Nullable Object value) {
            byte[][] parts = codec.encodeParts(value);
            long lengthBytes = MessageBytes.lengthBytes(parts);
            if (lengthBytes > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException("an item must be less than 2 GiB, was " + lengthBytes + " bytes");
            }
            return new Item(parts, (int) lengthBytes);
        }

        /** What the item takes in a frame: its length field and its bytes. */
        public int frameBytes() {
            return 4 + lengthBytes;
        }
    }

    /**
     * Frames items as {@link #encodeFrames} does, but as parts that keep the items' own arrays:
     * the count, then for each item its length and its parts. The bytes are copied once, where the
     * message is assembled, instead of once here and again there.
     */
    public static byte[][] frameParts(List<Item> items) {
        Objects.requireNonNull(items, "items must not be null");
        int partCount = 1;
        for (Item item : items) {
            partCount += 1 + item.parts().length;
        }
        byte[][] parts = new byte[partCount][];
        int next = 0;
        parts[next++] = u32(items.size());
        for (Item item : items) {
            parts[next++] = u32(item.lengthBytes());
            for (byte[] part : item.parts()) {
                parts[next++] = part;
            }
        }
        return parts;
    }

    private static byte[] u32(int value) {
        return new byte[] {(byte) (value >>> 24), (byte) (value >>> 16), (byte) (value >>> 8), (byte) value};
    }

    /**
     * The frames of {@code bytes}, checked as {@link #decodeFrames} checks them but not copied:
     * how many there are ({@link Frames#size()}) and their items ({@link Frames#decodeItems}).
     *
     * @throws HomaException with status INVALID_ARGUMENT if the bytes are not exactly such frames
     */
    public static Frames frames(byte[] bytes) {
        return frames(Unpooled.wrappedBuffer(bytes));
    }

    /**
     * The frames in the readable bytes of {@code payload} (left unchanged and not released), read
     * where they lie: a received message's chunks are not joined first. The result reads from
     * {@code payload}, which must stay valid while it is used.
     *
     * @throws HomaException with status INVALID_ARGUMENT if the bytes are not exactly such frames
     */
    public static Frames frames(ByteBuf payload) {
        int start = payload.readerIndex();
        int end = payload.writerIndex();
        if (end == start) {
            return new Frames(payload, new int[0], new int[0]);
        }
        if (end - start < 4) {
            throw malformed("header needs 4 bytes but only " + (end - start) + " remain");
        }
        long count = payload.getUnsignedInt(start);
        if (count > (end - start) / 4) {
            throw malformed("count " + count + " exceeds what " + (end - start) + " bytes can hold");
        }
        int[] offsets = new int[(int) count];
        int[] lengths = new int[(int) count];
        int position = start + 4;
        for (int i = 0; i < offsets.length; i++) {
            if (end - position < 4) {
                throw malformed("header needs 4 bytes but only " + (end - position) + " remain");
            }
            long length = payload.getUnsignedInt(position);
            position += 4;
            if (end - position < length) {
                throw malformed("frame " + i + " needs " + length + " bytes but only " + (end - position) + " remain");
            }
            offsets[i] = position;
            lengths[i] = (int) length;
            position += (int) length;
        }
        if (position != end) {
            throw malformed((end - position) + " bytes follow the last frame");
        }
        return new Frames(payload, offsets, lengths);
    }

    private static HomaException malformed(String detail) {
        return new HomaException(HomaStatus.INVALID_ARGUMENT, "malformed frames: " + detail);
    }

    /** Frames read in place: each frame's bytes by their index in the buffer and their length. */
    public static final class Frames {
        private final ByteBuf payload;
        private final int[] offsets;
        private final int[] lengths;

        private Frames(ByteBuf payload, int[] offsets, int[] lengths) {
            this.payload = payload;
            this.offsets = offsets;
            this.lengths = lengths;
        }

        /** The number of frames. */
        public int size() {
            return offsets.length;
        }

        /** A copy of frame {@code index}'s bytes. */
        byte[] frame(int index) {
            return ByteBufUtil.getBytes(payload, offsets[index], lengths[index]);
        }

        /** Whether there are no frames (an empty payload has none). */
        public boolean isEmpty() {
            return offsets.length == 0;
        }

        /**
         * Decodes the items, one per frame, as {@code type}, from where they lie (a codec that
         * decodes ranges or buffers copies each item's bytes once, into the item).
         *
         * @param status the status of the failure when an item does not decode or decodes as
         *     {@code null} (INTERNAL for results, INVALID_ARGUMENT for what a client sent)
         * @param what the stream, for messages, e.g. {@code "kv.scan"}
         * @throws HomaException with {@code status}, naming {@code what}
         */
        public List<Object> decodeItems(PayloadCodec codec, Type type, HomaStatus status, String what) {
            List<Object> items = new ArrayList<>(offsets.length);
            for (int i = 0; i < offsets.length; i++) {
                items.add(decodeItem(codec, type, status, what, payload.slice(offsets[i], lengths[i])));
            }
            return items;
        }
    }

    private static Object decodeItem(PayloadCodec codec, Type type, HomaStatus status, String what, ByteBuf bytes) {
        Object item;
        try {
            item = codec.decode(bytes, type);
        } catch (HomaException e) {
            throw new HomaException(status, "cannot decode an item of " + what + ": " + e.getMessage(), e);
        }
        if (item == null) {
            throw new HomaException(status, "an item of " + what + " decoded as null");
        }
        return item;
    }

    /**
     * Reads frames written by {@link #encodeFrames}.
     *
     * @throws HomaException with status INVALID_ARGUMENT if the bytes are not exactly such frames
     */
    public static List<byte[]> decodeFrames(byte[] bytes) {
        if (bytes.length == 0) {
            // unlike a stream's empty payload (no frames), framed arguments always hold a count
            throw malformed("header needs 4 bytes but only 0 remain");
        }
        Frames frames = frames(bytes);
        List<byte[]> copies = new ArrayList<>(frames.size());
        for (int i = 0; i < frames.size(); i++) {
            copies.add(frames.frame(i));
        }
        return copies;
    }
}
