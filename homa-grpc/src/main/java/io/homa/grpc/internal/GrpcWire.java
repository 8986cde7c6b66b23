package io.homa.grpc.internal;

import io.grpc.Metadata;
import io.grpc.Status;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The bytes a gRPC call puts in the RPC layer's raw {@code byte[]} payloads (see docs/grpc.md,
 * "Wire mapping"). Big-endian, as the rest of Homa.
 *
 * <p>Request prelude, first in a unary or server-streaming request and the whole open argument of
 * a client- or bidirectional-streaming call:
 * <pre>
 * version (1) = 1 | flags (1): bit 0 = a message follows | callId (8) | timeoutNs (8; 0 = none)
 *   | authority (u16 length, UTF-8) | metadata
 * </pre>
 * then, in a unary or server-streaming request with flag bit 0, the request message's bytes to the
 * end of the payload.
 *
 * <p>Response frames, one after another: a unary response holds all of a call's frames, each item
 * of a response stream holds the frames sent since the item before (headers travel with the first
 * message or with the trailers):
 * <pre>
 * HEADERS  type (1) = 1 | metadata
 * MESSAGE  type (1) = 2 | length (4) | the marshaller's bytes
 * TRAILERS type (1) = 3 | status code (1) | description (i32 length, -1 = none; UTF-8) | metadata
 * </pre>
 *
 * <p>Metadata: count (u16), then per entry: key (u16 length, ASCII) | value (i32 length | bytes).
 * A key ending in {@code -bin} carries its value's bytes as they are; any other key its ASCII
 * string. A key with several values appears once per value, in order.
 *
 * <p>Items of a client's request stream are each one request message's bytes, with no framing.
 */
public final class GrpcWire {
    /** The prelude's version byte. */
    public static final byte VERSION = 1;
    /** The prelude's flag: the request message follows the prelude. */
    public static final int FLAG_MESSAGE = 1;
    /** Frame type of response headers. */
    public static final byte HEADERS = 1;
    /** Frame type of a response message. */
    public static final byte MESSAGE = 2;
    /** Frame type of the trailers (the status), the last frame of a call. */
    public static final byte TRAILERS = 3;

    /** The service of the RPC layer's own method that cancels a unary call at the server. */
    public static final String CANCEL_SERVICE = "homa.grpc";
    /** The method that cancels a unary call: its argument is the call's 8-byte callId. */
    public static final String CANCEL_METHOD = "cancel";

    private GrpcWire() {
    }

    /** A decoded request prelude and what follows it. */
    public record Request(long callId, long timeoutNs, String authority, Metadata headers, @Nullable Slice message) {
    }

    /** One decoded response frame: exactly one of the fields is set, as {@link #type} says. */
    public record Frame(byte type, @Nullable Metadata headers, @Nullable Slice message, @Nullable Status status,
                        @Nullable Metadata trailers) {
    }

    /**
     * A message where it lies in the payload it came in, not copied out: the marshaller reads it
     * from there ({@link #stream()}), so a 1 MiB message is not copied once more (and allocated
     * once more) before the marshaller copies it into its own object.
     */
    public record Slice(byte[] array, int offset, int length) {
        /** The message as the marshaller reads it. */
        public ByteArrayInputStream stream() {
            return new ByteArrayInputStream(array, offset, length);
        }

        /** A copy of the message's bytes. */
        public byte[] toArray() {
            return Arrays.copyOfRange(array, offset, offset + length);
        }
    }

    /** Encodes a request prelude followed by {@code message} (none: {@code null}). */
    public static byte[] encodeRequest(long callId, long timeoutNs, String authority, Metadata headers,
                                       byte @Nullable [] message) {
        Out out = new Out();
        out.write(VERSION);
        out.write(message != null ? FLAG_MESSAGE : 0);
        out.writeLong(callId);
        out.writeLong(timeoutNs);
        out.writeShortString(authority);
        writeMetadata(out, headers);
        if (message == null) {
            return out.toByteArray();
        }
        // The prelude, then the message copied once into an array of the exact length: writing a
        // large message into the stream would copy it twice more (growing the buffer, toByteArray).
        byte[] request = Arrays.copyOf(out.buffer(), out.size() + message.length);
        System.arraycopy(message, 0, request, out.size(), message.length);
        return request;
    }

