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
 * <p>S11 (overload) asks for CPU work: {@link #SPIN} ({@code [int -2][int spinUs][padding]}) spins
 * the handler's thread for {@code spinUs} µs of thread CPU time, then echoes, where the system
 * runs blocking work (its handler scheduler or worker pool); {@link #SPIN_INLINE} does the same on
 * the thread the request arrived on (a reactive handler's event loop), for S11's scaling variant.
 *
 * <p>Request arrays are immutable templates shared by concurrent calls (see {@link #echoRequest}).
 */
public final class EchoProtocol {
    /** Length of the request header in bytes. */
    public static final int HEADER_BYTES = 4;
    /** The header value that asks for an echo. */
    public static final int ECHO = -1;
    /** The header value that asks for {@code spinUs} of CPU work off the event loop, then an echo. */
    public static final int SPIN = -2;
    /** The header value that asks for {@code spinUs} of CPU work on the receiving thread, then an echo. */
    public static final int SPIN_INLINE = -3;
    /** Length of a spin request's header: the marker and the spin time. */
    public static final int SPIN_HEADER_BYTES = 8;

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

    /**
     * A shared request of {@code lengthBytes} that asks for {@code spinUs} µs of CPU work and an
     * echo, off the event loop ({@code inline} false) or on it. Do not modify the array.
     *
     * @param lengthBytes {@value #SPIN_HEADER_BYTES}..2^31-1
     * @param spinUs 0..10,000,000
     */
    public static byte[] spinRequest(int lengthBytes, int spinUs, boolean inline) {
        if (lengthBytes < SPIN_HEADER_BYTES) {
            throw new IllegalArgumentException(
                    "a spin request must be at least " + SPIN_HEADER_BYTES + " bytes, was " + lengthBytes);
        }
        if (spinUs < 0 || spinUs > 10_000_000) {
            throw new IllegalArgumentException("spinUs must be between 0 and 10,000,000, was " + spinUs);
        }
        int marker = inline ? SPIN_INLINE : SPIN;
        // Spin requests are not cached with the echo templates (their key has no room for the spin time).
        byte[] bytes = new byte[lengthBytes];
        ByteBuffer.wrap(bytes).putInt(marker).putInt(spinUs);
        for (int i = SPIN_HEADER_BYTES; i < lengthBytes; i++) {
            bytes[i] = (byte) i;
        }
        return bytes;
    }

    /** Whether a request asks for CPU work off the event loop ({@link #SPIN}). */
    public static boolean isSpin(byte[] request) {
        return request.length >= SPIN_HEADER_BYTES && responseBytesField(request) == SPIN;
    }

    /** The response length a request asks for. */
    public static int expectedResponseBytes(byte[] request) {
        int responseBytes = responseBytesField(request);
        return responseBytes == ECHO || responseBytes == SPIN || responseBytes == SPIN_INLINE ? request.length
                : responseBytes;
    }

    /** The header field of a request (not validated). */
    public static int responseBytesField(byte[] request) {
        return ((request[0] & 0xff) << 24) | ((request[1] & 0xff) << 16) | ((request[2] & 0xff) << 8) | (request[3] & 0xff);
    }

    /**
     * The server's answer to a request: the request itself for an echo, else a new zero-filled
     * array of the asked length. A spin request ({@link #SPIN}, {@link #SPIN_INLINE}) spins the
     * calling thread first ({@link Spin#cpuMicros}): call it for one only where the system runs
     * such work.
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
        if ((responseBytes == SPIN || responseBytes == SPIN_INLINE) && request.length >= SPIN_HEADER_BYTES) {
            Spin.cpuMicros(ByteBuffer.wrap(request).getInt(HEADER_BYTES));
            return request;
        }
        if (responseBytes < 1) {
            throw new IllegalArgumentException("request asks for " + responseBytes + " response bytes");
        }
        return new byte[responseBytes];
    }
}
