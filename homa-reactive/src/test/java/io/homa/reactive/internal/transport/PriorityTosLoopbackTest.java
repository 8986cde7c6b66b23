package io.homa.reactive.internal.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.reactive.HomaRequestHandler;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.netty.channel.socket.DatagramChannel;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Priorities in the IP TOS byte over real loopback sockets: long and short RPCs at once make the
 * engines emit packets at several priorities (GRANTs and other control packets at 7, DATA lower),
 * and every RPC completes while the sockets' TOS switches between them.
 */
class PriorityTosLoopbackTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final int MIB = 1024 * 1024;

    private final List<HomaTransport> transports = new ArrayList<>();

    @AfterEach
    void disposeTransports() {
        transports.forEach(HomaTransport::disposeNow);
    }

    private NettyHomaTransport bind(HomaTransportConfig config, HomaRequestHandler handler) {
        // One loop: the test reads the one socket's traffic class.
        HomaTransport transport = HomaTransport.bindNow(config.toBuilder().loops(1).build(), handler, TIMEOUT);
        transports.add(transport);
        return (NettyHomaTransport) transport;
    }

    private static HomaRequestHandler echo() {
        return request -> Mono.just(request.payload().retain());
    }

    /** The socket's IP TOS byte as the kernel reports it now (getsockopt). */
    private static int socketTrafficClass(NettyHomaTransport transport) {
        return ((DatagramChannel) transport.driver().channel()).config().getTrafficClass();
    }

    private static <T> T onLoop(NettyHomaTransport transport, Callable<T> task) throws Exception {
        return transport.driver().eventLoop().submit(task).get();
    }

    /** Two 1 MiB echoes and 40 short ones at once; asserts that all came back intact. */
    private static void mixedEchoes(HomaTransport client, InetSocketAddress server) {
        Random random = new Random(7);
        List<byte[]> requests = new ArrayList<>();
        for (int i = 0; i < 42; i++) {
            byte[] request = new byte[i < 2 ? MIB : 100];
            random.nextBytes(request);
            requests.add(request);
        }
        List<Boolean> intact = Flux.fromIterable(requests)
                .flatMap(request -> client.call(server, request).map(response -> Arrays.equals(request, response)))
                .collectList()
                .block(TIMEOUT);
        assertThat(intact).hasSize(42).containsOnly(true);
    }

    @ParameterizedTest(name = "native transport {0}")
    @ValueSource(booleans = {true, false})
    void shouldSendPacketsAtSeveralPrioritiesAndCompleteEveryRpc(boolean nativeTransport) throws Exception {
        HomaTransportConfig config = HomaTransportConfig.builder()
                .bindAddress("127.0.0.1")
                .nativeTransport(nativeTransport)
                .priorityTos(HomaTransportConfig.PriorityTos.ON)
                .build();
        NettyHomaTransport server = bind(config, echo());
        NettyHomaTransport client = bind(config, null);

        mixedEchoes(client, new InetSocketAddress(InetAddress.getLoopbackAddress(), server.localAddress().getPort()));

        for (NettyHomaTransport transport : List.of(client, server)) {
            PriorityTosWriter writer = transport.driver().writer();
            int mask = onLoop(transport, writer::prioritiesSentMask);
            assertThat(onLoop(transport, writer::enabled)).as("%s marks packets", transport).isTrue();
            assertThat(mask & 1 << 7).as("%s sent control packets (GRANTs) at 7, mask %s", transport,
                    Integer.toBinaryString(mask)).isNotZero();
            assertThat(Integer.bitCount(mask)).as("%s used several priorities, mask %s", transport,
                    Integer.toBinaryString(mask)).isGreaterThanOrEqualTo(2);
            int tos = onLoop(transport, writer::socketTos);
            assertThat(tos & 0x1F).as("only the precedence bits are set").isZero();
            assertThat(socketTrafficClass(transport)).as("the kernel holds the TOS the writer set").isEqualTo(tos);
        }
    }

    @ParameterizedTest(name = "priority-tos {0} on loopback")
    @EnumSource(value = HomaTransportConfig.PriorityTos.class, names = {"OFF", "AUTO"})
    void shouldLeaveTheTosAloneWhenDisabledOrAutoOnLoopback(HomaTransportConfig.PriorityTos mode) throws Exception {
        HomaTransportConfig config = HomaTransportConfig.builder()
                .bindAddress("127.0.0.1")
                .priorityTos(mode)
                .build();
        NettyHomaTransport server = bind(config, echo());
        NettyHomaTransport client = bind(config, null);

        mixedEchoes(client, new InetSocketAddress(InetAddress.getLoopbackAddress(), server.localAddress().getPort()));

        for (NettyHomaTransport transport : List.of(client, server)) {
            assertThat(onLoop(transport, transport.driver().writer()::prioritiesSentMask)).isZero();
            assertThat(socketTrafficClass(transport)).isZero();
        }
    }
}
