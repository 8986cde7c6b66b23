package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.wire.DataHeader;
import io.homa.engine.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * At-most-once across a server restart (issue 14): a server writes its epoch into every packet,
 * a client binds each RPC to the epoch its request reached, and a later incarnation answers a
 * packet naming another epoch with RPC_UNKNOWN instead of running the request again.
 */
class ServerEpochTest {
    private static final InetSocketAddress CLIENT = new InetSocketAddress("10.0.0.1", 5000);
    private static final InetSocketAddress SERVER = new InetSocketAddress("10.0.0.2", 4000);
    private static final EngineConfig CONFIG = EngineConfig.defaults();

    private record Packet(InetSocketAddress from, InetSocketAddress to, byte[] bytes) {
        int type() {
            return Byte.toUnsignedInt(bytes[HomaHeader.TYPE_OFFSET]);
        }

        int epoch() {
            return new DataHeader().wrap(ByteBuffer.wrap(bytes), 0).epoch();
        }
    }

    private long nowNs = 1_000_000_000L;

    private static List<Packet> drain(HomaEngine engine, InetSocketAddress from, long nowNs) {
        List<Packet> out = new ArrayList<>();
        while (engine.pollTransmit(nowNs, (to, packet, priority) -> {
            byte[] bytes = new byte[packet.remaining()];
            packet.get(packet.position(), bytes);
            out.add(new Packet(from, to, bytes));
        }, 64) > 0) {
            // drain
        }
        return out;
    }

    private void deliver(HomaEngine to, List<Packet> packets) {
        for (Packet packet : packets) {
            to.onPacket(nowNs, packet.from(), ByteBuffer.wrap(packet.bytes()));
        }
    }

    @Test
    void aRestartedServerShouldNeverRunARequestBoundToItsPredecessor() {
        HomaEngine client = new HomaEngine(CONFIG, CLIENT.getPort(), 1_000);
        HomaEngine first = new HomaEngine(CONFIG, SERVER.getPort(), 2_000);
        int firstEpoch = HomaEngine.serverEpoch(2_000);
        assertThat(firstEpoch).isBetween(1, HomaHeader.MAX_EPOCH);

        long rpcId = client.sendRequest(nowNs, SERVER, new byte[] {1, 2, 3});
        List<Packet> request = drain(client, CLIENT, nowNs);
        assertThat(request.get(0).epoch()).as("no epoch heard yet").isZero();
        deliver(first, request);
        assertThat(first.pollEvent()).as("executed by the first incarnation").isInstanceOf(HomaEvent.RequestReceived.class);
        List<Packet> fromFirst = drain(first, SERVER, nowNs);
        assertThat(fromFirst).as("CUTOFFS for the client's version 0").isNotEmpty()
                .allSatisfy(p -> assertThat(p.epoch()).isEqualTo(firstEpoch));
        deliver(client, fromFirst);

        // The server crashes before answering; its successor on the same port has another epoch.
        HomaEngine second = new HomaEngine(CONFIG, SERVER.getPort(), 3_000);
        int secondEpoch = HomaEngine.serverEpoch(3_000);
        assertThat(secondEpoch).isNotEqualTo(firstEpoch);

        // The client asks for its response: its RESEND names the first epoch.
        nowNs += 2 * CONFIG.resendIntervalNs();
        client.onTimeout(nowNs);
        List<Packet> resends = drain(client, CLIENT, nowNs);
        assertThat(resends).filteredOn(p -> p.type() == PacketType.RESEND.code()).isNotEmpty()
                .allSatisfy(p -> assertThat(p.epoch()).isEqualTo(firstEpoch));
        deliver(second, resends);
        // Without epochs the successor would ask for the request's start and run it again.
        List<Packet> answer = drain(second, SERVER, nowNs);
        assertThat(answer).extracting(Packet::type).containsOnly(PacketType.RPC_UNKNOWN.code());
        assertThat(answer.get(0).bytes()[HomaHeader.REASON_OFFSET]).isEqualTo((byte) HomaHeader.REASON_RESTARTED);
        assertThat(second.counters().staleEpochRefused()).isEqualTo(1);

        // The request sent again, bound to the first epoch, is refused too.
        ByteBuffer resent = ByteBuffer.wrap(request.get(0).bytes().clone());
        new DataHeader().wrap(resent, 0).retransmitted(true).epoch(firstEpoch);
        second.onPacket(nowNs, CLIENT, resent);
        assertThat(second.pollEvent()).as("never run by the successor").isNull();
        assertThat(second.counters().staleEpochRefused()).isEqualTo(2);

        deliver(client, answer);
        HomaEvent.RpcFailed failed = (HomaEvent.RpcFailed) client.pollEvent();
        assertThat(failed.rpcId()).isEqualTo(rpcId);
        assertThat(failed.reason()).isEqualTo(HomaEvent.Reason.SERVER_LOST_RPC);
        assertThat(failed.detail()).contains("restarted");

        // The client heard the new epoch: its next request names it and is served.
        long next = client.sendRequest(nowNs, SERVER, new byte[] {4});
        List<Packet> nextRequest = drain(client, CLIENT, nowNs);
        assertThat(nextRequest.get(0).epoch()).isEqualTo(secondEpoch);
        deliver(second, nextRequest);
        HomaEvent.RequestReceived served = (HomaEvent.RequestReceived) second.pollEvent();
        assertThat(served.rpcId()).isEqualTo(next);
    }

    @Test
    void aPeerWithoutEpochsShouldBeServedAsBefore() {
        HomaEngine server = new HomaEngine(CONFIG, SERVER.getPort(), 2_000);
        // A draft-only client: epoch bytes zero, even in a retransmission of an unknown RPC.
        ByteBuffer packet = ByteBuffer.allocate(DataHeader.HEADER_LENGTH + 1);
        new DataHeader().wrap(packet, 0).writeCommon(PacketType.DATA, CLIENT.getPort(), SERVER.getPort(), 40)
                .messageLength(1).incoming(1).retransmitted(true).dataOffset(0).segmentOffset(0);
        server.onPacket(nowNs, CLIENT, packet);
        assertThat(server.pollEvent()).isInstanceOf(HomaEvent.RequestReceived.class);
        assertThat(server.counters().staleEpochRefused()).isZero();
    }
}
