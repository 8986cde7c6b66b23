package io.homa.reactive.internal.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.RpcEnvelope.Request;
import io.homa.reactive.rpc.RpcEnvelope.Response;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;

/**
 * Writes and reads the RPC layer's envelope: the framing in front of each Homa message's payload
 * that says which service and method a request calls, how its arguments are encoded and what
 * metadata travels with it, and a response's status, error message, metadata and result. Wire
 * version 2, big-endian:
 *
 * <pre>
 * request:   u8 version (2) | u8 kind (0) | u16 serviceLen | service (UTF-8)
 *            | u16 methodLen | method (UTF-8) | u8 codecLen | codec name (ASCII)
 *            | metadata | payload (rest)
 * response:  u8 version (2) | u8 kind (1) | u8 status code ({@link HomaStatus#code()})
 *            | u16 messageLen | error message (UTF-8) | metadata | payload (rest)
 * metadata:  u16 count | count x (u8 keyLen | key (printable ASCII) | u16 valueLen | value (UTF-8))
 * </pre>
 *
 * <p>A stream batch's payload is a list of items, framed by {@link FrameCodec}.
 *
 * <p>The smallest request envelope is 12 bytes and the smallest response 7, so every envelope is a
 * valid (non-empty) Homa message. Decoding is strict: a version other than 2 (version 1 had no
 * metadata), a wrong kind, a length that runs past the end, a duplicate metadata key, or invalid
 * UTF-8 / non-ASCII fails with a {@link HomaException} of status {@link HomaStatus#INVALID_ARGUMENT}
 * whose message starts with {@code "malformed request envelope: "} (or response). Unknown status
 * codes decode as {@link HomaStatus#UNKNOWN}.
 *
 * <p>Internal: not part of the API; the values users see are {@link Request} and {@link Response}.
 */
public final class EnvelopeCodec {
    /** The only envelope version this code reads and writes. */
    public static final int VERSION = 2;
    /** {@code kind} of a request envelope. */
    public static final int KIND_REQUEST = 0;
    /** {@code kind} of a response envelope. */
    public static final int KIND_RESPONSE = 1;
    /** Longest service or method name, error message and metadata value, in UTF-8 bytes (a u16). */
    public static final int MAX_NAME_BYTES = 0xFFFF;
    /** Longest codec name and metadata key in bytes (a u8). */
    public static final int MAX_CODEC_NAME_BYTES = 0xFF;
    /** Most metadata entries in one envelope (a u16). */
    public static final int MAX_METADATA_ENTRIES = 0xFFFF;
    /** Bytes of a request envelope before the service name: version, kind, serviceLen. */
    private static final int REQUEST_PREFIX_BYTES = 4;
    /** Bytes of a response envelope before the error message: version, kind, status, messageLen. */
    private static final int RESPONSE_PREFIX_BYTES = 5;

    /**
     * Payloads at least this long are sent behind their envelope as a second array, without a copy
     * ({@link io.homa.reactive.HomaTransport#call(java.net.InetSocketAddress, byte[], byte[])});
     * shorter ones are copied into the envelope, which costs less than a second part's bookkeeping.
     */
    public static final int SEPARATE_PAYLOAD_BYTES = 4096;
    /** Bytes copied out of a message without an array of its own to read its envelope from ({@link #decodeView}). */
    private static final int ENVELOPE_PROBE_BYTES = 4096;
    /** No payload: an error response's, or an envelope encoded alone to go in front of a payload sent after it. */
    public static final byte[] NO_PAYLOAD = new byte[0];

    /**
     * A message of an envelope encoded with {@link #NO_PAYLOAD} and the payload behind it, as the
     * arrays they are (not copied): the transport sends a composite's arrays as the message's parts.
     */
    public static ByteBuf behindEnvelope(byte[] envelope, byte[][] payload) {
        byte[][] parts = new byte[payload.length + 1][];
        parts[0] = envelope;
        System.arraycopy(payload, 0, parts, 1, payload.length);
        return Unpooled.wrappedBuffer(parts);
    }

    private EnvelopeCodec() {}

    // ------------------------------------------------------------------ request

