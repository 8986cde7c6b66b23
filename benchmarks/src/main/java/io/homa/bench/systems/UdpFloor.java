package io.homa.bench.systems;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The UDP floor: one datagram each way, {@code [long sequence][request]}, blocking
 * {@link DatagramChannel}s, a server thread that answers each datagram, a client thread that
 * matches answers by sequence number. No retransmission: a lost datagram is a failed call.
 */
final class UdpFloor {
    /** Largest UDP payload over IPv4 (65,507) minus the 8-byte sequence number. */
    static final int MAX_BODY_BYTES = 65_507 - Long.BYTES;
    private static final int SOCKET_BUFFER_BYTES = 4 * 1024 * 1024;

    private UdpFloor() {}

    private static DatagramChannel open(SystemSettings settings) throws IOException {
        DatagramChannel channel = DatagramChannel.open();
        channel.setOption(StandardSocketOptions.SO_RCVBUF, SOCKET_BUFFER_BYTES);
        channel.setOption(StandardSocketOptions.SO_SNDBUF, SOCKET_BUFFER_BYTES);
        channel.bind(settings.bindSocket(0));
        return channel;
    }

    static EchoServer startServer(SystemSettings settings) throws IOException {
        DatagramChannel channel = open(settings);
        Thread thread = new Thread(() -> {
            ByteBuffer in = ByteBuffer.allocateDirect(65_536);
            ByteBuffer out = ByteBuffer.allocateDirect(65_536);
            try {
                while (true) {
                    in.clear();
                    SocketAddress client = channel.receive(in);
                    in.flip();
                    int responseBytes = in.getInt(Long.BYTES);
                    if (responseBytes == EchoProtocol.ECHO) {
                        channel.send(in, client);
                    } else {
                        out.clear();
                        out.putLong(in.getLong(0));
                        out.put(new byte[Math.min(responseBytes, MAX_BODY_BYTES)]);
                        out.flip();
                        channel.send(out, client);
                    }
                }
            } catch (ClosedChannelException e) {
                // closed: done
            } catch (IOException e) {
                System.err.println("udp floor server: " + e);
            }
        }, "udp-floor-server");
        thread.setDaemon(true);
        thread.start();
        int port = ((InetSocketAddress) channel.getLocalAddress()).getPort();
        return new EchoServer() {
            @Override
            public int port() {
                return port;
            }

            @Override
            public void close() {
                try {
                    channel.close();
                } catch (IOException e) {
                    // ignore
                }
            }
        };
    }

    static EchoClient connect(List<InetSocketAddress> targets, SystemSettings settings) throws IOException {
        DatagramChannel channel = open(settings);
        InetSocketAddress[] servers = targets.toArray(InetSocketAddress[]::new);
        Map<Long, CompletableFuture<byte[]>> pending = new ConcurrentHashMap<>();
        AtomicLong sequence = new AtomicLong();
        ByteBuffer out = ByteBuffer.allocateDirect(65_536);
        Thread reader = new Thread(() -> {
            ByteBuffer in = ByteBuffer.allocateDirect(65_536);
            try {
                while (true) {
                    in.clear();
                    channel.receive(in);
                    in.flip();
                    CompletableFuture<byte[]> call = pending.remove(in.getLong());
                    if (call != null) {
                        byte[] body = new byte[in.remaining()];
                        in.get(body);
                        call.complete(body);
                    }
                }
            } catch (ClosedChannelException e) {
                // closed: done
            } catch (IOException e) {
                System.err.println("udp floor client: " + e);
            }
        }, "udp-floor-client");
        reader.setDaemon(true);
        reader.start();
        return new EchoClient() {
            @Override
            public CompletableFuture<byte[]> call(int target, byte[] request) {
                CompletableFuture<byte[]> result = new CompletableFuture<>();
                if (request.length > MAX_BODY_BYTES) {
                    result.completeExceptionally(new IllegalArgumentException(
                            "the UDP floor carries at most " + MAX_BODY_BYTES + " bytes, asked " + request.length));
                    return result;
                }
                long id = sequence.incrementAndGet();
                pending.put(id, result);
                result.whenComplete((value, error) -> pending.remove(id));
                try {
                    synchronized (out) {
                        out.clear();
                        out.putLong(id).put(request).flip();
                        channel.send(out, servers[target]);
                    }
                } catch (IOException e) {
                    result.completeExceptionally(e);
                }
                return result;
            }

            @Override
            public int targets() {
                return servers.length;
            }

            @Override
            public void close() {
                try {
                    channel.close();
                } catch (IOException e) {
                    // ignore
                }
            }
        };
    }
}
