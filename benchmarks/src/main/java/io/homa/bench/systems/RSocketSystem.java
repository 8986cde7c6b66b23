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
        CloseableChannel channel = RSocketServer.create(SocketAcceptor.forRequestResponse(
                        request -> Mono.just(DefaultPayload.create(EchoProtocol.respond(bytes(request))))))
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

    static EchoClient connect(List<InetSocketAddress> servers) {
        RSocket[] sockets = servers.stream()
                .map(server -> RSocketConnector.create()
                        .connect(TcpClientTransport.create(server))
                        .block(CONNECT_TIMEOUT))
                .toArray(RSocket[]::new);
        return new EchoClient() {
            @Override
            public CompletableFuture<byte[]> call(int target, byte[] request) {
                return sockets[target].requestResponse(DefaultPayload.create(request))
                        .map(RSocketSystem::bytes)
                        .toFuture();
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