    /**
     * Encodes a request without metadata.
     *
     * @param service service name, 1..65535 UTF-8 bytes
     * @param method method name, 1..65535 UTF-8 bytes
     * @param codec codec name, 1..255 printable ASCII characters
     * @param payload the encoded arguments
     * @throws IllegalArgumentException if a name is empty, too long or (codec) not printable ASCII
     */
    public static byte[] encodeRequest(String service, String method, String codec, byte[] payload) {
        return encodeRequest(service, method, codec, Map.of(), payload);
    }

    /**
     * Encodes a request.
     *
     * @param service service name, 1..65535 UTF-8 bytes
     * @param method method name, 1..65535 UTF-8 bytes
     * @param codec codec name, 1..255 printable ASCII characters
     * @param metadata up to 65535 entries; keys 1..255 printable ASCII characters, values up to
     *     65535 UTF-8 bytes
     * @param payload the encoded arguments
     * @throws IllegalArgumentException if a name, key or value is empty (names, keys), too long or
     *     (codec, keys) not printable ASCII
     */
    public static byte[] encodeRequest(
            String service, String method, String codec, Map<String, String> metadata, byte[] payload) {
        Objects.requireNonNull(payload, "payload must not be null");
        return encodeRequest(service, method, codec, metadata, new byte[][] {payload});
    }

    /**
     * Encodes a request whose payload is {@code payloadParts} in order, each copied once, into
     * the request; see {@link #encodeRequest(String, String, String, Map, byte[])}.
     *
     * @throws IllegalArgumentException as that method does, or if the request would reach 2 GiB
     */
    public static byte[] encodeRequest(
            String service, String method, String codec, Map<String, String> metadata, byte[][] payloadParts) {
        byte[] serviceBytes = name("service", service);
        byte[] methodBytes = name("method", method);
        byte[] codecBytes = ascii("codec name", codec);
        byte[][] metadataBytes = metadata(metadata);
        long payloadBytes = 0;
        for (byte[] part : payloadParts) {
            payloadBytes += Objects.requireNonNull(part, "payload part must not be null").length;
        }
        long lengthBytes = REQUEST_PREFIX_BYTES + serviceBytes.length + 2 + methodBytes.length + 1
                + codecBytes.length + metadataLength(metadataBytes) + payloadBytes;
        if (lengthBytes > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("a request must be less than 2 GiB, was " + lengthBytes + " bytes");
        }
        ByteBuffer out = ByteBuffer.allocate((int) lengthBytes);
        out.put((byte) VERSION).put((byte) KIND_REQUEST);
        out.putShort((short) serviceBytes.length).put(serviceBytes);
        out.putShort((short) methodBytes.length).put(methodBytes);
        out.put((byte) codecBytes.length).put(codecBytes);
        putMetadata(out, metadataBytes);
        for (byte[] part : payloadParts) {
            out.put(part);
        }
        return out.array();
    }

    /** Encodes {@code request}; see {@link #encodeRequest(String, String, String, Map, byte[])}. */
    public static byte[] encodeRequest(Request request) {
        return encodeRequest(request.service(), request.method(), request.codec(), request.metadata(), request.payload());
    }

    /**
     * Decodes a request from the readable bytes of {@code message}, leaving its indices unchanged.
     *
     * @throws HomaException with status INVALID_ARGUMENT if the bytes are not a request envelope
     */
    public static Request decodeRequest(ByteBuf message) {
        return decodeRequestView(message).toRequest();
    }

    /**
     * A decoded request whose payload stays where it arrived, a slice of the message (not
     * retained: valid while the message is): the dispatcher decodes arguments from there, without
     * copying a long payload out first, nor joining the chunks a long message arrives in.
     */
    public record RequestView(String service, String method, String codec, Map<String, String> metadata, ByteBuf payload) {
        public Request toRequest() {
            return new Request(service, method, codec, metadata, ByteBufUtil.getBytes(payload));
        }
    }

    /**
     * Decodes a request from the readable bytes of {@code message}, leaving its indices unchanged
     * and its payload in place ({@link RequestView#payload()}).
     *
     * @throws HomaException with status INVALID_ARGUMENT if the bytes are not a request envelope
     */
    public static RequestView decodeRequestView(ByteBuf message) {
        return decodeView(message, EnvelopeCodec::readRequest);
    }

