package io.homa.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.homa.engine.EngineCounters;
import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The demo's echo server keeps answering a well-behaved client while another socket floods it
 * with 20,000 seeded garbage datagrams: random bytes, headers of random and valid Homa types
 * (16..24) with random fields, and valid DATA packets with a few bytes flipped.
 */
class EchoServerRandomDatagramFloodTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final int FLOOD_DATAGRAMS = 20_000;
    private static final int MAX_FLOOD_BYTES = 200;
    private static final int MIN_RPCS = 200;

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
    void shouldKeepEchoingWhileFloodedWithRandomAndMutatedDatagrams() throws Exception {
        InetSocketAddress serverAddress = server.localAddress();
        long malformedBefore = server.counters().block(TIMEOUT).malformedPackets();
        long floodBefore = floodPacketsRead();
        AtomicBoolean floodDone = new AtomicBoolean();
        AtomicInteger rpcsDuringFlood = new AtomicInteger();
        List<String> failures = Collections.synchronizedList(new ArrayList<>());

        CompletableFuture<Integer> flood = CompletableFuture.supplyAsync(() -> {
            try {
                return flood(serverAddress);
            } finally {
                floodDone.set(true);
            }
        });
        Random sizes = new Random(7);
        long answered = Flux.range(0, Integer.MAX_VALUE)
                .takeWhile(i -> i < MIN_RPCS || !floodDone.get())
                .map(i -> new byte[1 + sizes.nextInt(3_000)])
                .flatMap(request -> {
                    new Random(request.length).nextBytes(request);
                    return client.call(serverAddress, request)
                            .doOnNext(response -> {
                                if (!floodDone.get()) {
                                    rpcsDuringFlood.incrementAndGet();
                                }
                                if (!Arrays.equals(response, request)) {
                                    failures.add("wrong response of " + response.length + " B to " + request.length + " B");
                                }
                            })
                            .onErrorResume(e -> {
                                failures.add(request.length + " B: " + e);
                                return Mono.empty();
                            });
                }, 8)
                .count()
                .block(Duration.ofSeconds(30));
        int sent = flood.get(30, TimeUnit.SECONDS);

        EngineCounters counters = server.counters().block(TIMEOUT);
        System.out.printf("Flood: %,d datagrams; %,d RPCs (%,d during the flood), %d failed; server malformed=%,d"
                        + " requestsDelivered=%,d (the rest from the flood) needAcksSent=%,d resendsSent=%,d%n",
                sent, answered, rpcsDuringFlood.get(), failures.size(), counters.malformedPackets() - malformedBefore,
                counters.requestsDelivered(), counters.packetsSent(PacketType.NEED_ACK), counters.resendsSent());
        // The flood reached the server's engine (loopback may drop a few datagrams from a full buffer).
        await().atMost(Duration.ofSeconds(30))
                .until(() -> floodPacketsRead() - floodBefore >= FLOOD_DATAGRAMS - FLOOD_DATAGRAMS / 20);
        assertThat(failures).as("server %s", counters).isEmpty();
        assertThat(answered).isGreaterThanOrEqualTo(MIN_RPCS);
        assertThat(rpcsDuringFlood).as("RPCs answered while the flood ran").hasPositiveValue();
        assertThat(counters.malformedPackets() - malformedBefore).as("server %s", counters).isPositive();
        byte[] after = "still echoing".getBytes(StandardCharsets.US_ASCII);
        assertThat(client.call(serverAddress, after).block(TIMEOUT)).isEqualTo(after);
    }

    /**
     * Datagrams the server read that the client did not send: the server's engine counts each
     * packet it is handed as received or malformed, and the transport those it drops before.
     */
    private long floodPacketsRead() {
        EngineCounters read = server.counters().block(TIMEOUT);
        EngineCounters sent = client.counters().block(TIMEOUT);
        long total = read.malformedPackets() + server.droppedDatagrams();
        for (PacketType type : PacketType.values()) {
            total += read.packetsReceived(type) - sent.packetsSent(type);
        }
        return total;
    }

    /** Sends the garbage, paced to about 2 s so it overlaps the RPCs; returns how many were sent. */
    private static int flood(InetSocketAddress serverAddress) {
        Random random = new Random(20_240_601L);
        try (DatagramSocket socket = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            int sport = socket.getLocalPort();
            for (int i = 0; i < FLOOD_DATAGRAMS; i++) {
                byte[] datagram = switch (i % 3) {
                    case 0 -> randomBytes(random, random.nextInt(MAX_FLOOD_BYTES + 1));
                    case 1 -> randomHeader(random, sport, serverAddress.getPort());
                    default -> mutatedData(random, sport, serverAddress.getPort());
                };
                socket.send(new DatagramPacket(datagram, datagram.length, serverAddress));
                if (i % 20 == 19) {
                    Thread.sleep(1); // real time: the flood is to last while RPCs run
                }
            }
            return FLOOD_DATAGRAMS;
        } catch (Exception e) {
            throw new IllegalStateException("flood failed", e);
        }
    }

    private static byte[] randomBytes(Random random, int length) {
        byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    /** Random bytes with a common header's ports, type (usually a valid one) and doff filled in. */
    private static byte[] randomHeader(Random random, int sport, int dport) {
        byte[] bytes = randomBytes(random, random.nextInt(MAX_FLOOD_BYTES + 1));
        if (bytes.length < HomaHeader.COMMON_HEADER_LENGTH) {
            return bytes;
        }
        ByteBuffer packet = ByteBuffer.wrap(bytes);
        packet.putShort(HomaHeader.SOURCE_PORT_OFFSET, (short) sport);
        packet.putShort(HomaHeader.DEST_PORT_OFFSET, (short) dport);
        packet.put(HomaHeader.TYPE_OFFSET, (byte) (random.nextInt(4) == 0 ? random.nextInt(256) : 16 + random.nextInt(9)));
        packet.put(HomaHeader.DOFF_OFFSET, (byte) ((DataHeader.HEADER_LENGTH / 4) << 4));
        return bytes;
    }

    /** A well-formed one-packet request (DATA, type 16) with one to four random bytes changed. */
    private static byte[] mutatedData(Random random, int sport, int dport) {
        int payloadBytes = 1 + random.nextInt(MAX_FLOOD_BYTES - DataHeader.HEADER_LENGTH);
        ByteBuffer packet = ByteBuffer.allocate(DataHeader.HEADER_LENGTH + payloadBytes);
        packet.putShort(HomaHeader.SOURCE_PORT_OFFSET, (short) sport);
        packet.putShort(HomaHeader.DEST_PORT_OFFSET, (short) dport);
        packet.put(HomaHeader.TYPE_OFFSET, (byte) 16);
        packet.put(HomaHeader.DOFF_OFFSET, (byte) ((DataHeader.HEADER_LENGTH / 4) << 4));
        packet.putLong(HomaHeader.RPC_ID_OFFSET, 2L * (1 + random.nextInt(1_000_000)));
        packet.putInt(DataHeader.MESSAGE_LENGTH_OFFSET, payloadBytes);
        packet.putInt(DataHeader.INCOMING_OFFSET, payloadBytes);
        byte[] bytes = packet.array();
        for (int flips = 1 + random.nextInt(4); flips > 0; flips--) {
            bytes[random.nextInt(bytes.length)] ^= (byte) (1 + random.nextInt(255));
        }
        return bytes;
    }
}
