package io.homa.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.EngineCounters;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The demo's echo server survives garbage datagrams, drops and counts them, and keeps serving. */
class EchoServerMalformedDatagramTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private HomaTransport server;
    private HomaTransport client;

    @BeforeEach
    void bind() {
        HomaTransportConfig loopback = HomaTransportConfig.builder().bindAddress("127.0.0.1").port(0).build();
        server = HomaTransport.bindNow(loopback, DemoRunner.ECHO, TIMEOUT);
        client = HomaTransport.bindNow(loopback, null, TIMEOUT);
    }

    @AfterEach
    void dispose() {
        client.disposeNow(TIMEOUT);
        server.disposeNow(TIMEOUT);
    }

    @Test
    void shouldDropAndCountMalformedDatagramsAndStillEcho() throws Exception {
        InetSocketAddress serverAddress = server.localAddress();
        long malformedBefore = server.counters().block(TIMEOUT).malformedPackets();

        try (DatagramSocket socket = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            int sport = socket.getLocalPort();
            int dport = serverAddress.getPort();
            List<byte[]> garbage = List.of(
                    new byte[0],
                    new byte[10],
                    commonHeader(28, sport, dport, 99, 2).array(),
                    dataDeclaring(1 << 30, sport, dport));
            for (byte[] datagram : garbage) {
                socket.send(new DatagramPacket(datagram, datagram.length, serverAddress));
            }
        }

        byte[] request = "still echoing after garbage".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        assertThat(client.call(serverAddress, request).block(TIMEOUT)).isEqualTo(request);
        EngineCounters counters = server.counters().block(TIMEOUT);
        assertThat(counters.malformedPackets() - malformedBefore).as("counters: %s", counters).isEqualTo(4);
        assertThat(counters.requestsDelivered()).isEqualTo(1);
    }

    /** A packet of {@code lengthBytes} starting with a common header (big-endian, draft layout). */
    private static ByteBuffer commonHeader(int lengthBytes, int sport, int dport, int type, long rpcId) {
        ByteBuffer packet = ByteBuffer.allocate(lengthBytes);
        packet.putShort(0, (short) sport);
        packet.putShort(2, (short) dport);
        packet.put(11, (byte) type);
        packet.put(12, (byte) ((56 / 4) << 4));
        packet.putLong(20, rpcId);
        return packet;
    }

    /** A DATA packet (type 16) with 100 payload bytes that declares a message of {@code messageLength}. */
    private static byte[] dataDeclaring(int messageLength, int sport, int dport) {
        ByteBuffer packet = commonHeader(56 + 100, sport, dport, 16, 2);
        packet.putInt(28, messageLength); // message length
        packet.putInt(32, 100); // incoming
        packet.putInt(52, 0); // offset of the payload in the message
        return packet.array();
    }
}
