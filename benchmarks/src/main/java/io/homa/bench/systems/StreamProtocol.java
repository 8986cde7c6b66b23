package io.homa.bench.systems;

import java.nio.ByteBuffer;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What every system's streaming methods carry in S10, so that all systems move the same bytes:
 *
 * <ul>
 *   <li>a server stream is asked for with {@code [int itemBytes][long count]} (big-endian) and
 *       answers with {@code count} items, each the shared {@link #item(int)} of {@code itemBytes};
 *   <li>a client stream (upload) sends chunks and is answered with one {@code long}: the bytes the
 *       server received ({@link #totalBytes(long)} on the byte-array systems);
 *   <li>a bidirectional stream is answered with each item it receives, in order.
 * </ul>
 *
 * <p>The servers take items only as their consumers ask for them: a server's upload consumer asks
 * for {@value #UPLOAD_PREFETCH} chunks at a time where the system lets the method set its demand
 * (Homa's RPC layer and RSocket, Reactor's {@code limitRate}); gRPC's stub requests one message at
 * a time under its HTTP/2 window.
 */
public final class StreamProtocol {
    /** Length of a server stream's request. */
    public static final int REQUEST_BYTES = 12;
    /** Chunks a server's upload consumer asks for at a time: 16 x 64 KiB = 1 MiB, gRPC's default window. */
    public static final int UPLOAD_PREFETCH = 16;

    private StreamProtocol() {}

    /**
     * A server stream's request.
     *
     * @param itemBytes each item's length, {@value EchoProtocol#HEADER_BYTES}..2^31-1
     * @param count items, at least 0
     * @throws IllegalArgumentException out of those ranges
     */
    public static byte[] request(int itemBytes, long count) {
        if (itemBytes < EchoProtocol.HEADER_BYTES) {
            throw new IllegalArgumentException("items must be at least " + EchoProtocol.HEADER_BYTES + " bytes, was " + itemBytes);
        }
        if (count < 0) {
            throw new IllegalArgumentException("count must be at least 0, was " + count);
        }
        return ByteBuffer.allocate(REQUEST_BYTES).putInt(itemBytes).putLong(count).array();
    }

    /** The item length a server stream's request asks for. */
    public static int itemBytes(byte[] request) {
        check(request);
        return ByteBuffer.wrap(request).getInt(0);
    }

    /** The number of items a server stream's request asks for. */
    public static long count(byte[] request) {
        check(request);
        return ByteBuffer.wrap(request).getLong(4);
    }

    private static void check(byte[] request) {
        if (request.length != REQUEST_BYTES) {
            throw new IllegalArgumentException("a stream request has " + REQUEST_BYTES + " bytes, not " + request.length);
        }
    }

    /** The shared item of {@code itemBytes} every server stream sends (an echo request's bytes). Do not modify it. */
    public static byte[] item(int itemBytes) {
        return EchoProtocol.echoRequest(itemBytes);
    }

    /** The items a request asks for, as fast as the subscriber's demand allows (and no faster). */
    public static Flux<byte[]> items(byte[] request) {
        byte[] item = item(itemBytes(request));
        long count = count(request);
        return Flux.generate(() -> 0L, (sent, sink) -> {
            if (sent >= count) {
                sink.complete();
            } else {
                sink.next(item);
            }
            return sent + 1;
        });
    }

    /** A server's upload consumer: the bytes of every chunk, asking for {@value #UPLOAD_PREFETCH} chunks at a time. */
    public static Mono<Long> receive(Publisher<byte[]> chunks) {
        return Flux.from(chunks).limitRate(UPLOAD_PREFETCH).reduce(0L, (total, chunk) -> total + chunk.length);
    }

    /** An upload's answer on the byte-array systems: 8 bytes, big-endian. */
    public static byte[] totalBytes(long total) {
        return ByteBuffer.allocate(Long.BYTES).putLong(total).array();
    }

    /** The total of an upload's answer. */
    public static long totalBytes(byte[] answer) {
        if (answer.length != Long.BYTES) {
            throw new IllegalArgumentException("an upload's answer has 8 bytes, not " + answer.length);
        }
        return ByteBuffer.wrap(answer).getLong();
    }
}