    /**
     * Decodes a request prelude and, with its flag, the message after it.
     *
     * @throws IllegalArgumentException if the bytes are not a request of this version
     */
    public static Request decodeRequest(byte[] bytes) {
        ByteBuffer in = ByteBuffer.wrap(bytes);
        try {
            byte version = in.get();
            if (version != VERSION) {
                throw new IllegalArgumentException("homa-grpc request version " + version + ", expected " + VERSION);
            }
            int flags = in.get();
            long callId = in.getLong();
            long timeoutNs = in.getLong();
            String authority = readShortString(in, StandardCharsets.UTF_8);
            Metadata headers = readMetadata(in);
            Slice message = null;
            if ((flags & FLAG_MESSAGE) != 0) {
                message = new Slice(bytes, in.position(), in.remaining());
            }
            return new Request(callId, timeoutNs, authority, headers, message);
        } catch (RuntimeException e) {
            throw malformed("request", e);
        }
    }

    /** Appends a HEADERS frame. */
    public static void writeHeaders(ByteArrayOutputStream out, Metadata headers) {
        Out frame = new Out();
        frame.write(HEADERS);
        writeMetadata(frame, headers);
        frame.writeTo(out);
    }

    /** Appends a MESSAGE frame. */
    public static void writeMessage(ByteArrayOutputStream out, byte[] message) {
        Out frame = new Out();
        frame.write(MESSAGE);
        frame.writeInt(message.length);
        frame.writeTo(out);
        out.write(message, 0, message.length);
    }

    /** Bytes of the MESSAGE frame's type and length, before the message. */
    static final int MESSAGE_FRAME_HEADER_BYTES = 5;

    /**
     * {@code before} (frames already encoded), a MESSAGE frame of {@code message} (none:
     * {@code null}), then {@code after}, in one array of the exact length: the message is copied
     * once, where appending it to a {@code ByteArrayOutputStream} copies it when the buffer grows,
     * again when frames follow it, and once more in {@code toByteArray()}.
     */
    public static byte[] frames(byte[] before, byte @Nullable [] message, byte[] after) {
        int messageBytes = message == null ? 0 : MESSAGE_FRAME_HEADER_BYTES + message.length;
        byte[] frames = Arrays.copyOf(before, before.length + messageBytes + after.length);
        int at = before.length;
        if (message != null) {
            ByteBuffer.wrap(frames, at, MESSAGE_FRAME_HEADER_BYTES).put(MESSAGE).putInt(message.length);
            at += MESSAGE_FRAME_HEADER_BYTES;
            System.arraycopy(message, 0, frames, at, message.length);
            at += message.length;
        }
        System.arraycopy(after, 0, frames, at, after.length);
        return frames;
    }

    /** Appends a TRAILERS frame: the status's code and description (exact, any Unicode) and the trailers. */
    public static void writeTrailers(ByteArrayOutputStream out, Status status, Metadata trailers) {
        Out frame = new Out();
        frame.write(TRAILERS);
        frame.write(status.getCode().value());
        String description = status.getDescription();
        if (description == null) {
            frame.writeInt(-1);
        } else {
            byte[] utf8 = description.getBytes(StandardCharsets.UTF_8);
            frame.writeInt(utf8.length);
            frame.write(utf8, 0, utf8.length);
        }
        writeMetadata(frame, trailers);
        frame.writeTo(out);
    }

    /**
     * Decodes the frames of a response payload.
     *
     * @throws IllegalArgumentException if the bytes are not whole frames
     */
    public static List<Frame> decodeFrames(byte[] bytes) {
        ByteBuffer in = ByteBuffer.wrap(bytes);
        List<Frame> frames = new ArrayList<>(2);
        try {
            while (in.hasRemaining()) {
                byte type = in.get();
                switch (type) {
                    case HEADERS -> frames.add(new Frame(type, readMetadata(in), null, null, null));
                    case MESSAGE -> {
                        int length = in.getInt();
                        if (length < 0 || length > in.remaining()) {
                            throw new IllegalArgumentException("message of " + length + " bytes, "
                                    + in.remaining() + " left");
                        }
                        frames.add(new Frame(type, null, new Slice(bytes, in.position(), length), null, null));
                        in.position(in.position() + length);
                    }
                    case TRAILERS -> {
                        Status status = Status.fromCodeValue(in.get() & 0xFF);
                        int length = in.getInt();
                        if (length >= 0) {
                            byte[] utf8 = new byte[length];
                            in.get(utf8);
                            status = status.withDescription(new String(utf8, StandardCharsets.UTF_8));
                        }
                        frames.add(new Frame(type, null, null, status, readMetadata(in)));
                    }
                    default -> throw new IllegalArgumentException("unknown frame type " + type);
                }
            }
        } catch (RuntimeException e) {
            throw malformed("response", e);
        }
        return frames;
    }

