package io.homa.bench.systems;

import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.SocketAcceptor;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.transport.netty.client.TcpClientTransport;
import io.rsocket.transport.netty.server.CloseableChannel;
import io.rsocket.transport.netty.server.TcpServerTransport;
import io.rsocket.util.DefaultPayload;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * RSocket-java over its TCP transport (Reactor Netty), request-response, default payload decoder;
 * S10's streams are {@code requestStream} and {@code requestChannel} on the same connection.
 */
final class RSocketSystem {
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /** Metadata of a channel's first payload that makes it S10's upload; any other channel is the echo. */
    static final String UPLOAD = "upload";
    /** Metadata of the echo channel's first payload. */
    static final String ECHO = "echo";

    private RSocketSystem() {}

    static byte[] bytes(Payload payload) {
        try {
            ByteBuffer data = payload.getData();
            byte[] bytes = new byte[data.remaining()];
            data.get(bytes);
            return bytes;
        } finally {
            payload.release();
        }
    }

    static EchoServer startServer(SystemSettings settings) {
        RSocket handler = new RSocket() {
            @Override
            public Mono<Payload> requestResponse(Payload request) {
                byte[] bytes = bytes(request);
                if (EchoProtocol.isSpin(bytes)) {
                    // S11: CPU work the way Reactor hands blocking work off the event loop; a
                    // call the client cancels (its timeout) before the work starts is not run.
                    return Mono.fromCallable(() -> DefaultPayload.create(EchoProtocol.respond(bytes)))
                            .subscribeOn(CpuPool.scheduler());
                }
                return Mono.just(DefaultPayload.create(EchoProtocol.respond(bytes)));
            }

            @Override
            public Flux<Payload> requestStream(Payload request) {
                // S10's server stream: items as fast as the requester's REQUEST_N frames allow.
                return StreamProtocol.items(bytes(request)).map(DefaultPayload::create);
            }

            @Override
            public Flux<Payload> requestChannel(Publisher<Payload> payloads) {
                // S10's client and bidirectional streams, told apart by the first payload's metadata.
                return Flux.from(payloads).switchOnFirst((first, all) -> {
                    Payload head = first.get();
                    boolean upload = head != null && head.hasMetadata() && UPLOAD.equals(head.getMetadataUtf8());
                    Flux<byte[]> items = all.map(RSocketSystem::bytes);
                    return upload
                            ? StreamProtocol.receive(items).map(total -> DefaultPayload.create(StreamProtocol.totalBytes(total))).flux()
                            : items.map(DefaultPayload::create);
                });
            }
        };
        CloseableChannel channel = RSocketServer.create(SocketAcceptor.with(handler))
                .bind(TcpServerTransport.create(settings.bindHost(), 0))
                .block(CONNECT_TIMEOUT);
        if (channel == null) {
            throw new IllegalStateException("RSocket server did not bind");
        }
        return new EchoServer() {
            @Override
            public int port() {
                return channel.address().getPort();
            }

            @Override
            public void close() {
                channel.dispose();
                channel.onClose().block(Duration.ofSeconds(5));
            }
        };
    }

    /** A channel's payloads: {@code kind} in the first one's metadata (RSocket routes on metadata). */
    private static Flux<Payload> channel(Publisher<byte[]> items, String kind) {
        return Flux.from(items).index((index, item) -> index == 0 ? DefaultPayload.create(item, kind.getBytes(
                java.nio.charset.StandardCharsets.UTF_8)) : DefaultPayload.create(item));
    }

    private static Mono<RSocket> connector(InetSocketAddress server) {
        return RSocketConnector.create().connect(TcpClientTransport.create(server));
    }

    /**
     * One connection per server, each call on it directly. A connection that closed (seen once in
     * a full run: ClosedChannelException during S5's W3, after which every later call to that
     * server failed at once, and S6 timed those failures) is replaced on the next call to its
     * server, as an application's RSocketClient with reconnect would; the calls made while it
     * reconnects wait for it. Said on standard error, since the run's later figures follow it.
     */
    static EchoClient connect(List<InetSocketAddress> servers) {
        RSocket[] sockets = servers.stream()
                .map(server -> connector(server).block(CONNECT_TIMEOUT))
                .toArray(RSocket[]::new);
        @SuppressWarnings("unchecked")
        Mono<RSocket>[] reconnecting = new Mono[sockets.length];
        return new EchoClient() {
            @Override
            public CompletableFuture<byte[]> call(int target, byte[] request) {
                return response(target, request).toFuture();
            }

            @Override
            public CompletableFuture<byte[]> call(int target, byte[] request, long timeoutMs) {
                // RSocket carries no deadline: the timeout cancels the request (a CANCEL frame).
                return response(target, request).timeout(Duration.ofMillis(timeoutMs)).toFuture();
            }

            private Mono<byte[]> response(int target, byte[] request) {
                return socket(target).flatMap(s -> s.requestResponse(DefaultPayload.create(request)))
                        .map(RSocketSystem::bytes);
            }

            private Mono<RSocket> socket(int target) {
                RSocket socket = sockets[target];
                return socket.isDisposed() ? reconnect(target) : Mono.just(socket);
            }

            @Override
            public EchoStreams streams() {
                return streams;
            }

            private final EchoStreams streams = new EchoStreams() {
                @Override
                public Flux<byte[]> serverStream(int target, int itemBytes, long count) {
                    byte[] request = StreamProtocol.request(itemBytes, count);
                    return socket(target).flatMapMany(s -> s.requestStream(DefaultPayload.create(request)))
                            .map(RSocketSystem::bytes);
                }

                @Override
                public Mono<Long> upload(int target, Publisher<byte[]> chunks) {
                    return socket(target).flatMapMany(s -> s.requestChannel(channel(chunks, UPLOAD)))
                            .map(RSocketSystem::bytes)
                            .single()
                            .map(StreamProtocol::totalBytes);
                }

                @Override
                public Flux<byte[]> echo(int target, Publisher<byte[]> items) {
                    return socket(target).flatMapMany(s -> s.requestChannel(channel(items, ECHO)))
                            .map(RSocketSystem::bytes);
                }
            };

            private synchronized Mono<RSocket> reconnect(int target) {
                if (!sockets[target].isDisposed()) {
                    return Mono.just(sockets[target]);
                }
                if (reconnecting[target] == null) {
                    System.err.println("rsocket: the connection to " + servers.get(target) + " closed; reconnecting");
                    reconnecting[target] = connector(servers.get(target))
                            .doOnNext(s -> {
                                synchronized (this) {
                                    sockets[target] = s;
                                    reconnecting[target] = null;
                                }
                            })
                            .doOnError(e -> {
                                synchronized (this) {
                                    reconnecting[target] = null;
                                }
                            })
                            .cache();
                }
                return reconnecting[target];
            }

            @Override
            public int targets() {
                return sockets.length;
            }

            @Override
            public void close() {
                for (RSocket socket : sockets) {
                    socket.dispose();
                }
            }
        };
    }
}
