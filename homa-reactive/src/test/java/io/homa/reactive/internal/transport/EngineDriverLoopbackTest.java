package io.homa.reactive.internal.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.netty.buffer.Unpooled;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/** The engine driver's duty cycle on a real transport over loopback UDP, datagrams handed in as a read hands them. */
class EngineDriverLoopbackTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private HomaTransport transport;

    @AfterEach
    void disposeTransport() {
        if (transport != null) {
            transport.disposeNow();
        }
    }

    private HomaTransport bind(HomaTransportConfig config) {
        transport = HomaTransport.bindNow(config, request -> Mono.just(request.payload().retain()), TIMEOUT);
        return transport;
    }

    private static InetSocketAddress address(HomaTransport transport) {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), transport.localAddress().getPort());
    }

    @Test
    void shouldSendGrantsOnceEnoughBytesArriveWithinOneRead() throws Exception {
        // Two datagrams of two long requests, over 64 KiB together, handed to the transport as one
        // read hands them (the loop drains a socket before channelReadComplete): the GRANTs they
        // call for leave after them, not after 64 datagrams or at the end of the read. With 64 KB
        // datagrams a socket holds milliseconds of reading, and senders would wait for GRANTs.
        // One loop: the test feeds the engine of the one socket.
        HomaTransport server = bind(HomaTransportConfig.builder().bindAddress("127.0.0.1").loops(1).build());
        InetSocketAddress serverAddress = address(server);
        try (DatagramSocket socket = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            socket.setSoTimeout((int) TIMEOUT.toMillis());
            InetSocketAddress sender = new InetSocketAddress(InetAddress.getLoopbackAddress(), socket.getLocalPort());
            List<ByteBuffer> datagrams = List.of(
                    firstData(socket.getLocalPort(), serverAddress.getPort(), 2, 60_000),
                    firstData(socket.getLocalPort(), serverAddress.getPort(), 4, 6_000));
            assertThat(datagrams.stream().mapToInt(ByteBuffer::remaining).sum())
                    .isGreaterThanOrEqualTo(EngineDriver.BYTES_PER_DRIVE);
            TransportProbes.eventLoop(server).submit(() -> {
                for (ByteBuffer datagram : datagrams) {
                    io.netty.channel.socket.DatagramPacket packet = new io.netty.channel.socket.DatagramPacket(
                            Unpooled.wrappedBuffer(datagram), serverAddress, sender);
                    try {
                        ((NettyHomaTransport) server).driver().onDatagram(packet);
                    } finally {
                        packet.release();
                    }
                }
            }).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);

            byte[] buffer = new byte[65_536];
            DatagramPacket answer = new DatagramPacket(buffer, buffer.length);
            socket.receive(answer); // fails the test with SocketTimeoutException after TIMEOUT
            assertThat(PacketType.fromCode(Byte.toUnsignedInt(buffer[HomaHeader.TYPE_OFFSET])))
                    .isEqualTo(PacketType.GRANT);
        }
    }

    /** The first DATA packet of a 1,000,000-byte request, {@code bytes} long, that many unscheduled. */
    private static ByteBuffer firstData(int sourcePort, int destPort, long rpcId, int bytes) {
        ByteBuffer data = ByteBuffer.allocate(DataHeader.HEADER_LENGTH + bytes);
        new DataHeader().wrap(data, 0)
                .writeCommon(PacketType.DATA, sourcePort, destPort, rpcId)
                .messageLength(1_000_000)
                .incoming(bytes)
                .dataOffset(0)
                .doff(DataHeader.DOFF);
        return data;
    }
}
