package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A server that pauses (a GC pause, a descheduled VM, SIGSTOP) is alive: with the default settings
 * no RPC fails while it is stopped for up to 3 s, its packets delayed but none dropped, and the
 * client probes it once per backoff step rather than once per RPC per resend interval. A server
 * that never comes back fails every pending RPC within the silence budget plus one backoff step.
 */
class PausedPeerTest {
    private static final InetSocketAddress CLIENT = new InetSocketAddress("10.0.0.1", 5000);
    private static final InetSocketAddress SERVER = new InetSocketAddress("10.0.0.2", 4000);
    private static final EngineConfig CONFIG = EngineConfig.defaults();
    private static final long STEP_NS = 100_000;
    private static final int IN_FLIGHT = 32;

    private record Packet(InetSocketAddress to, InetSocketAddress from, byte[] bytes) {}

    /** One client, one server, a closed-loop workload of mixed sizes; the server can stop. */
    private static final class World {
        final HomaEngine client = new HomaEngine(CONFIG, CLIENT.getPort(), 12);
        final HomaEngine server = new HomaEngine(CONFIG, SERVER.getPort(), 22);
        final ArrayDeque<Packet> wire = new ArrayDeque<>();
        /** Packets for the server that arrived while it was stopped: delivered when it resumes. */
        final ArrayDeque<Packet> queuedAtServer = new ArrayDeque<>();
        final Random random = new Random(7);
        final List<HomaEvent.RpcFailed> failures = new ArrayList<>();
        long nowNs = 3_000_000_000L;
        long completed;
        boolean serverStopped;
        boolean serverDead;
        long lastPacketFromServerNs = nowNs;

        void startCall() {
            int length = random.nextInt(4) == 0 ? 1 + random.nextInt(100_000) : 1 + random.nextInt(1_000);
            client.sendRequest(nowNs, SERVER, SendOptions.of(new byte[length]));
        }

        void run(long durationNs) {
            long endNs = nowNs + durationNs;
            while (nowNs - endNs < 0) {
                step();
            }
        }

        void step() {
            transmit(client, CLIENT);
            if (!serverStopped) {
                transmit(server, SERVER);
            }
            Packet packet;
            while ((packet = wire.poll()) != null) {
                if (packet.to().equals(SERVER)) {
                    if (serverDead) {
                        continue;
                    }
                    if (serverStopped) {
                        queuedAtServer.add(packet);
                        continue;
                    }
                    server.onPacket(nowNs, packet.from(), ByteBuffer.wrap(packet.bytes()));
                } else {
                    lastPacketFromServerNs = nowNs;
                    client.onPacket(nowNs, packet.from(), ByteBuffer.wrap(packet.bytes()));
                }
            }
            nowNs += STEP_NS;
            client.onTimeout(nowNs);
            if (!serverStopped) {
                server.onTimeout(nowNs);
                HomaEvent event;
                while ((event = server.pollEvent()) != null) {
                    HomaEvent.RequestReceived request = (HomaEvent.RequestReceived) event;
                    server.sendResponse(nowNs, request.client(), request.rpcId(), SendOptions.of(new byte[1 + request.message().length / 2]));
                }
            }
            HomaEvent event;
            while ((event = client.pollEvent()) != null) {
                if (event instanceof HomaEvent.RpcFailed failed) {
                    failures.add(failed);
                } else {
                    completed++;
                }
                if (!serverStopped && !serverDead) {
                    startCall();
                }
            }
        }

        void transmit(HomaEngine engine, InetSocketAddress from) {
            while (engine.pollTransmit(nowNs, (to, buffer, priority) -> {
                byte[] bytes = new byte[buffer.remaining()];
                buffer.get(buffer.position(), bytes);
                wire.add(new Packet(to, from, bytes));
            }, 64) > 0) {
                // drain
            }
        }

        void resumeServer() {
            serverStopped = false;
            Packet packet;
            while ((packet = queuedAtServer.poll()) != null) {
                server.onPacket(nowNs, packet.from(), ByteBuffer.wrap(packet.bytes()));
            }
            while (client.activeClientRpcs() < IN_FLIGHT) {
                startCall();
            }
        }
    }

    @ParameterizedTest(name = "server stopped for {0} ms")
    @ValueSource(longs = {500, 1_000, 2_000, 3_000})
    void shouldFailNoRpcWhileAServerPausesForSeconds(long pauseMs) {
        World world = new World();
        for (int i = 0; i < IN_FLIGHT; i++) {
            world.startCall();
        }
        world.run(300_000_000L);
        long completedBefore = world.completed;
        assertThat(completedBefore).as("the workload runs").isGreaterThan(100);

        long resendsBefore = world.client.counters().resendsSent();
        world.serverStopped = true;
        world.run(pauseMs * 1_000_000L);
        long resendsDuringPause = world.client.counters().resendsSent() - resendsBefore;
        world.resumeServer();
        world.run(2_000_000_000L);

        assertThat(world.failures).as("failed RPCs").isEmpty();
        assertThat(world.completed - completedBefore).as("the workload goes on after the pause").isGreaterThan(100);
        // While stopped, one probe per backoff step of the peer (10, 20, 40 ... ms, then 1 s),
        // not one RESEND per RPC per 10 ms (that would be 32 x pauseMs / 10).
        long steps = 7 + pauseMs / 1_000 + 1;
        assertThat(resendsDuringPause).as("RESENDs while the server was stopped").isBetween(1L, steps);
        assertThat(world.client.counters().resendsDeferred()).isGreaterThan(resendsDuringPause);
        // Round trips that spanned the pause measure the pause, not the path: none is taken.
        Long srttNs = world.client.countersSnapshot().peerSmoothedRttNs().get(SERVER);
        assertThat(srttNs == null ? 0 : srttNs).as("smoothed RTT after the pause, ns").isLessThan(pauseMs * 1_000_000L / 10);
    }

    @ParameterizedTest(name = "server gone for good, {0} RPCs pending")
    @ValueSource(ints = {1, IN_FLIGHT})
    void shouldFailEveryRpcOfADeadServerWithinTheBudgetPlusOneBackoffStep(int pending) {
        World world = new World();
        for (int i = 0; i < pending; i++) {
            world.startCall();
        }
        world.run(300_000_000L);
        long diedNs = world.nowNs;
        world.serverStopped = true;
        world.serverDead = true;
        long outstanding = world.client.activeClientRpcs();
        assertThat(outstanding).isEqualTo(pending);
        long lastHeardNs = world.lastPacketFromServerNs;
        List<Long> failedAfterNs = new ArrayList<>();
        while (world.client.activeClientRpcs() > 0 && world.nowNs - diedNs < 60_000_000_000L) {
            int before = world.failures.size();
            world.step();
            for (int i = before; i < world.failures.size(); i++) {
                failedAfterNs.add(world.nowNs - lastHeardNs);
            }
        }
        assertThat(world.failures).hasSize((int) outstanding);
        assertThat(world.failures).allMatch(f -> f.reason() == HomaEvent.Reason.TIMEOUT);
        assertThat(failedAfterNs).allSatisfy(silenceNs -> assertThat(silenceNs)
                .isGreaterThanOrEqualTo(CONFIG.peerSilenceTimeoutNs())
                .isLessThanOrEqualTo(CONFIG.peerSilenceTimeoutNs() + CONFIG.maxResendIntervalNs() + STEP_NS));
    }
}
