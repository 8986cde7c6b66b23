package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.HomaHeader;
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
        int firstEpoch = EndpointIdentity.serverEpoch(2_000);
        assertThat(firstEpoch).isBetween(1, HomaHeader.MAX_EPOCH);

        // First contact: the client knows no epoch of the server, so its request asks for one, and
        // the server asks for the request again instead of running it.
        long rpcId = client.sendRequest(nowNs, SERVER, SendOptions.of(new byte[] {1, 2, 3}));
        List<Packet> asking = drain(client, CLIENT, nowNs);
        assertThat(asking).singleElement().satisfies(p -> assertThat(p.epoch()).isEqualTo(HomaHeader.EPOCH_ASK));
        deliver(first, asking);
        assertThat(first.pollEvent()).as("a request naming no epoch of ours is not run").isNull();
        assertThat(first.activeServerRpcs()).isZero();
        assertThat(first.counters().firstContactResends()).isEqualTo(1);
        List<Packet> askAgain = drain(first, SERVER, nowNs);
        assertThat(askAgain).extracting(Packet::type).containsOnly(PacketType.RESEND.code());
        assertThat(askAgain.get(0).epoch()).isEqualTo(firstEpoch);
        deliver(client, askAgain);
        List<Packet> request = drain(client, CLIENT, nowNs);
        assertThat(request).filteredOn(p -> p.type() == PacketType.DATA.code()).singleElement()
                .satisfies(p -> assertThat(p.epoch()).isEqualTo(firstEpoch));
        deliver(first, request);
        assertThat(first.pollEvent()).as("executed by the first incarnation").isInstanceOf(HomaEvent.RequestReceived.class);
        List<Packet> fromFirst = drain(first, SERVER, nowNs);
        assertThat(fromFirst).as("CUTOFFS for the client's version 0").isNotEmpty()
                .allSatisfy(p -> assertThat(p.epoch()).isEqualTo(firstEpoch));
        deliver(client, fromFirst);

        // The server crashes before answering; its successor on the same port has another epoch.
        HomaEngine second = new HomaEngine(CONFIG, SERVER.getPort(), 3_000);
        int secondEpoch = EndpointIdentity.serverEpoch(3_000);
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

        // The request bound to the first epoch is refused, sent again or a first transmission that
        // the network duplicated and delayed past the restart alike; a delayed copy of the asking
        // request is asked for again, never run.
        byte[] bound = request.stream().filter(p -> p.type() == PacketType.DATA.code()).findFirst().orElseThrow().bytes();
        second.onPacket(nowNs, CLIENT, ByteBuffer.wrap(bound.clone()));
        ByteBuffer delayedFirst = ByteBuffer.wrap(bound.clone());
        new DataHeader().wrap(delayedFirst, 0).retransmitted(false);
        second.onPacket(nowNs, CLIENT, delayedFirst);
        second.onPacket(nowNs, CLIENT, ByteBuffer.wrap(asking.get(0).bytes().clone()));
        assertThat(second.pollEvent()).as("never run by the successor").isNull();
        assertThat(second.activeServerRpcs()).isZero();
        assertThat(second.counters().staleEpochRefused()).isEqualTo(3);
        assertThat(second.counters().firstContactResends()).isEqualTo(1);
        drain(second, SERVER, nowNs);

        deliver(client, answer);
        HomaEvent.RpcFailed failed = (HomaEvent.RpcFailed) client.pollEvent();
        assertThat(failed.rpcId()).isEqualTo(rpcId);
        assertThat(failed.reason()).isEqualTo(HomaEvent.Reason.SERVER_LOST_RPC);
        assertThat(failed.detail()).contains("restarted");

        // The client heard another epoch: it takes none on its word, asks again (first contact)
        // and its request, naming the epoch the answer carries, is served.
        long next = client.sendRequest(nowNs, SERVER, SendOptions.of(new byte[] {4}));
        List<Packet> nextRequest = drain(client, CLIENT, nowNs);
        assertThat(nextRequest.get(0).epoch()).isEqualTo(HomaHeader.EPOCH_ASK);
        deliver(second, nextRequest);
        deliver(client, drain(second, SERVER, nowNs));
        List<Packet> named = drain(client, CLIENT, nowNs);
        assertThat(named.get(0).epoch()).isEqualTo(secondEpoch);
        deliver(second, named);
        HomaEvent.RequestReceived served = (HomaEvent.RequestReceived) second.pollEvent();
        assertThat(served.rpcId()).isEqualTo(next);
        // From then on at once.
        long third = client.sendRequest(nowNs, SERVER, SendOptions.of(new byte[] {5}));
        deliver(second, drain(client, CLIENT, nowNs));
        assertThat(((HomaEvent.RequestReceived) second.pollEvent()).rpcId()).isEqualTo(third);
    }

    @Test
    void aForgedEpochShouldNotReplaceAKnownOne() {
        HomaEngine client = new HomaEngine(CONFIG, CLIENT.getPort(), 1_000);
        HomaEngine server = new HomaEngine(CONFIG, SERVER.getPort(), 2_000);
        int realEpoch = EndpointIdentity.serverEpoch(2_000);
        long first = client.sendRequest(nowNs, SERVER, SendOptions.of(new byte[] {1}));
        deliver(server, drain(client, CLIENT, nowNs)); // first contact
        deliver(client, drain(server, SERVER, nowNs));
        deliver(server, drain(client, CLIENT, nowNs));
        assertThat(((HomaEvent.RequestReceived) server.pollEvent()).rpcId()).isEqualTo(first);
        // An on-path forger who saw the rpcid speaks for the server with another epoch.
        ByteBuffer forged = ByteBuffer.allocate(io.homa.engine.internal.wire.ControlHeader.HEADER_LENGTH);
        new io.homa.engine.internal.wire.ControlHeader().wrap(forged, 0)
                .writeCommon(PacketType.BUSY, SERVER.getPort(), CLIENT.getPort(), first | HomaHeader.FROM_SERVER_BIT)
                .epoch(realEpoch ^ 0x5A5A);
        client.onPacket(nowNs, SERVER, forged);
        // The next request names neither: it asks, and is served with the real epoch.
        long next = client.sendRequest(nowNs, SERVER, SendOptions.of(new byte[] {2}));
        List<Packet> asking = drain(client, CLIENT, nowNs);
        assertThat(asking).filteredOn(p -> p.type() == PacketType.DATA.code()).singleElement()
                .satisfies(p -> assertThat(p.epoch()).isEqualTo(HomaHeader.EPOCH_ASK));
        deliver(server, asking);
        deliver(client, drain(server, SERVER, nowNs));
        List<Packet> named = drain(client, CLIENT, nowNs);
        assertThat(named).filteredOn(p -> p.type() == PacketType.DATA.code()).singleElement()
                .satisfies(p -> assertThat(p.epoch()).isEqualTo(realEpoch));
        deliver(server, named);
        assertThat(((HomaEvent.RequestReceived) server.pollEvent()).rpcId()).isEqualTo(next);
        assertThat(server.counters().staleEpochRefused()).isZero();
    }

    @Test
    void aForgedFirstContactResendShouldFailAtMostTheRpcItNames() {
        HomaEngine client = new HomaEngine(CONFIG, CLIENT.getPort(), 1_000);
        HomaEngine server = new HomaEngine(CONFIG, SERVER.getPort(), 2_000);
        int realEpoch = EndpointIdentity.serverEpoch(2_000);
        long named = client.sendRequest(nowNs, SERVER, SendOptions.of(new byte[] {1}));
        List<Packet> asking = drain(client, CLIENT, nowNs);
        // Before the server's answer, a forger who guessed the live rpcid asks for the request
        // again in the server's name, with an epoch of its choosing.
        int forgedEpoch = realEpoch ^ 0x5A5A;
        ByteBuffer forged = ByteBuffer.allocate(io.homa.engine.internal.wire.ResendHeader.HEADER_LENGTH);
        io.homa.engine.internal.wire.ResendHeader resend = new io.homa.engine.internal.wire.ResendHeader().wrap(forged, 0);
        resend.writeCommon(PacketType.RESEND, SERVER.getPort(), CLIENT.getPort(), named | HomaHeader.FROM_SERVER_BIT)
                .epoch(forgedEpoch);
        resend.resendOffset(0).length(1);
        client.onPacket(nowNs, SERVER, forged);
        List<Packet> resent = drain(client, CLIENT, nowNs);
        assertThat(resent).filteredOn(p -> p.type() == PacketType.DATA.code()).singleElement()
                .satisfies(p -> assertThat(p.epoch()).as("the named RPC is bound to it").isEqualTo(forgedEpoch));

        // Every other request still asks, and is served by the real server.
        long other = client.sendRequest(nowNs, SERVER, SendOptions.of(new byte[] {2}));
        List<Packet> otherAsking = drain(client, CLIENT, nowNs);
        assertThat(otherAsking).filteredOn(p -> p.type() == PacketType.DATA.code()).singleElement()
                .satisfies(p -> assertThat(p.epoch()).isEqualTo(HomaHeader.EPOCH_ASK));
        deliver(server, asking);
        deliver(server, resent);
        deliver(server, otherAsking);
        deliver(client, drain(server, SERVER, nowNs));
        List<Packet> otherNamed = drain(client, CLIENT, nowNs);
        assertThat(otherNamed).filteredOn(p -> p.type() == PacketType.DATA.code()).singleElement()
                .satisfies(p -> assertThat(p.epoch()).isEqualTo(realEpoch));
        deliver(server, otherNamed);
        HomaEvent.RequestReceived served = (HomaEvent.RequestReceived) server.pollEvent();
        assertThat(served.rpcId()).isEqualTo(other);
        assertThat(server.pollEvent()).as("the request bound to the forged epoch is never run").isNull();
        assertThat(server.counters().staleEpochRefused()).isEqualTo(1);
        server.sendResponse(nowNs, CLIENT, other, SendOptions.of(new byte[] {3}));
        deliver(client, drain(server, SERVER, nowNs));
        List<HomaEvent> events = new ArrayList<>();
        for (HomaEvent event = client.pollEvent(); event != null; event = client.pollEvent()) {
            events.add(event);
        }
        assertThat(events).anySatisfy(e -> assertThat(e).isInstanceOfSatisfying(HomaEvent.ResponseReceived.class,
                r -> assertThat(r.rpcId()).isEqualTo(other)));
        assertThat(events).anySatisfy(e -> assertThat(e).isInstanceOfSatisfying(HomaEvent.RpcFailed.class,
                f -> assertThat(f.rpcId()).isEqualTo(named)));

        // The response confirmed the real epoch: the next request names it at once.
        long next = client.sendRequest(nowNs, SERVER, SendOptions.of(new byte[] {4}));
        deliver(server, drain(client, CLIENT, nowNs));
        assertThat(((HomaEvent.RequestReceived) server.pollEvent()).rpcId()).isEqualTo(next);
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