    /** The 8 bytes of a callId, the argument of the cancel method. */
    public static byte[] encodeCallId(long callId) {
        return ByteBuffer.allocate(Long.BYTES).putLong(callId).array();
    }

    /** @throws IllegalArgumentException unless {@code bytes} is 8 bytes long */
    public static long decodeCallId(byte[] bytes) {
        if (bytes.length != Long.BYTES) {
            throw new IllegalArgumentException("a callId is 8 bytes, got " + bytes.length);
        }
        return ByteBuffer.wrap(bytes).getLong();
    }

    private static void writeMetadata(Out out, Metadata metadata) {
        List<String> keys = new ArrayList<>();
        List<byte[]> values = new ArrayList<>();
        for (String key : metadata.keys()) {
            if (key.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
                Iterable<byte[]> all = metadata.getAll(Metadata.Key.of(key, Metadata.BINARY_BYTE_MARSHALLER));
                if (all != null) {
                    for (byte[] value : all) {
                        keys.add(key);
                        values.add(value);
                    }
                }
            } else {
                Iterable<String> all = metadata.getAll(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER));
                if (all != null) {
                    for (String value : all) {
                        keys.add(key);
                        values.add(value.getBytes(StandardCharsets.US_ASCII));
                    }
                }
            }
        }
        if (keys.size() > 0xFFFF) {
            throw new IllegalArgumentException("at most 65535 metadata entries, got " + keys.size());
        }
        out.writeShort(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            out.writeShortString(keys.get(i));
            byte[] value = values.get(i);
            out.writeInt(value.length);
            out.write(value, 0, value.length);
        }
    }

    private static Metadata readMetadata(ByteBuffer in) {
        Metadata metadata = new Metadata();
        int count = in.getShort() & 0xFFFF;
        for (int i = 0; i < count; i++) {
            String key = readShortString(in, StandardCharsets.US_ASCII);
            int length = in.getInt();
            if (length < 0 || length > in.remaining()) {
                throw new IllegalArgumentException("metadata value of " + length + " bytes, " + in.remaining() + " left");
            }
            byte[] value = new byte[length];
            in.get(value);
            if (key.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
                metadata.put(Metadata.Key.of(key, Metadata.BINARY_BYTE_MARSHALLER), value);
            } else {
                metadata.put(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER),
                        new String(value, StandardCharsets.US_ASCII));
            }
        }
        return metadata;
    }

    private static String readShortString(ByteBuffer in, java.nio.charset.Charset charset) {
        int length = in.getShort() & 0xFFFF;
        byte[] bytes = new byte[length];
        in.get(bytes);
        return new String(bytes, charset);
    }

    private static IllegalArgumentException malformed(String what, RuntimeException e) {
        return e instanceof IllegalArgumentException iae && iae.getMessage() != null
                && iae.getMessage().startsWith("malformed")
                ? iae : new IllegalArgumentException("malformed homa-grpc " + what + ": " + e, e);
    }

    /** A growable big-endian buffer. */
    private static final class Out extends ByteArrayOutputStream {
        Out() {
            super(64);
        }

        void writeShort(int value) {
            write(value >>> 8);
            write(value);
        }

        void writeInt(int value) {
            writeShort(value >>> 16);
            writeShort(value);
        }

        void writeLong(long value) {
            writeInt((int) (value >>> 32));
            writeInt((int) value);
        }

        void writeShortString(String value) {
            byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
            if (bytes.length > 0xFFFF) {
                throw new IllegalArgumentException("at most 65535 bytes, got " + bytes.length);
            }
            writeShort(bytes.length);
            write(bytes, 0, bytes.length);
        }

        void writeTo(ByteArrayOutputStream out) {
            out.write(buf, 0, count);
        }

        /** The buffer itself, its first {@link #size()} bytes written. */
        byte[] buffer() {
            return buf;
        }
    }
}
