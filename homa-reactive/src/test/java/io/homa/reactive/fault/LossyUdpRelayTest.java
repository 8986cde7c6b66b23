package io.homa.reactive.fault;

import static java.util.function.Predicate.isEqual;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The relay itself, with plain sockets: routing per client, port mirroring, and each fault. */
class LossyUdpRelayTest {
    private static final long FIFTY_MS_NS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final Duration WAIT = Duration.ofSeconds(10);

    private DatagramSocket server;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeEach
    void bindServer() throws IOException {
        server = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0));
        server.setSoTimeout(2_000);
        closeables.add(server);
    }

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable closeable : closeables) {
            closeable.close();
        }
    }

    private LossyUdpRelay relay(boolean mirrorPorts, LossyUdpRelay.Faults faults) throws IOException {
        LossyUdpRelay relay = LossyUdpRelay.start(
                (InetSocketAddress) server.getLocalSocketAddress(), "127.0.0.2", mirrorPorts, faults);
        closeables.add(0, relay);
        return relay;
    }

    private DatagramSocket client() throws IOException {
        DatagramSocket client = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0));
        client.setSoTimeout(2_000);
        closeables.add(client);
        return client;
    }

    private static void send(DatagramSocket from, InetSocketAddress to, int value) throws IOException {
        byte[] bytes = ByteBuffer.allocate(4).putInt(value).array();
        from.send(new DatagramPacket(bytes, bytes.length, to));
    }

    private static DatagramPacket receive(DatagramSocket socket) throws IOException {
        DatagramPacket packet = new DatagramPacket(new byte[64], 64);
        socket.receive(packet);
        return packet;
    }

    private static int value(DatagramPacket packet) {
        return ByteBuffer.wrap(packet.getData(), packet.getOffset(), packet.getLength()).getInt();
    }

    /** Receives until {@code socket} stays silent for {@code quietMs}. */
    private static List<Integer> receiveAll(DatagramSocket socket, int quietMs) throws IOException {
        socket.setSoTimeout(quietMs);
        List<Integer> values = new ArrayList<>();
        try {
            while (true) {
                values.add(value(receive(socket)));
            }
        } catch (SocketTimeoutException done) {
            return values;
        }
    }

    @Test
    void shouldRelayBothWaysWithOneMirroredSourcePerClient() throws Exception {
        LossyUdpRelay relay = relay(true, LossyUdpRelay.Faults.none(1));
        DatagramSocket first = client();
        DatagramSocket second = client();

        assertThat(relay.address()).isEqualTo(new InetSocketAddress("127.0.0.2", server.getLocalPort()));
        send(first, relay.address(), 1);
        DatagramPacket fromFirst = receive(server);
        send(second, relay.address(), 2);
        DatagramPacket fromSecond = receive(server);
        assertThat(value(fromFirst)).isEqualTo(1);
        assertThat(value(fromSecond)).isEqualTo(2);
        assertThat(fromFirst.getSocketAddress()).isEqualTo(new InetSocketAddress("127.0.0.2", first.getLocalPort()));
        assertThat(fromSecond.getSocketAddress()).isEqualTo(new InetSocketAddress("127.0.0.2", second.getLocalPort()));

        send(server, (InetSocketAddress) fromSecond.getSocketAddress(), 20);
        send(server, (InetSocketAddress) fromFirst.getSocketAddress(), 10);
        DatagramPacket toSecond = receive(second);
        DatagramPacket toFirst = receive(first);
        assertThat(value(toSecond)).isEqualTo(20);
        assertThat(value(toFirst)).isEqualTo(10);
        assertThat(toFirst.getSocketAddress()).isEqualTo(relay.address());
        // The relay counts a datagram just after sending it.
        await().atMost(WAIT).until(relay::counters, isEqual(new LossyUdpRelay.Counters(4, 4, 0, 0, 0, 0, 0)));
        assertThat(relay.failure()).isNull();
    }

    @Test
    void shouldTranslatePortsWithoutMirroring() throws IOException {
        LossyUdpRelay relay = relay(false, LossyUdpRelay.Faults.none(1));
        DatagramSocket client = client();

        send(client, relay.address(), 7);
        DatagramPacket atServer = receive(server);
        send(server, (InetSocketAddress) atServer.getSocketAddress(), 8);

        assertThat(relay.address().getPort()).isNotEqualTo(server.getLocalPort());
        assertThat(value(receive(client))).isEqualTo(8);
    }

    @Test
    void shouldDropEverythingAtDropRateOne() throws IOException {
        LossyUdpRelay relay = relay(true, new LossyUdpRelay.Faults(1, 1.0, 0, 0, 0, 0, 1));
        DatagramSocket client = client();

        for (int i = 0; i < 10; i++) {
            send(client, relay.address(), i);
        }

        assertThat(receiveAll(server, 200)).isEmpty();
        assertThat(relay.counters().dropped()).isEqualTo(10);
        assertThat(relay.counters().forwarded()).isZero();
    }

    @Test
    void shouldDeliverEveryDatagramTwiceAtDuplicateRateOne() throws IOException {
        LossyUdpRelay relay = relay(true, new LossyUdpRelay.Faults(1, 0, 1.0, 0, 0, 0, 1));
        DatagramSocket client = client();

        for (int i = 0; i < 10; i++) {
            send(client, relay.address(), i);
        }

        assertThat(receiveAll(server, 200)).hasSize(20).containsOnly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
        assertThat(relay.counters().duplicated()).isEqualTo(10);
        assertThat(relay.counters().forwarded()).isEqualTo(20);
    }

    @Test
    void shouldDelayEveryDatagramUpToTheMaximum() throws IOException {
        LossyUdpRelay relay = relay(true, new LossyUdpRelay.Faults(1, 0, 0, 1.0, FIFTY_MS_NS, 0, 1));
        DatagramSocket client = client();

        long startNs = System.nanoTime();
        for (int i = 0; i < 20; i++) {
            send(client, relay.address(), i);
        }
        List<Integer> values = receiveAll(server, 300);

        assertThat(values).containsExactlyInAnyOrder(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19);
        assertThat(values).as("uniform delays reorder").isNotEqualTo(values.stream().sorted().toList());
        assertThat(relay.counters().delayed()).isEqualTo(20);
        assertThat(System.nanoTime() - startNs).isLessThan(TimeUnit.SECONDS.toNanos(2));
    }

    @Test
    void shouldReorderWithoutLosingDatagrams() throws IOException {
        LossyUdpRelay relay = relay(true, new LossyUdpRelay.Faults(3, 0, 0, 0, 0, 0.2, 3));
        DatagramSocket client = client();
        List<Integer> sent = new ArrayList<>();

        for (int i = 0; i < 200; i++) {
            send(client, relay.address(), i);
            sent.add(i);
        }
        List<Integer> values = receiveAll(server, 300);

        assertThat(values).containsExactlyInAnyOrderElementsOf(sent).isNotEqualTo(sent);
        assertThat(relay.counters().reordered()).isPositive();
        // A held datagram comes out right after the next 3 of its flow that were not held:
        // exactly 3 later ones overtake it (fewer at the end of the stream), none overtake the others.
        int maxOvertaken = 0;
        for (int position = 0; position < values.size(); position++) {
            int value = values.get(position);
            int overtaken = (int) values.subList(0, position).stream().filter(v -> v > value).count();
            assertThat(overtaken).as("datagrams overtaking %d", value).isLessThanOrEqualTo(3);
            maxOvertaken = Math.max(maxOvertaken, overtaken);
        }
        assertThat(maxOvertaken).isEqualTo(3);
    }

    @Test
    void shouldRejectRatesOutOfRange() {
        assertThatThrownBy(() -> new LossyUdpRelay.Faults(1, 1.5, 0, 0, 0, 0, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("dropRate must be between 0 and 1, was 1.5");
        assertThatThrownBy(() -> new LossyUdpRelay.Faults(1, 0, 0, 0, 0, 0, 0))
                .hasMessage("reorderWindow must be between 1 and 1000, was 0");
        assertThatThrownBy(() -> new LossyUdpRelay.Faults(1, 0, 0, Double.NaN, 0, 0, 1))
                .hasMessage("delayRate must be between 0 and 1, was NaN");
    }
}
