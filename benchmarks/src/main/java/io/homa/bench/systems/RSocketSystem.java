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
import reactor.core.publisher.Mono;

/** RSocket-java over its TCP transport (Reactor Netty), request-response, default payload decoder. */
final class RSocketSystem {
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

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
        CloseableChannel channel = RSocketServer.create(SocketAcceptor.forRequestResponse(request -> {
                    byte[] bytes = bytes(request);
                    if (EchoProtocol.isSpin(bytes)) {
                        // S11: CPU work the way Reactor hands blocking work off the event loop; a
                        // call the client cancels (its timeout) before the work starts is not run.
                        return Mono.fromCallable(() -> DefaultPayload.create(EchoProtocol.respond(bytes)))
                                .subscribeOn(CpuPool.scheduler());
                    }
                    return Mono.just(DefaultPayload.create(EchoProtocol.respond(bytes)));
                }))
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
                RSocket socket = sockets[target];
                Mono<Payload> response = socket.isDisposed()
                        ? reconnect(target).flatMap(s -> s.requestResponse(DefaultPayload.create(request)))
                        : socket.requestResponse(DefaultPayload.create(request));
                return response.map(RSocketSystem::bytes);
            }

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
