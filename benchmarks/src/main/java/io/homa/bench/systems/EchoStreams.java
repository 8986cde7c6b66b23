package io.homa.bench.systems;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The streaming calls of a system that has streams (S10), each the system's own streaming API as
 * an application would call it: Homa's RPC layer {@code HomaClient.stream} and
 * {@code HomaClient.channel}, gRPC's server-, client- and bidirectional-streaming methods with
 * its flow control, RSocket's {@code requestStream} and {@code requestChannel}. Each is lazy:
 * nothing is sent before subscription, and cancelling the subscription cancels the call. Every
 * stream honours its subscriber's demand; the bytes are {@link StreamProtocol}'s.
 */
public interface EchoStreams {
    /**
     * A server stream: the target sends {@code count} items of {@code itemBytes}
     * ({@link StreamProtocol#item}), no faster than the subscriber asks for them.
     *
     * @param target index of the server, 0..targets-1
     */
    Flux<byte[]> serverStream(int target, int itemBytes, long count);

    /**
     * A client stream: sends {@code chunks}, taking them from the source no faster than the system's
     * flow control lets it send, then completes with the number of bytes the server received.
     */
    Mono<Long> upload(int target, Publisher<byte[]> chunks);

    /** A bidirectional stream: sends {@code items}; the server answers each with the same bytes, in order. */
    Flux<byte[]> echo(int target, Publisher<byte[]> items);
}
