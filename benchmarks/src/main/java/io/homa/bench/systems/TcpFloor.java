package io.homa.bench.systems;

import java.net.InetSocketAddress;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The TCP floor: frames {@code [int length][long sequence][body]} on one blocking socket per
 * server (TCP_NODELAY), a server thread per connection answering in order (blocking I/O), one
 * non-blocking selector thread on the client (so a callback that sends never blocks on a full
 * socket). Calls on one connection are pipelined, so a long message delays the ones
 * behind it, as on any single TCP stream.
 */
final class TcpFloor {
    private static final int BUFFER_BYTES = 64 * 1024;
    private static final int FRAME_HEADER_BYTES = Integer.BYTES + Long.BYTES;

    private TcpFloor() {}

    static EchoServer startServer(SystemSettings settings) throws IOException {
        ServerSocket listener = new ServerSocket(0, 50, settings.bindAddress());
        List<Socket> connections = new CopyOnWriteArrayList<>();
        Thread acceptor = new Thread(() -> {
            try {
                while (true) {
                    Socket socket = listener.accept();
                    socket.setTcpNoDelay(true);
                    connections.add(socket);
                    Thread worker = new Thread(() -> serve(socket), "tcp-floor-server-conn");
                    worker.setDaemon(true);
                    worker.start();
                }
            } catch (IOException e) {
                // closed: done
            }
        }, "tcp-floor-acceptor");
        acceptor.setDaemon(true);
        acceptor.start();
        return new EchoServer() {
            @Override
            public int port() {
                return listener.getLocalPort();
            }

            @Override
            public void close() {
                try {
                    listener.close();
                    for (Socket socket : connections) {
                        socket.close();
                    }
                } catch (IOException e) {
                    // ignore
                }
            }
        };
    }

    private static void serve(Socket socket) {
        try (socket;
                DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), BUFFER_BYTES));
                DataOutputStream out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream(), BUFFER_BYTES))) {
            while (true) {
                int length = in.readInt();
                long sequence = in.readLong();
                byte[] request = new byte[length];
                in.readFully(request);
                byte[] response = EchoProtocol.respond(request);
                out.writeInt(response.length);
                out.writeLong(sequence);
                out.write(response);
                out.flush();
            }
        } catch (EOFException | SocketException e) {
            // client left
        } catch (IOException e) {
            System.err.println("tcp floor server: " + e);
        }
    }

    /** One client connection: non-blocking, served by the client's selector thread. */
    private static final class Connection {
        final SocketChannel channel;
        final ArrayDeque<ByteBuffer[]> queue = new ArrayDeque<>(); // guarded by this
        final ByteBuffer header = ByteBuffer.allocate(FRAME_HEADER_BYTES);
        @Nullable SelectionKey key;
        byte @Nullable [] body;
        int bodyPosition;
        long sequence;

        Connection(InetSocketAddress server) throws IOException {
            channel = SocketChannel.open(server);
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            channel.configureBlocking(false);
        }

        /** Writes now when nothing is queued and the socket takes it all; queues the rest for the selector. */
        synchronized void send(long id, byte[] request, Selector selector) throws IOException {
            ByteBuffer[] frame = {ByteBuffer.allocate(FRAME_HEADER_BYTES).putInt(request.length).putLong(id).flip(),
                    ByteBuffer.wrap(request)};
            if (queue.isEmpty()) {
                channel.write(frame);
                if (!frame[1].hasRemaining()) {
                    return;
                }
            }
            queue.add(frame);
            key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
            selector.wakeup();
        }

        synchronized void flushQueue() throws IOException {
            while (!queue.isEmpty()) {
                ByteBuffer[] frame = queue.peek();
                channel.write(frame);
                if (frame[1].hasRemaining()) {
                    return;
                }
                queue.poll();
            }
            key.interestOps(SelectionKey.OP_READ);
        }

        /** Parses frames from {@code in} (flipped), completing calls. */
        void parse(ByteBuffer in, Map<Long, CompletableFuture<byte[]>> pending) {
            while (in.hasRemaining()) {
                if (body == null) {
                    while (header.hasRemaining() && in.hasRemaining()) {
                        header.put(in.get());
                    }
                    if (header.hasRemaining()) {
                        return;
                    }
                    header.flip();
                    body = new byte[header.getInt()];
                    sequence = header.getLong();
                    header.clear();
                    bodyPosition = 0;
                } else {
                    int count = Math.min(in.remaining(), body.length - bodyPosition);
                    in.get(body, bodyPosition, count);
                    bodyPosition += count;
                }
                if (bodyPosition == body.length) {
                    CompletableFuture<byte[]> call = pending.remove(sequence);
                    byte[] done = body;
                    body = null;
                    if (call != null) {
                        call.complete(done);
                    }
                }
            }
        }
    }

    private static void runSelector(Selector selector, Map<Long, CompletableFuture<byte[]>> pending) {
        ByteBuffer in = ByteBuffer.allocateDirect(256 * 1024);
        try {
            while (selector.isOpen()) {
                selector.select();
                if (!selector.isOpen()) {
                    return;
                }
                for (SelectionKey key : selector.selectedKeys()) {
                    Connection connection = (Connection) key.attachment();
                    if (key.isValid() && key.isWritable()) {
                        connection.flushQueue();
                    }
                    if (key.isValid() && key.isReadable()) {
                        in.clear();
                        if (connection.channel.read(in) < 0) {
                            key.cancel();
                            continue;
                        }
                        in.flip();
                        connection.parse(in, pending);
                    }
                }
                selector.selectedKeys().clear();
            }
        } catch (IOException | java.nio.channels.ClosedSelectorException e) {
            // closed: done
        }
    }

    static EchoClient connect(List<InetSocketAddress> servers) throws IOException {
        Map<Long, CompletableFuture<byte[]>> pending = new ConcurrentHashMap<>();
        Selector selector = Selector.open();
        List<Connection> connections = new ArrayList<>();
        for (InetSocketAddress server : servers) {
            Connection connection = new Connection(server);
            connection.key = connection.channel.register(selector, SelectionKey.OP_READ, connection);
            connections.add(connection);
        }
        Thread loop = new Thread(() -> runSelector(selector, pending), "tcp-floor-client");
        loop.setDaemon(true);
        loop.start();
        AtomicLong sequence = new AtomicLong();
        return new EchoClient() {
            @Override
            public CompletableFuture<byte[]> call(int target, byte[] request) {
                CompletableFuture<byte[]> result = new CompletableFuture<>();
                long id = sequence.incrementAndGet();
                pending.put(id, result);
                result.whenComplete((value, error) -> pending.remove(id));
                try {
                    connections.get(target).send(id, request, selector);
                } catch (IOException | RuntimeException e) {
                    result.completeExceptionally(e);
                }
                return result;
            }

            @Override
            public int targets() {
                return connections.size();
            }

            @Override
            public void close() {
                try {
                    selector.close();
                    for (Connection connection : connections) {
                        connection.channel.close();
                    }
                } catch (IOException e) {
                    // ignore
                }
            }
        };
    }
}
