package io.homa.bench.systems;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The request format every system's echo server understands, so that all systems carry the same
 * bytes: a request is {@code [int responseBytes][padding]} (big-endian). {@code responseBytes ==}
 * {@link #ECHO} means "answer with the request itself"; a positive value means "answer with that
 * many bytes". Requests are at least {@link #HEADER_BYTES} long.
 *
 * <p>Request arrays are immutable templates shared by concurrent calls (see {@link #echoRequest}).
 */
public final class EchoProtocol {
    /** Length of the request header in bytes. */
    public static final int HEADER_BYTES = 4;
    /** The header value that asks for an echo. */
    public static final int ECHO = -1;

    private static final Map<Long, byte[]> TEMPLATES = new ConcurrentHashMap<>();

    private EchoProtocol() {}

    /**
     * A shared request of {@code lengthBytes} that asks for an echo. Do not modify the array.
     *
     * @param lengthBytes {@value #HEADER_BYTES}..2^31-1
     */
    public static byte[] echoRequest(int lengthBytes) {
        return request(lengthBytes, ECHO);
    }

    /**
     * A shared request of {@code lengthBytes} asking for a response of {@code responseBytes}
     * ({@link #ECHO} for an echo). Do not modify the array.
     *
     * @throws IllegalArgumentException if {@code lengthBytes < HEADER_BYTES} or
     *     {@code responseBytes} is neither {@link #ECHO} nor positive
     */
    public static byte[] request(int lengthBytes, int responseBytes) {
        if (lengthBytes < HEADER_BYTES) {
            throw new IllegalArgumentException(
                    "request length must be at least " + HEADER_BYTES + " bytes, was " + lengthBytes);
        }
        if (responseBytes != ECHO && responseBytes < 1) {
            throw new IllegalArgumentException("responseBytes must be positive or ECHO (-1), was " + responseBytes);
        }
        long key = ((long) lengthBytes << 32) | (responseBytes & 0xffff_ffffL);
        return TEMPLATES.computeIfAbsent(key, k -> {
            byte[] bytes = new byte[lengthBytes];
            ByteBuffer.wrap(bytes).putInt(responseBytes);
            for (int i = HEADER_BYTES; i < lengthBytes; i++) {
                bytes[i] = (byte) i;
            }
            return bytes;
        });
    }

    /** The response length a request asks for. */
    public static int expectedResponseBytes(byte[] request) {
        int responseBytes = responseBytesField(request);
        return responseBytes == ECHO ? request.length : responseBytes;
    }

    /** The header field of a request (not validated). */
    public static int responseBytesField(byte[] request) {
        return ((request[0] & 0xff) << 24) | ((request[1] & 0xff) << 16) | ((request[2] & 0xff) << 8) | (request[3] & 0xff);
    }

    /**
     * The server's answer to a request: the request itself for an echo, else a new zero-filled
     * array of the asked length.
     *
     * @throws IllegalArgumentException if the request is shorter than the header or asks for a
     *     negative length other than {@link #ECHO}
     */
    public static byte[] respond(byte[] request) {
        if (request.length < HEADER_BYTES) {
            throw new IllegalArgumentException("request shorter than the " + HEADER_BYTES + "-byte header");
        }
        int responseBytes = responseBytesField(request);
        if (responseBytes == ECHO) {
            return request;
        }
        if (responseBytes < 1) {
            throw new IllegalArgumentException("request asks for " + responseBytes + " response bytes");
        }
        return new byte[responseBytes];
    }
}