    /**
     * Reads a view of {@code message} from its envelope, at {@code bytes[offset, offset + length)}:
     * the message's first bytes.
     */
    private interface EnvelopeParser<V> {
        V parse(byte[] bytes, int offset, int length, ByteBuf message);
    }

    /** The readable bytes of {@code message} after its first {@code envelopeBytes}: the payload, a slice. */
    private static ByteBuf payloadAfter(ByteBuf message, int envelopeBytes) {
        return message.slice(message.readerIndex() + envelopeBytes, message.readableBytes() - envelopeBytes);
    }

    /**
     * Reads the envelope of {@code message} where its bytes are: from its array, or from a copy of
     * its first {@value #ENVELOPE_PROBE_BYTES} bytes when it has none (a long message arrives as
     * the transport's chunks, a composite buffer); only an envelope longer than that (large
     * metadata) costs a copy of the whole message.
     */
    private static <V> V decodeView(ByteBuf message, EnvelopeParser<V> parser) {
        int start = message.readerIndex();
        int length = message.readableBytes();
        if (message.hasArray()) {
            return parser.parse(message.array(), message.arrayOffset() + start, length, message);
        }
        if (length > ENVELOPE_PROBE_BYTES) {
            try {
                return parser.parse(ByteBufUtil.getBytes(message, start, ENVELOPE_PROBE_BYTES), 0, ENVELOPE_PROBE_BYTES,
                        message);
            } catch (HomaException e) {
                // the envelope goes on past the probe (or is malformed, which the whole message shows)
            }
        }
        return parser.parse(ByteBufUtil.getBytes(message, start, length), 0, length, message);
    }

    /**
     * Decodes a request.
     *
     * @throws HomaException with status INVALID_ARGUMENT if the bytes are not a request envelope
     */
    public static Request decodeRequest(byte[] message) {
        return decodeRequestView(Unpooled.wrappedBuffer(message)).toRequest();
    }

    private static RequestView readRequest(byte[] bytes, int offset, int length, ByteBuf message) {
        WireReader in = new WireReader(bytes, offset, length, "request");
        in.header(KIND_REQUEST);
        String service = in.utf8(in.u16(), "service");
        String method = in.utf8(in.u16(), "method");
        String codec = in.ascii(in.u8(), "codec name");
        Map<String, String> metadata = in.metadata();
        return new RequestView(service, method, codec, metadata, payloadAfter(message, in.position() - offset));
    }

    // ------------------------------------------------------------------ response

    /**
     * Encodes a response without metadata. A message longer than 65535 UTF-8 bytes is truncated
     * (at a character boundary).
     *
     * @param status the outcome
     * @param message the error message ({@code ""} for OK)
     * @param payload the encoded result (empty for errors)
     */
    public static byte[] encodeResponse(HomaStatus status, String message, byte[] payload) {
        return encodeResponse(status, message, Map.of(), payload);
    }

    /**
     * Encodes a response. A message longer than 65535 UTF-8 bytes is truncated (at a character
     * boundary).
     *
     * @param status the outcome
     * @param message the error message ({@code ""} for OK)
     * @param metadata see {@link #encodeRequest(String, String, String, Map, byte[])}
     * @param payload the encoded result
     * @throws IllegalArgumentException if a metadata key or value is invalid
     */
    public static byte[] encodeResponse(HomaStatus status, String message, Map<String, String> metadata, byte[] payload) {
        Objects.requireNonNull(status, "status must not be null");
        Objects.requireNonNull(payload, "payload must not be null");
        byte[] messageBytes = truncatedUtf8(Objects.requireNonNull(message, "message must not be null"));
        byte[][] metadataBytes = metadata(metadata);
        ByteBuffer out = ByteBuffer.allocate(RESPONSE_PREFIX_BYTES + messageBytes.length
                + metadataLength(metadataBytes) + payload.length);
        out.put((byte) VERSION).put((byte) KIND_RESPONSE).put((byte) status.code());
        out.putShort((short) messageBytes.length).put(messageBytes);
        putMetadata(out, metadataBytes);
        out.put(payload);
        return out.array();
    }

    /** Encodes {@code response}; see {@link #encodeResponse(HomaStatus, String, Map, byte[])}. */
    public static byte[] encodeResponse(Response response) {
        return encodeResponse(response.status(), response.message(), response.metadata(), response.payload());
    }

