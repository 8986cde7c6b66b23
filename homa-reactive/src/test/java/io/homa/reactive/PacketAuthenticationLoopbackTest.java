package io.homa.reactive;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.EngineConfig;
import io.homa.engine.EngineCounters;
import io.homa.reactive.internal.transport.TransportProbes;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Packet authentication between real transports over loopback: RPCs complete
 * between endpoints that share a key, at loopback's MTU and at 1500 bytes with GSO; an endpoint
 * without the key is not heard (its datagrams are dropped and counted, its call fails with a
 * timeout); with encryption the payload is not on the wire in clear.
 */
class PacketAuthenticationLoopbackTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final int MIB = 1024 * 1024;
    private static final byte[] KEY = key(1);
    private static final byte[] OTHER_KEY = key(2);

    private final List<HomaTransport> transports = new ArrayList<>();

    @AfterEach
    void disposeTransports() {
        transports.forEach(HomaTransport::disposeNow);
    }

    private static byte[] key(int seed) {
        byte[] key = new byte[32];
        new Random(seed).nextBytes(key);
        return key;
    }

    private static HomaSecurityConfig security(HomaSecurityConfig.Mode mode, byte[] key) {
        return new HomaSecurityConfig(mode, Map.of(5, key), 5);
    }

    private HomaTransport bind(HomaTransportConfig.Builder config, boolean serve) {
        HomaTransport transport = HomaTransport.bindNow(config.build(),
                serve ? request -> Mono.just(request.payload().retain()) : null, TIMEOUT);
        transports.add(transport);
        return transport;
    }

    private static HomaTransportConfig.Builder loopback(HomaSecurityConfig security) {
        return HomaTransportConfig.builder().bindAddress("127.0.0.1").security(security);
    }

    /** A 1500-byte MTU with GSO (as the segmentation offload test forces it on loopback). */
    private static HomaTransportConfig.Builder ethernet(HomaSecurityConfig security) {
        return loopback(security).deviceMtu(false).engine(EngineConfig.builder().mtuBytes(1_500).build())
                .segmentationOffload(true);
    }

    /** Short timeouts: a call to a server that never hears us fails in about 100 ms. */
    private static EngineConfig fastTimeouts() {
        return EngineConfig.builder().resendIntervalNs(2_000_000L)
                .peerSilenceTimeoutNs(EngineConfig.MIN_PEER_SILENCE_TIMEOUT_NS).build();
    }

    private static InetSocketAddress address(HomaTransport transport) {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), transport.localAddress().getPort());
    }

    private static void assertEcho(HomaTransport client, HomaTransport server, int length, long seed) {
        byte[] request = new byte[length];
        new Random(seed).nextBytes(request);
        byte[] response = client.call(address(server), request).block(TIMEOUT);
        assertThat(response).as("echo of %d bytes", length).isEqualTo(request);
    }

    @ParameterizedTest
    @EnumSource(value = HomaSecurityConfig.Mode.class, names = {"AUTHENTICATE", "ENCRYPT"})
    void shouldCompleteRpcsBetweenEndpointsSharingAKey(HomaSecurityConfig.Mode mode) {
        HomaTransport server = bind(loopback(security(mode, KEY)), true);
        HomaTransport client = bind(loopback(security(mode, KEY)), false);
        assertThat(client.dataPath()).contains("packet authentication " + mode.propertyValue(), "key 5 sends");
        // loopback: 65,535 - 41, so that a sealed datagram is at most 65,507 bytes
        assertThat(client.dataPath()).contains("MTU 65494");

        assertEcho(client, server, 100, 1);
        assertEcho(client, server, MIB, 2);
        assertEcho(client, server, 100_000, 3);

        for (HomaTransport transport : List.of(client, server)) {
            assertThat(transport.unauthenticatedDatagrams()).isZero();
            assertThat(transport.replayedDatagrams()).isZero();
            assertThat(transport.counters().block(TIMEOUT).malformedPackets()).isZero();
        }
    }

    /** RTT_PROBE and RTT_RESPS are sealed and opened like every other packet: the sealer never reads a type. */
    @ParameterizedTest
    @EnumSource(value = HomaSecurityConfig.Mode.class, names = {"AUTHENTICATE", "ENCRYPT"})
    void shouldSealTheProbesOfRttCongestionControl(HomaSecurityConfig.Mode mode) {
        HomaTransport server = bind(loopback(security(mode, KEY)).congestionControl(io.homa.engine.CongestionControl.RTT)
                .rttProbeIntervalNs(10_000), true);
        HomaTransport client = bind(loopback(security(mode, KEY)).congestionControl(io.homa.engine.CongestionControl.RTT)
                .rttProbeIntervalNs(10_000), false);
        for (int i = 0; i < 10; i++) {
            assertEcho(client, server, 100 + i, i);
        }
        assertThat(client.counters().block(TIMEOUT).rttProbesAnswered()).isPositive();
        for (HomaTransport transport : List.of(client, server)) {
            assertThat(transport.unauthenticatedDatagrams()).isZero();
            assertThat(transport.counters().block(TIMEOUT).malformedPackets()).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(value = HomaSecurityConfig.Mode.class, names = {"AUTHENTICATE", "ENCRYPT"})
    void shouldCompleteRpcsAtFifteenHundredBytesWithGso(HomaSecurityConfig.Mode mode) {
        HomaTransport server = bind(ethernet(security(mode, KEY)), true);
        HomaTransport client = bind(ethernet(security(mode, KEY)), false);
        assertThat(client.dataPath()).as("1500 - 41").contains("MTU 1459");

        assertEcho(client, server, 100, 1);
        for (int i = 0; i < 4; i++) {
            assertEcho(client, server, MIB, 10 + i);
        }
        assertThat(server.unauthenticatedDatagrams()).isZero();
        assertThat(client.unauthenticatedDatagrams()).isZero();
        boolean gsoHere = TransportProbes.gsoSupported(client);
        if (gsoHere) {
            assertThat(client.dataPath()).contains("GSO on");
            long[] gso = TransportProbes.gsoCounters(client).block(TIMEOUT);
            assertThat(gso[1]).as("packets the client sent in GSO sends").isGreaterThan(1_000);
            long[] serverGso = TransportProbes.gsoCounters(server).block(TIMEOUT);
            assertThat(serverGso[1]).as("packets the server sent in GSO sends").isGreaterThan(1_000);
        }
    }

    @Test
    void shouldTalkToAServerBoundToTheWildcardAddress() {
        HomaSecurityConfig security = security(HomaSecurityConfig.Mode.ENCRYPT, KEY);
        HomaTransport server = bind(HomaTransportConfig.builder().bindAddress("0.0.0.0").security(security), true);
        HomaTransport client = bind(HomaTransportConfig.builder().bindAddress("0.0.0.0").security(security), false);
        assertEcho(client, server, 100, 1);
        assertEcho(client, server, 300_000, 2);
        assertThat(server.unauthenticatedDatagrams()).isZero();
    }

    @Test
    void shouldDropAndCountEveryDatagramOfAPeerWithoutAuthentication() {
        HomaTransport server = bind(loopback(security(HomaSecurityConfig.Mode.AUTHENTICATE, KEY)).engine(fastTimeouts()),
                true);
        HomaTransport plain = bind(loopback(HomaSecurityConfig.off()).engine(fastTimeouts()), false);

        StepVerifier.create(plain.call(address(server), new byte[100]))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(HomaTimeoutException.class))
                .verify(TIMEOUT);
        EngineCounters counters = server.counters().block(TIMEOUT);
        assertThat(server.unauthenticatedDatagrams()).as("first DATA and its retransmissions").isGreaterThanOrEqualTo(1);
        assertThat(counters.malformedPackets()).as("the engine never saw them").isZero();
        assertThat(counters.requestsDelivered()).isZero();
        assertThat(server.replayedDatagrams()).isZero();
    }

    @ParameterizedTest
    @EnumSource(value = HomaSecurityConfig.Mode.class, names = {"AUTHENTICATE", "ENCRYPT"})
    void shouldDropAndCountEveryDatagramOfAPeerWithAnotherKey(HomaSecurityConfig.Mode mode) {
        HomaTransport server = bind(loopback(security(mode, KEY)).engine(fastTimeouts()), true);
        HomaTransport stranger = bind(loopback(security(mode, OTHER_KEY)).engine(fastTimeouts()), false);

        StepVerifier.create(stranger.call(address(server), new byte[MIB]))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(HomaTimeoutException.class))
                .verify(TIMEOUT);
        assertThat(server.unauthenticatedDatagrams()).isGreaterThanOrEqualTo(1);
        assertThat(server.counters().block(TIMEOUT).requestsDelivered()).isZero();

        // and a client with the key is still served
        HomaTransport friend = bind(loopback(security(mode, KEY)), false);
        assertEcho(friend, server, 100, 1);
    }

    @Test
    void shouldNotAnswerAPlainServerWhenAuthenticationIsOn() {
        HomaTransport plainServer = bind(loopback(HomaSecurityConfig.off()).engine(fastTimeouts()), true);
        HomaTransport client = bind(loopback(security(HomaSecurityConfig.Mode.AUTHENTICATE, KEY)).engine(fastTimeouts()),
                false);
        StepVerifier.create(client.call(address(plainServer), new byte[100]))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(HomaException.class))
                .verify(TIMEOUT);
        assertThat(plainServer.counters().block(TIMEOUT).requestsDelivered())
                .as("a draft-only server drops what it sees as a malformed or foreign packet").isZero();
    }

    @ParameterizedTest
    @EnumSource(value = HomaSecurityConfig.Mode.class, names = {"AUTHENTICATE", "ENCRYPT"})
    void shouldKeepThePayloadOffTheWireOnlyWhenEncrypting(HomaSecurityConfig.Mode mode) throws Exception {
        byte[] marker = "the quick brown fox jumps over the lazy homa packet, in clear".getBytes(StandardCharsets.US_ASCII);
        byte[] request = new byte[4_000];
        for (int i = 0; i + marker.length <= request.length; i += marker.length) {
            System.arraycopy(marker, 0, request, i, marker.length);
        }
        List<byte[]> captured = new ArrayList<>();
        try (DatagramSocket wire = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            wire.setSoTimeout(300);
            HomaTransport client = bind(loopback(security(mode, KEY)).engine(fastTimeouts()), false);
            client.call(new InetSocketAddress(InetAddress.getLoopbackAddress(), wire.getLocalPort()), request)
                    .onErrorResume(e -> Mono.empty()).subscribe();
            byte[] buffer = new byte[65_535];
            while (true) {
                DatagramPacket datagram = new DatagramPacket(buffer, buffer.length);
                try {
                    wire.receive(datagram);
                } catch (SocketTimeoutException e) {
                    break;
                }
                captured.add(Arrays.copyOf(datagram.getData(), datagram.getLength()));
            }
        }
        assertThat(captured).isNotEmpty();
        boolean inClear = captured.stream().anyMatch(datagram -> indexOf(datagram, marker) >= 0);
        if (mode == HomaSecurityConfig.Mode.ENCRYPT) {
            assertThat(inClear).as("payload bytes on the wire").isFalse();
            assertThat(captured).allSatisfy(datagram -> assertThat(indexOf(datagram, Arrays.copyOf(marker, 16))).isNegative());
        } else {
            assertThat(inClear).as("authenticate leaves the payload readable").isTrue();
        }
        assertThat(captured).allSatisfy(datagram -> assertThat(datagram[datagram.length - 41]).as("key id").isEqualTo((byte) 5));
    }

    @Test
    void shouldCountNothingWhenAuthenticationIsOff() {
        HomaTransport server = bind(loopback(HomaSecurityConfig.off()), true);
        HomaTransport client = bind(loopback(HomaSecurityConfig.off()), false);
        assertThat(client.dataPath()).contains("packet authentication off", "MTU 65535");
        assertEcho(client, server, 100, 1);
        assertThat(server.unauthenticatedDatagrams()).isZero();
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
