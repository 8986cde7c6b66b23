package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * The RPC layer's framing of one Homa message: which service and method a request calls and
 * how its argument is encoded, and a response's status, error message and result. Big-endian:
 *
 * <pre>
 * request:   u8 version (1) | u8 kind (0) | u16 serviceLen | service (UTF-8)
 *            | u16 methodLen | method (UTF-8) | u8 codecLen | codec name (ASCII) | payload (rest)
 * response:  u8 version (1) | u8 kind (1) | u8 status code ({@link HomaStatus#code()})
 *            | u16 messageLen | error message (UTF-8) | payload (rest)
 * </pre>
 *
 * <p>The smallest request envelope is 7 bytes and the smallest response 5, so every envelope is
 * a valid (non-empty) Homa message. Decoding is strict: a wrong version or kind, a length that
 * runs past the end, or invalid UTF-8 / non-ASCII fails with a {@link HomaException} of status
 * {@link HomaStatus#INVALID_ARGUMENT}. Unknown status codes decode as {@link HomaStatus#UNKNOWN}.
 */
public final class RpcEnvelope {
    /** The only envelope version this code reads and writes. */
    public static final int VERSION = 1;
    /** {@code kind} of a request envelope. */
    public static final int KIND_REQUEST = 0;
    /** {@code kind} of a response envelope. */
    public static final int KIND_RESPONSE = 1;
    /** Longest service or method name, and longest error message, in UTF-8 bytes (a u16). */
    public static final int MAX_NAME_BYTES = 0xFFFF;
    /** Longest codec name in bytes (a u8). */
    public static final int MAX_CODEC_NAME_BYTES = 0xFF;
    /** Bytes of a request envelope before the service name: version, kind, serviceLen. */
    static final int REQUEST_PREFIX_BYTES = 4;
    /** Bytes of a response envelope before the error message: version, kind, status, messageLen. */
    static final int RESPONSE_PREFIX_BYTES = 5;

    private static final byte[] EMPTY = new byte[0];

    private RpcEnvelope() {}

    /**
     * A decoded request.
     *
     * @param service the service name
     * @param method the method name
     * @param codec the name of the codec that encoded {@code payload}
     * @param payload the encoded argument (may be empty)
     */
    public record Request(String service, String method, String codec, byte[] payload) {
        public Request {
            Objects.requireNonNull(service, "service must not be null");
            Objects.requireNonNull(method, "method must not be null");
            Objects.requireNonNull(codec, "codec must not be null");
            Objects.requireNonNull(payload, "payload must not be null");
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Request that
                    && service.equals(that.service)
                    && method.equals(that.method)
                    && codec.equals(that.codec)
                    && Arrays.equals(payload, that.payload);
        }

        @Override
        public int hashCode() {
            return Objects.hash(service, method, codec, Arrays.hashCode(payload));
        }

        @Override
        public String toString() {
            return "Request{" + service + "." + method + ", codec=" + codec + ", payload=" + payload.length + " bytes}";
        }
    }

    /**
     * A decoded response.
     *
     * @param status the outcome
     * @param message the error message; empty when {@code status} is OK
     * @param payload the encoded result (may be empty; empty for errors)
     */
    public record Response(HomaStatus status, String message, byte[] payload) {
        public Response {
            Objects.requireNonNull(status, "status must not be null");
            Objects.requireNonNull(message, "message must not be null");
            Objects.requireNonNull(payload, "payload must not be null");
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Response that
                    && status == that.status
                    && message.equals(that.message)
                    && Arrays.equals(payload, that.payload);
        }

        @Override
        public int hashCode() {
            return Objects.hash(status, message, Arrays.hashCode(payload));
        }

        @Override
        public String toString() {
            return "Response{" + status + (message.isEmpty() ? "" : ", message=" + message)
                    + ", payload=" + payload.length + " bytes}";
        }
    }

    // ------------------------------------------------------------------ request

    /**
     * Encodes a request.
     *
     * @param service service name, 1..65535 UTF-8 bytes
     * @param method method name, 1..65535 UTF-8 bytes
     * @param codec codec name, 1..255 printable ASCII characters
     * @param payload the encoded argument
     * @throws IllegalArgumentException if a name is empty, too long or (codec) not printable ASCII
     */
    public static byte[] encodeRequest(String service, String method, String codec, byte[] payload) {
        byte[] serviceBytes = name("service", service);
        byte[] methodBytes = name("method", method);
        byte[] codecBytes = codecName(codec);
        Objects.requireNonNull(payload, "payload must not be null");
        ByteBuffer out = ByteBuffer.allocate(REQUEST_PREFIX_BYTES + serviceBytes.length + 2 + methodBytes.length + 1
                + codecBytes.length + payload.length);
        out.put((byte) VERSION).put((byte) KIND_REQUEST);
        out.putShort((short) serviceBytes.length).put(serviceBytes);
        out.putShort((short) methodBytes.length).put(methodBytes);
        out.put((byte) codecBytes.length).put(codecBytes);
        out.put(payload);
        return out.array();
    }

    /** Encodes {@code request}; see {@link #encodeRequest(String, String, String, byte[])}. */
    public static byte[] encodeRequest(Request request) {
        return encodeRequest(request.service(), request.method(), request.codec(), request.payload());
    }

    /**
     * Decodes a request from the readable bytes of {@code message}, leaving its indices unchanged.
     *
     * @throws HomaException with status INVALID_ARGUMENT if the bytes are not a request envelope
     */
    public static Request decodeRequest(ByteBuf message) {
        if (message.hasArray()) {
            return decodeRequest(message.array(), message.arrayOffset() + message.readerIndex(), message.readableBytes());
        }
        byte[] bytes = ByteBufUtil.getBytes(message);
        return decodeRequest(bytes, 0, bytes.length);
    }

    /**
     * Decodes a request.
     *
     * @throws HomaException with status INVALID_ARGUMENT if the bytes are not a request envelope
     */
    public static Request decodeRequest(byte[] message) {
        return decodeRequest(message, 0, message.length);
    }

    private static Request decodeRequest(byte[] bytes, int offset, int length) {
        Reader in = new Reader(bytes, offset, length, "request");
        in.header(KIND_REQUEST);
        String service = in.utf8(in.u16(), "service");
        String method = in.utf8(in.u16(), "method");
        String codec = in.ascii(in.u8(), "codec name");
        return new Request(service, method, codec, in.rest());
    }

    // ------------------------------------------------------------------ response

    /**
     * Encodes a response. A message longer than 65535 UTF-8 bytes is truncated (at a character
     * boundary).
     *
     * @param status the outcome
     * @param message the error message ({@code ""} for OK)
     * @param payload the encoded result (empty for errors)
     */
    public static byte[] encodeResponse(HomaStatus status, String message, byte[] payload) {
        Objects.requireNonNull(status, "status must not be null");
        Objects.requireNonNull(payload, "payload must not be null");
        byte[] messageBytes = truncatedUtf8(Objects.requireNonNull(message, "message must not be null"));
        ByteBuffer out = ByteBuffer.allocate(RESPONSE_PREFIX_BYTES + messageBytes.length + payload.length);
        out.put((byte) VERSION).put((byte) KIND_RESPONSE).put((byte) status.code());
        out.putShort((short) messageBytes.length).put(messageBytes);
        out.put(payload);
        return out.array();
    }

    /** Encodes {@code response}; see {@link #encodeResponse(HomaStatus, String, byte[])}. */
    public static byte[] encodeResponse(Response response) {
        return encodeResponse(response.status(), response.message(), response.payload());
    }

    /** An OK response carrying {@code payload}. */
    public static byte[] encodeOk(byte[] payload) {
        return encodeResponse(HomaStatus.OK, "", payload);
    }

    /** An error response with no payload. */
    public static byte[] encodeError(HomaStatus status, String message) {
        return encodeResponse(status, message, EMPTY);
    }

    /**
     * Decodes a response.
     *
     * @throws HomaException with status INVALID_ARGUMENT if the bytes are not a response envelope
     */
    public static Response decodeResponse(byte[] message) {
        Reader in = new Reader(message, 0, message.length, "response");
        in.header(KIND_RESPONSE);
        HomaStatus status = HomaStatus.fromCode(in.u8());
        String text = in.utf8(in.u16(), "error message");
        return new Response(status, text, in.rest());
    }

    // ------------------------------------------------------------------ helpers

    private static byte[] name(String what, String value) {
        Objects.requireNonNull(value, what + " must not be null");
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        if (bytes.length < 1 || bytes.length > MAX_NAME_BYTES) {
            throw new IllegalArgumentException(
                    what + " must be 1 to " + MAX_NAME_BYTES + " UTF-8 bytes long, was " + bytes.length);
        }
        return bytes;
    }

    private static byte[] codecName(String codec) {
        Objects.requireNonNull(codec, "codec must not be null");
        if (codec.isEmpty() || codec.length() > MAX_CODEC_NAME_BYTES) {
            throw new IllegalArgumentException(
                    "codec name must be 1 to " + MAX_CODEC_NAME_BYTES + " characters long, was " + codec.length());
        }
        for (int i = 0; i < codec.length(); i++) {
            char c = codec.charAt(i);
            if (c < 0x21 || c > 0x7E) {
                throw new IllegalArgumentException("codec name must be printable ASCII, was '" + codec + "'");
            }
        }
        return codec.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] truncatedUtf8(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        if (bytes.length <= MAX_NAME_BYTES) {
            return bytes;
        }
        int end = MAX_NAME_BYTES;
        while (end > 0 && (bytes[end] & 0xC0) == 0x80) {
            end--; // bytes[end] continues a character: cut before that character starts
        }
        return Arrays.copyOf(bytes, end);
    }

    /** A bounds-checked big-endian reader; every failure is INVALID_ARGUMENT naming the field. */
    private static final class Reader {
        private final byte[] bytes;
        private final int end;
        private final String kindName;
        private int position;

        Reader(byte[] bytes, int offset, int length, String kindName) {
            this.bytes = bytes;
            this.position = offset;
            this.end = offset + length;
            this.kindName = kindName;
        }

        void header(int expectedKind) {
            int version = u8();
            if (version != VERSION) {
                throw malformed("version " + version + " is not supported (expected " + VERSION + ")");
            }
            int kind = u8();
            if (kind != expectedKind) {
                throw malformed("kind " + kind + " is not a " + kindName + " (expected " + expectedKind + ")");
            }
        }

        int u8() {
            need(1, "header");
            return bytes[position++] & 0xFF;
        }

        int u16() {
            need(2, "header");
            int value = ((bytes[position] & 0xFF) << 8) | (bytes[position + 1] & 0xFF);
            position += 2;
            return value;
        }

        String utf8(int length, String field) {
            need(length, field);
            try {
                String value = StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(bytes, position, length))
                        .toString();
                position += length;
                return value;
            } catch (CharacterCodingException e) {
                throw malformed(field + " is not valid UTF-8");
            }
        }

        String ascii(int length, String field) {
            need(length, field);
            for (int i = position; i < position + length; i++) {
                if (bytes[i] < 0x21 || bytes[i] > 0x7E) {
                    throw malformed(field + " is not printable ASCII");
                }
            }
            String value = new String(bytes, position, length, StandardCharsets.US_ASCII);
            position += length;
            return value;
        }

        byte[] rest() {
            byte[] payload = Arrays.copyOfRange(bytes, position, end);
            position = end;
            return payload;
        }

        private void need(int length, String field) {
            if (end - position < length) {
                throw malformed(field + " needs " + length + " bytes but only " + (end - position) + " remain");
            }
        }

        private HomaException malformed(String why) {
            return new HomaException(HomaStatus.INVALID_ARGUMENT, "malformed " + kindName + " envelope: " + why);
        }
    }
}