    /** An OK response carrying {@code payload}. */
    public static byte[] encodeOk(byte[] payload) {
        return encodeResponse(HomaStatus.OK, "", payload);
    }

    /** An error response with no payload. */
    public static byte[] encodeError(HomaStatus status, String message) {
        return encodeResponse(status, message, NO_PAYLOAD);
    }

    /**
     * Decodes a response.
     *
     * @throws HomaException with status INVALID_ARGUMENT if the bytes are not a response envelope
     */
    public static Response decodeResponse(byte[] message) {
        ResponseView view = decodeResponseView(Unpooled.wrappedBuffer(message));
        return new Response(view.status(), view.message(), view.metadata(), ByteBufUtil.getBytes(view.payload()));
    }

    /**
     * A decoded response whose payload stays in place, a slice of the message (not retained: valid
     * while the message is).
     */
    public record ResponseView(HomaStatus status, String message, Map<String, String> metadata, ByteBuf payload) {}

    /**
     * Decodes a response from the readable bytes of {@code message}, leaving its indices unchanged
     * and its payload in place ({@link ResponseView#payload()}).
     *
     * @throws HomaException with status INVALID_ARGUMENT if the bytes are not a response envelope
     */
    public static ResponseView decodeResponseView(ByteBuf message) {
        return decodeView(message, EnvelopeCodec::readResponse);
    }

    private static ResponseView readResponse(byte[] bytes, int offset, int length, ByteBuf message) {
        WireReader in = new WireReader(bytes, offset, length, "response");
        in.header(KIND_RESPONSE);
        HomaStatus status = HomaStatus.fromCode(in.u8());
        String text = in.utf8(in.u16(), "error message");
        Map<String, String> metadata = in.metadata();
        return new ResponseView(status, text, metadata, payloadAfter(message, in.position() - offset));
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

    private static byte[] ascii(String what, String value) {
        Objects.requireNonNull(value, what + " must not be null");
        if (value.isEmpty() || value.length() > MAX_CODEC_NAME_BYTES) {
            throw new IllegalArgumentException(
                    what + " must be 1 to " + MAX_CODEC_NAME_BYTES + " characters long, was " + value.length());
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x21 || c > 0x7E) {
                throw new IllegalArgumentException(what + " must be printable ASCII, was '" + value + "'");
            }
        }
        return value.getBytes(StandardCharsets.US_ASCII);
    }


    /** Keys and values as bytes, alternating; validated. */
    private static byte[][] metadata(Map<String, String> metadata) {
        Objects.requireNonNull(metadata, "metadata must not be null");
        if (metadata.size() > MAX_METADATA_ENTRIES) {
            throw new IllegalArgumentException(
                    "metadata must have at most " + MAX_METADATA_ENTRIES + " entries, had " + metadata.size());
        }
        byte[][] bytes = new byte[metadata.size() * 2][];
        int i = 0;
        for (Map.Entry<String, String> entry : metadata.entrySet()) {
            bytes[i++] = ascii("metadata key", entry.getKey());
            String value = Objects.requireNonNull(entry.getValue(), "metadata value must not be null");
            byte[] valueBytes = value.getBytes(StandardCharsets.UTF_8);
            if (valueBytes.length > MAX_NAME_BYTES) {
                throw new IllegalArgumentException("metadata value of '" + entry.getKey() + "' must be at most "
                        + MAX_NAME_BYTES + " UTF-8 bytes long, was " + valueBytes.length);
            }
            bytes[i++] = valueBytes;
        }
        return bytes;
    }

    private static int metadataLength(byte[][] metadata) {
        int length = 2;
        for (int i = 0; i < metadata.length; i += 2) {
            length += 1 + metadata[i].length + 2 + metadata[i + 1].length;
        }
        return length;
    }

    private static void putMetadata(ByteBuffer out, byte[][] metadata) {
        out.putShort((short) (metadata.length / 2));
        for (int i = 0; i < metadata.length; i += 2) {
            out.put((byte) metadata[i].length).put(metadata[i]);
            out.putShort((short) metadata[i + 1].length).put(metadata[i + 1]);
        }
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
}
