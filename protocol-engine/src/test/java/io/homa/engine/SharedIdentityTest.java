package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.trace.Timetrace;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Queue;
import java.util.SplittableRandom;
import io.homa.engine.wire.PacketType;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * Several engines behind one address (an endpoint on several event loops): they share the
 * endpoint's server epoch and address-token key, so a client that the kernel's hash moves from one
 * to another meets the same incarnation and its address stays validated.
 */
class SharedIdentityTest {
    private static final EngineConfig CONFIG = EngineConfig.defaults();
    private static final InetSocketAddress SERVER = new InetSocketAddress("10.0.0.2", 4000);
    private static final InetSocketAddress CLIENT = new InetSocketAddress("10.0.0.1", 5000);

    private long nowNs = 1_000_000_000L;

    private static HomaEngine[] group(int engines, long firstRpcId) {
        SharedIdentity shared = SharedIdentity.of(firstRpcId, null);
        HomaEngine[] made = new HomaEngine[engines];
        for (int i = 0; i < engines; i++) {
            made[i] = new HomaEngine(CONFIG, SERVER.getPort(), firstRpcId + 2_000_000L * i, null, Timetrace.off(), shared);
        }
        return made;
    }

    @Test
    void shouldGiveEveryEngineOfAnEndpointOneEpochAndARestartedEndpointAnother() {
        HomaEngine[] first = group(4, 2_000);
        HomaEngine[] restarted = group(4, 4_000);

        assertThat(Arrays.stream(first).mapToInt(HomaEngine::serverEpoch).distinct().count()).isEqualTo(1);
        assertThat(Arrays.stream(restarted).mapToInt(HomaEngine::serverEpoch).distinct().count()).isEqualTo(1);
        assertThat(restarted[0].serverEpoch()).isNotEqualTo(first[0].serverEpoch());
        // Engines built alone still draw their epoch from their own first rpcid, as before.
        assertThat(new HomaEngine(CONFIG, 4000, 2_000).serverEpoch()).isEqualTo(first[0].serverEpoch());
    }

    @Test
    void shouldShareTheAddressTokenKeyOnlyWithinOneEndpoint() {
        SharedIdentity one = SharedIdentity.of(2_000, new SplittableRandom(1));
        SharedIdentity other = SharedIdentity.of(2_000, new SplittableRandom(1));
        AddressValidation first = new AddressValidation(true, 1400, one.tokenKey(), new EngineCounters());
        AddressValidation sibling = new AddressValidation(true, 1400, one.tokenKey(), new EngineCounters());
        AddressValidation stranger = new AddressValidation(true, 1400, other.tokenKey(), new EngineCounters());

        assertThat(sibling.tokenFor(CLIENT)).isEqualTo(first.tokenFor(CLIENT));
        // Real endpoints draw their key from a SecureRandom: two of them never share one.
        assertThat(stranger.tokenFor(CLIENT)).isNotEqualTo(first.tokenFor(CLIENT));
        assertThat(one.sameTokenKey(other)).isFalse();
    }

    @Test
    void shouldServeAClientMovedToAnotherEngineOfTheEndpointWithoutHoldingItsBytes() {
        HomaEngine[] servers = group(2, 2_000);
        HomaEngine client = new HomaEngine(CONFIG, CLIENT.getPort(), 10_000);

        assertThat(call(client, servers[0], 100, 100)).isTrue();
        assertThat(servers[0].countersSnapshot().addressesValidated()).isEqualTo(1);
        // The group's membership changed: the client's packets now hash to the other engine. Its
        // next request echoes the token the first engine issued; the sibling takes it, so the long
        // response goes out at once, none of it held for address validation.
        assertThat(call(client, servers[1], 100, 500_000)).isTrue();
        EngineCounters sibling = servers[1].countersSnapshot();
        assertThat(sibling.addressesValidated()).isEqualTo(1);
        assertThat(sibling.bytesHeldForValidation()).isZero();
        assertThat(sibling.packetsSent(PacketType.RPC_UNKNOWN)).isZero();
        assertThat(client.countersSnapshot().staleEpochRefused()).isZero();
    }

    /** One RPC from {@code client} to {@code server}, pumped to its end; true if the response arrived whole. */
    private boolean call(HomaEngine client, HomaEngine server, int requestBytes, int responseBytes) {
        long rpcId = client.sendRequest(nowNs, SERVER, SendOptions.of(new byte[requestBytes]));
        Queue<Runnable> wire = new ArrayDeque<>();
        for (int round = 0; round < 10_000; round++) {
            nowNs += 10_000;
            client.pollTransmit(nowNs, (to, packet, priority) -> {
                byte[] bytes = copy(packet);
                wire.add(() -> server.onPacket(nowNs, CLIENT, ByteBuffer.wrap(bytes)));
            }, 1_000);
            server.pollTransmit(nowNs, (to, packet, priority) -> {
                byte[] bytes = copy(packet);
                wire.add(() -> client.onPacket(nowNs, SERVER, ByteBuffer.wrap(bytes)));
            }, 1_000);
            while (!wire.isEmpty()) {
                wire.poll().run();
            }
            HomaEvent event;
            while ((event = server.pollEvent()) != null) {
                if (event instanceof HomaEvent.RequestReceived request) {
                    server.sendResponse(nowNs, request.client(), request.rpcId(),
                            SendOptions.of(new byte[responseBytes]));
                }
            }
            while ((event = client.pollEvent()) != null) {
                if (event instanceof HomaEvent.ResponseReceived response && response.rpcId() == rpcId) {
                    return response.message().length == responseBytes;
                }
                if (event instanceof HomaEvent.RpcFailed) {
                    return false;
                }
            }
            client.onTimeout(nowNs);
            server.onTimeout(nowNs);
        }
        return false;
    }

    private static byte[] copy(ByteBuffer packet) {
        byte[] bytes = new byte[packet.remaining()];
        packet.get(packet.position(), bytes);
        return bytes;
    }
}
