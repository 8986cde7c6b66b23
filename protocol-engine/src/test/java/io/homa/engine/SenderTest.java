package io.homa.engine;

import static io.homa.engine.ComponentRig.OTHER;
import static io.homa.engine.ComponentRig.PEER;
import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.ComponentRig.Sent;
import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import io.homa.engine.internal.wire.ResendHeader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The sending side, driven directly: what leaves, in which order, and how GRANT/RESEND/CUTOFFS change it. */
class SenderTest {
    private static final long INTERVAL_NS = EngineConfig.DEFAULT_RESEND_INTERVAL_NS;

    private static List<Long> rpcIdsOf(List<Sent> packets) {
        return packets.stream().map(Sent::wireRpcId).toList();
    }

    /** Checks that the DATA packets carry exactly {@code message}, in order, from offset 0. */
    private static void assertCarries(List<Sent> data, byte[] message) {
        int offset = 0;
        for (Sent packet : data) {
            assertThat(packet.data().dataOffset()).isEqualTo(offset);
            byte[] payload = Arrays.copyOfRange(packet.bytes(), DataHeader.HEADER_LENGTH, packet.bytes().length);
            assertThat(payload).isEqualTo(Arrays.copyOfRange(message, offset, offset + payload.length));
            offset += payload.length;
        }
        assertThat(offset).isEqualTo(message.length);
    }

    @Test
    void shouldSendControlPacketsBeforeData() {
        ComponentRig rig = new ComponentRig();
        byte[] request = ComponentRig.pattern(3_000, 1);
        ClientRpc rpc = rig.startRequest(0, PEER, request);
        rig.control.add(PacketType.BUSY, OTHER, 77);
        rig.control.grant(PEER, 79, 10_000, 1);

        List<Sent> sent = rig.drain(0);
        assertThat(sent).extracting(Sent::type).containsExactly(PacketType.BUSY, PacketType.GRANT,
                PacketType.DATA, PacketType.DATA, PacketType.DATA);
        assertThat(sent.get(0).to()).isEqualTo(OTHER);
        assertThat(sent.get(0).priority()).as("control priority").isEqualTo(rig.params.controlPriority());
        assertThat(sent.get(1).priority()).as("control priority").isEqualTo(rig.params.controlPriority());

        List<Sent> data = sent.subList(2, 5);
        assertCarries(data, request);
        for (Sent packet : data) {
            DataHeader header = packet.data();
            assertThat(packet.to()).isEqualTo(PEER);
            assertThat(header.sourcePort()).isEqualTo(ComponentRig.LOCAL_PORT);
            assertThat(header.destPort()).isEqualTo(PEER.getPort());
            assertThat(header.rpcId()).as("from the client: no S bit").isEqualTo(rpc.rpcId);
            assertThat(header.messageLength()).isEqualTo(3_000);
            assertThat(header.incoming()).as("all of it unscheduled").isEqualTo(3_000);
            assertThat(header.retransmitted()).isFalse();
            assertThat(packet.priority()).as("no cutoffs yet: the highest level").isEqualTo(7);
        }
        assertThat(rig.counters.packetsSent(PacketType.DATA)).isEqualTo(3);
        assertThat(rig.sender.hasTransmit()).isFalse();
    }

    @Test
    void shouldWriteDataIntoMemoryTheSinkLendsByteForByteAsItWouldSendIt() {
        ComponentRig copied = new ComponentRig();
        ComponentRig lentTo = new ComponentRig();
        byte[] request = ComponentRig.pattern(3_000, 5);
        for (ComponentRig rig : List.of(copied, lentTo)) {
            rig.startRequest(0, PEER, request);
            rig.control.add(PacketType.BUSY, OTHER, 77);
        }
        List<Sent> expected = copied.drain(0);

        // A sink that lends a slice of a direct buffer at an offset, amid bytes the engine must not touch.
        List<Sent> sent = new ArrayList<>();
        ByteBuffer memory = ByteBuffer.allocateDirect(4_096);
        int[] claimed = new int[3]; // lengthBytes, priority, commits
        InetSocketAddress[] claimedPeer = new InetSocketAddress[1];
        PacketSink recorder = ComponentRig.recorder(sent);
        PacketSink lending = new PacketSink() {
            @Override
            public void send(InetSocketAddress peer, ByteBuffer packet, int priority) {
                recorder.send(peer, packet, priority);
            }

            @Override
            public ByteBuffer claim(InetSocketAddress peer, int lengthBytes, int priority) {
                for (int i = 0; i < memory.capacity(); i++) {
                    memory.put(i, (byte) 0x5a);
                }
                claimedPeer[0] = peer;
                claimed[0] = lengthBytes;
                claimed[1] = priority;
                return memory.duplicate().position(100).limit(100 + lengthBytes);
            }

            @Override
            public void commit() {
                claimed[2]++;
                byte[] bytes = new byte[claimed[0]];
                memory.get(100, bytes);
                sent.add(new Sent(claimedPeer[0], bytes, claimed[1]));
                assertThat(memory.get(99)).as("before the lent bytes").isEqualTo((byte) 0x5a);
                assertThat(memory.get(100 + claimed[0])).as("after the lent bytes").isEqualTo((byte) 0x5a);
            }
        };
        while (lentTo.sender.pollTransmit(0, lending, 64) > 0) {
            // drain
        }

        assertThat(claimed[2]).as("DATA packets written in place").isEqualTo(3);
        assertThat(sent).hasSameSizeAs(expected);
        for (int i = 0; i < sent.size(); i++) {
            assertThat(sent.get(i).to()).isEqualTo(expected.get(i).to());
            assertThat(sent.get(i).priority()).isEqualTo(expected.get(i).priority());
            assertThat(sent.get(i).bytes()).as("packet %d", i).isEqualTo(expected.get(i).bytes());
        }
        assertThat(lentTo.counters.packetsSent(PacketType.DATA)).isEqualTo(3);
    }

    @Test
    void shouldSendTheShortestRemainingMessageFirst() {
        ComponentRig rig = new ComponentRig(EngineConfig.builder().fifoGrantFraction(0).build());
        ClientRpc longer = rig.startRequest(0, PEER, new byte[20_000]); // 15 packets, started first
        ClientRpc shorter = rig.startRequest(0, OTHER, new byte[3_000]); // 3 packets
        List<Long> order = rpcIdsOf(rig.drain(0));
        List<Long> expected = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            expected.add(shorter.rpcId);
        }
        for (int i = 0; i < 15; i++) {
            expected.add(longer.rpcId);
        }
        assertThat(order).containsExactlyElementsOf(expected);
    }

    @Test
    void shouldGiveTheOldestMessageItsFifoShare() {
        // fifoGrantFraction 0.25: every 4th DATA packet goes to the oldest message.
        ComponentRig rig = new ComponentRig(EngineConfig.builder().fifoGrantFraction(0.25).build());
        ClientRpc older = rig.startRequest(0, PEER, new byte[20_000]);
        ClientRpc shorter = rig.startRequest(0, OTHER, new byte[10 * 1_416]);
        List<Long> order = rpcIdsOf(rig.drain(0)).subList(0, 8);
        long s = shorter.rpcId;
        long o = older.rpcId;
        assertThat(order).containsExactly(s, s, s, o, s, s, s, o);
    }

    @Test
    void shouldSendMoreOnlyAsGrantsArrive() {
        ComponentRig rig = new ComponentRig();
        int payload = rig.payload();
        int unscheduled = rig.params.unscheduledBytes();
        byte[] request = ComponentRig.pattern(100_000, 2);
        ClientRpc rpc = rig.startRequest(0, PEER, request);
        List<Sent> first = rig.drain(0);
        assertThat(first).hasSize(unscheduled / payload);
        assertThat(first).allMatch(p -> p.data().incoming() == unscheduled);
        assertThat(rig.sender.hasTransmit()).as("the rest waits for GRANTs").isFalse();

        rpc.resendsWithoutAnswer = 2;
        int granted = unscheduled + 2 * payload;
        assertThat(rig.onGrant(100, PEER, ComponentRig.grant(rpc.rpcId | HomaHeader.FROM_SERVER_BIT, granted, 2)))
                .isTrue();
        assertThat(rpc.resendsWithoutAnswer).as("the GRANT shows the server alive").isZero();
        List<Sent> more = rig.drain(100);
        assertThat(more).extracting(p -> p.data().dataOffset()).containsExactly(unscheduled, unscheduled + payload);
        assertThat(more).extracting(Sent::priority).as("scheduled bytes at the granted priority").containsOnly(2);
        assertThat(more).allMatch(p -> p.data().incoming() == granted);

        // Nothing more for a GRANT from another host, a GRANT that lowers the offset, or a bad one.
        assertThat(rig.onGrant(200, OTHER, ComponentRig.grant(rpc.rpcId | 1, 90_000, 2))).isTrue();
        assertThat(rig.onGrant(200, PEER, ComponentRig.grant(rpc.rpcId | 1, 1_000, 2))).isTrue();
        assertThat(rig.drain(200)).isEmpty();
        assertThat(rig.onGrant(200, PEER, ComponentRig.grant(rpc.rpcId | 1, 90_000, 8))).as("priority 8").isFalse();
        assertThat(rig.onGrant(200, PEER, ComponentRig.grant(rpc.rpcId | 1, -1, 2))).as("negative offset").isFalse();
        assertThat(rig.drain(200)).isEmpty();
    }

    @Test
    void shouldRetransmitSentBytesOnResend() {
        ComponentRig rig = new ComponentRig();
        byte[] request = ComponentRig.pattern(3_000, 3);
        ClientRpc rpc = rig.startRequest(0, PEER, request);
        assertThat(rig.drain(0)).hasSize(3);

        assertThat(rig.onResend(500, PEER, ComponentRig.resend(rpc.rpcId | 1, 1_416, 1_416))).isTrue();
        List<Sent> again = rig.drain(500);
        assertThat(again).hasSize(1);
        DataHeader header = again.get(0).data();
        assertThat(header.retransmitted()).isTrue();
        assertThat(header.dataOffset()).isEqualTo(1_416);
        assertThat(again.get(0).payloadBytes()).isEqualTo(1_416);
        assertThat(Arrays.copyOfRange(again.get(0).bytes(), DataHeader.HEADER_LENGTH, again.get(0).bytes().length))
                .isEqualTo(Arrays.copyOfRange(request, 1_416, 2_832));
        assertThat(rig.counters.retransmittedDataPackets()).isEqualTo(1);
        assertThat(rig.counters.busySent()).isZero();
        assertThat(rpc.lastHeardNs).isEqualTo(500);
    }

    /**
     * A client's RESEND for the response of a request still missing granted bytes is answered with
     * a RESEND for the first gap, not BUSY: with BUSY both ends kept answering each other forever
     * while the server's own RESEND lost its probe slot to its other RPC with that peer
     * (BadInputProperties, seed -7184996648164126331).
     */
    @Test
    void shouldAnswerAClientResendWithAResendForMissingRequestBytes() {
        ComponentRig rig = new ComponentRig();
        long rpcId = 900;
        int payload = rig.payload();
        receiveRequestWithoutItsMiddlePacket(rig, rpcId, 0);
        long resendsBefore = rig.counters.resendsSent();
        long rtoNs = rig.config.resendIntervalNs();

        assertThat(rig.onResend(rtoNs, PEER, ComponentRig.resend(rpcId, 0, 1_000))).isTrue();
        List<Sent> sent = rig.drain(rtoNs);
        assertThat(sent).extracting(Sent::type).containsExactly(PacketType.RESEND);
        ResendHeader resend = new ResendHeader().wrap(sent.get(0).buffer(), 0);
        assertThat(resend.rpcId()).as("from the server: S bit").isEqualTo(rpcId | HomaHeader.FROM_SERVER_BIT);
        assertThat(resend.resendOffset()).isEqualTo(payload);
        assertThat(resend.length()).isEqualTo(payload);
        assertThat(rig.counters.resendsSent()).isEqualTo(resendsBefore + 1);
        assertThat(rig.counters.busySent()).isZero();
    }

    /**
     * Server side: the first and last packets of a 3-packet request from {@code PEER} arrive (the
     * first at 0, the last at {@code lastAtNs}), the middle one is missing; sends are drained.
     */
    private static void receiveRequestWithoutItsMiddlePacket(ComponentRig rig, long rpcId, long lastAtNs) {
        int payload = rig.payload();
        byte[] request = ComponentRig.pattern(3 * payload, 5);
        assertThat(rig.onData(0, PEER, ComponentRig.data(rpcId, request, request.length, 0, payload,
                rig.cutoffs.version()))).isTrue();
        assertThat(rig.onData(lastAtNs, PEER, ComponentRig.data(rpcId, request, request.length, 2 * payload, payload,
                rig.cutoffs.version()))).isTrue();
        rig.drain(lastAtNs);
    }

    @Test
    void shouldAnswerBusyToAClientResendWhileRequestBytesStillArrive() {
        // The missing bytes are most likely on their way: asking for them again would make the
        // client send them twice.
        ComponentRig rig = new ComponentRig();
        long rpcId = 902;
        long rtoNs = rig.config.resendIntervalNs();
        receiveRequestWithoutItsMiddlePacket(rig, rpcId, rtoNs / 2);
        long resendsBefore = rig.counters.resendsSent();

        long nowNs = rtoNs / 2 + rtoNs - 1;
        assertThat(rig.onResend(nowNs, PEER, ComponentRig.resend(rpcId, 0, 1_000))).isTrue();

        assertThat(rig.drain(nowNs)).extracting(Sent::type).containsExactly(PacketType.BUSY);
        assertThat(rig.counters.resendsSent()).isEqualTo(resendsBefore);
    }

    @Test
    void shouldAnswerBusyToAResendForBytesNotSentYet() {
        ComponentRig rig = new ComponentRig();
        ClientRpc rpc = rig.startRequest(0, PEER, new byte[3_000]);
        List<Sent> first = new ArrayList<>();
        assertThat(rig.sender.pollTransmit(0, ComponentRig.recorder(first), 1)).isEqualTo(1);

        assertThat(rig.onResend(10, PEER, ComponentRig.resend(rpc.rpcId | 1, 2_832, 168))).isTrue();
        List<Sent> sent = rig.drain(10);
        assertThat(sent).extracting(Sent::type).containsExactly(PacketType.BUSY, PacketType.DATA, PacketType.DATA);
        assertThat(sent.get(0).wireRpcId()).as("BUSY from the client: no S bit").isEqualTo(rpc.rpcId);
        assertThat(sent.get(0).to()).isEqualTo(PEER);
        assertThat(sent.subList(1, 3)).noneMatch(p -> p.data().retransmitted());
        assertThat(sent.subList(1, 3)).extracting(p -> p.data().dataOffset()).containsExactly(1_416, 2_832);
        assertThat(rig.counters.busySent()).isEqualTo(1);
    }

    @Test
    void shouldAskForTheRequestStartWhenAClientResendsForAnUnknownRpc() {
        ComponentRig rig = new ComponentRig();
        assertThat(rig.onResend(0, PEER, ComponentRig.resend(700, 0, 60_000))).isTrue();
        List<Sent> sent = rig.drain(0);
        assertThat(sent).hasSize(1);
        ResendHeader resend = new ResendHeader().wrap(sent.get(0).buffer(), 0);
        assertThat(resend.type()).isEqualTo(PacketType.RESEND);
        assertThat(resend.rpcId()).as("from the server: S bit").isEqualTo(700 | HomaHeader.FROM_SERVER_BIT);
        assertThat(resend.resendOffset()).isZero();
        assertThat(resend.length()).isEqualTo(rig.params.unscheduledBytes());
        assertThat(rig.counters.resendsSent()).isEqualTo(1);
        assertThat(rig.rpcs.knownPeer(PEER)).as("a packet alone creates no peer").isNull();
    }

    @Test
    void shouldAnswerRpcUnknownToAClientResendForAFinishedRpc() {
        ComponentRig rig = new ComponentRig();
        Peer client = rig.rpcs.peer(PEER, 0);
        client.finished.received(700);
        client.finished.remember(700);
        assertThat(rig.onResend(0, PEER, ComponentRig.resend(700, 0, 100))).isTrue();
        List<Sent> sent = rig.drain(0);
        assertThat(sent).extracting(Sent::type).containsExactly(PacketType.RPC_UNKNOWN);
        assertThat(sent.get(0).wireRpcId()).isEqualTo(700 | HomaHeader.FROM_SERVER_BIT);
        assertThat(rig.counters.resendsSent()).isZero();
    }

    @Test
    void shouldAnswerBusyToAClientResendWhileTheRequestIsInService() {
        ComponentRig rig = new ComponentRig();
        ServerRpc rpc = rig.serverRpcInService(0, PEER, 800, 10);
        assertThat(rig.onResend(50, PEER, ComponentRig.resend(800, 0, 100))).isTrue();
        List<Sent> sent = rig.drain(50);
        assertThat(sent).extracting(Sent::type).containsExactly(PacketType.BUSY);
        assertThat(sent.get(0).wireRpcId()).isEqualTo(801);
        assertThat(rpc.lastHeardNs).isEqualTo(50);
    }

    /**
     * A RESEND for a response's start that left less than an RTO ago crossed it on the way: BUSY,
     * not the response twice (S6: busy servers sent 5-13% of their responses twice). An RTO after
     * the start left, the same RESEND means it was lost, and it goes again.
     */
    @Test
    void shouldAnswerBusyToAResendForAResponseStartThatLeftLessThanAnRtoAgo() {
        ComponentRig rig = new ComponentRig();
        ServerRpc rpc = rig.serverRpcInService(0, PEER, 800, 10);
        byte[] response = ComponentRig.pattern(3_000, 4);
        rig.sender.respond(rpc, new byte[][] {response}, 0L);
        long sentNs = 1_000;
        assertThat(rig.drain(sentNs)).hasSize(3);
        long rtoNs = rig.rpcs.knownPeer(PEER).rtt.rtoNs();
        long retransmittedBefore = rig.counters.retransmittedDataPackets();

        long crossingNs = sentNs + rtoNs - 1;
        assertThat(rig.onResend(crossingNs, PEER, ComponentRig.resend(800, 0, 3_000))).isTrue();
        assertThat(rig.drain(crossingNs)).extracting(Sent::type).containsExactly(PacketType.BUSY);
        assertThat(rig.counters.retransmittedDataPackets()).isEqualTo(retransmittedBefore);

        long lostNs = sentNs + rtoNs;
        assertThat(rig.onResend(lostNs, PEER, ComponentRig.resend(800, 0, 3_000))).isTrue();
        List<Sent> again = rig.drain(lostNs);
        assertThat(again).extracting(Sent::type).containsOnly(PacketType.DATA).hasSize(3);
        assertCarries(again, response);
        assertThat(rig.counters.retransmittedDataPackets()).isEqualTo(retransmittedBefore + 3);
    }

    @Test
    void shouldAnswerRpcUnknownToAServerResendForAnRpcWeDoNotHave() {
        ComponentRig rig = new ComponentRig();
        rig.startRequest(0, PEER, new byte[10]);
        rig.drain(0);
        // From another server than the request went to, and for an rpcid that is not ours.
        assertThat(rig.onResend(0, OTHER, ComponentRig.resend(ComponentRig.FIRST_RPC_ID | 1, 0, 10))).isTrue();
        assertThat(rig.onResend(0, PEER, ComponentRig.resend(9_000 | 1, 0, 10))).isTrue();
        List<Sent> sent = rig.drain(0);
        assertThat(sent).extracting(Sent::type).containsExactly(PacketType.RPC_UNKNOWN, PacketType.RPC_UNKNOWN);
        assertThat(sent).extracting(Sent::to).containsExactly(OTHER, PEER);
        assertThat(rpcIdsOf(sent)).as("from the client: no S bit").containsExactly(ComponentRig.FIRST_RPC_ID, 9_000L);
    }

    @Test
    void shouldPaceLongMessagesAndLetShortOnesBypass() {
        // 100 Mbit/s: the 50 µs bucket (625 bytes) grows to two full packets (3,076 bytes).
        ComponentRig rig = new ComponentRig(EngineConfig.builder().linkMbps(100).build());
        long nowNs = 1_000_000;
        ClientRpc longer = rig.startRequest(nowNs, PEER, new byte[20_000]);
        List<Sent> sent = new ArrayList<>();
        PacketSink sink = ComponentRig.recorder(sent);

        assertThat(rig.sender.pollTransmit(nowNs, sink, 64)).as("two packets use up the credit").isEqualTo(2);
        long wakeNs = rig.sender.pacerWakeNs();
        assertThat(wakeNs - nowNs).isGreaterThanOrEqualTo(Pacer.MIN_WAIT_NS);
        assertThat(wakeNs).isLessThan(Long.MAX_VALUE);
        assertThat(rig.sender.hasTransmit()).isTrue();
        assertThat(rig.sender.canTransmit(nowNs)).isFalse();
        assertThat(rig.sender.pollTransmit(nowNs, sink, 64)).isZero();

        ClientRpc shorter = rig.startRequest(nowNs, OTHER, new byte[100]);
        assertThat(rig.sender.canTransmit(nowNs)).as("a one-packet message bypasses the pacer").isTrue();
        assertThat(rig.sender.pollTransmit(nowNs, sink, 64)).isEqualTo(1);
        assertThat(rpcIdsOf(sent)).containsExactly(longer.rpcId, longer.rpcId, shorter.rpcId);
        wakeNs = rig.sender.pacerWakeNs();
        assertThat(wakeNs).as("the long message still waits").isLessThan(Long.MAX_VALUE);

        assertThat(rig.sender.canTransmit(nowNs)).isFalse();
        assertThat(rig.sender.canTransmit(wakeNs)).isTrue();
        assertThat(rig.sender.pollTransmit(wakeNs, sink, 64)).isPositive();
        assertThat(rpcIdsOf(sent).subList(3, sent.size())).containsOnly(longer.rpcId);
        rig.sender.onTimeout(rig.sender.pacerWakeNs()); // a wake-up that is due is spent
        assertThat(rig.sender.pacerWakeNs()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void shouldNotClaimToTransmitARetransmissionThePacerHoldsBack() {
        // A bucket of less than a byte: only what bypasses the pacer goes at once.
        ComponentRig rig = new ComponentRig(EngineConfig.builder().linkMbps(1).maxNicQueueNs(1_000).build());
        ClientRpc rpc = rig.startRequest(0, PEER, new byte[100]);
        List<Sent> sent = new ArrayList<>();
        PacketSink sink = ComponentRig.recorder(sent);
        assertThat(rig.sender.pollTransmit(0, sink, 64)).as("a one-packet message bypasses the pacer").isEqualTo(1);
        assertThat(rig.onResend(0, PEER, ComponentRig.resend(rpc.rpcId | 1, 0, 100))).isTrue();
        assertThat(rig.sender.hasTransmit()).isTrue();

        // Whatever the pacer does with the retransmission, canTransmit must say what pollTransmit does.
        boolean can = rig.sender.canTransmit(0);
        int polled = rig.sender.pollTransmit(0, sink, 64);
        assertThat(can).as("canTransmit, with pollTransmit handing out %d", polled).isEqualTo(polled > 0);
        if (polled == 0) {
            long wakeNs = rig.sender.pacerWakeNs();
            assertThat(wakeNs).as("the pacer says when").isLessThan(Long.MAX_VALUE);
            assertThat(rig.sender.canTransmit(wakeNs)).isTrue();
            assertThat(rig.sender.pollTransmit(wakeNs, sink, 64)).isEqualTo(1);
        }
        assertThat(sent).hasSize(2);
        assertThat(sent.get(1).data().retransmitted()).isTrue();
    }

    /**
     * {@link Sender#canTransmit} promises what {@link Sender#pollTransmit} does at the same time; a
     * transport that polls while it says true must not spin. Random sends, RESENDs and GRANTs with
     * a slow pacer, messages on both sides of the bypass length.
     */
    @Test
    void shouldSayItCanTransmitExactlyWhenPollTransmitWould() {
        for (int seed = 0; seed < 20; seed++) {
            Random random = new Random(seed);
            ComponentRig rig = new ComponentRig(EngineConfig.builder().linkMbps(1 + random.nextInt(200))
                    .maxNicQueueNs(1_000 + random.nextInt(20_000)).build());
            List<ClientRpc> rpcs = new ArrayList<>();
            List<Sent> sent = new ArrayList<>();
            PacketSink sink = ComponentRig.recorder(sent);
            long nowNs = 0;
            for (int step = 0; step < 400; step++) {
                int op = random.nextInt(10);
                if (op == 0 && rpcs.size() < 12) {
                    int length = random.nextBoolean() ? 1 + random.nextInt(1_416) : 1_417 + random.nextInt(80_000);
                    rpcs.add(rig.startRequest(nowNs, random.nextBoolean() ? PEER : OTHER, new byte[length]));
                } else if (op == 1 && !rpcs.isEmpty()) {
                    ClientRpc rpc = rpcs.get(random.nextInt(rpcs.size()));
                    rig.onResend(nowNs, rpc.server.address,
                            ComponentRig.resend(rpc.rpcId | 1, random.nextInt(rpc.request.lengthBytes), 1 + random.nextInt(3_000)));
                } else if (op == 2 && !rpcs.isEmpty()) {
                    ClientRpc rpc = rpcs.get(random.nextInt(rpcs.size()));
                    rig.onGrant(nowNs, rpc.server.address, ComponentRig.grant(rpc.rpcId | 1,
                            rpc.request.grantedOffset + random.nextInt(20_000), random.nextInt(8)));
                } else if (op < 5) {
                    nowNs += random.nextInt(30_000);
                }
                boolean can = rig.sender.canTransmit(nowNs);
                int polled = rig.sender.pollTransmit(nowNs, sink, 1);
                assertThat(can).as("seed %d step %d: canTransmit vs pollTransmit (%d sent)", seed, step, polled)
                        .isEqualTo(polled > 0);
            }
        }
    }

    @Test
    void shouldStartTheResendTimerAtTheFirstPacket() {
        ComponentRig rig = new ComponentRig();
        ClientRpc rpc = rig.startRequest(5_000, PEER, new byte[3_000]);
        assertThat(rpc.state()).isEqualTo(ClientRpc.State.QUEUED);
        assertThat(rpc.timerArmed()).as("nothing left yet: no RESEND timer").isFalse();

        rig.sender.pollTransmit(9_000, ComponentRig.recorder(new ArrayList<>()), 1);
        assertThat(rpc.state()).isEqualTo(ClientRpc.State.SENDING_REQUEST);
        assertThat(rpc.timerArmed()).isTrue();
        assertThat(rpc.nextResendNs).isEqualTo(9_000 + INTERVAL_NS);
        assertThat(rpc.timerDeadlineNs).isEqualTo(9_000 + INTERVAL_NS);
        assertThat(rpc.lastHeardNs).as("silence counts from the first packet").isEqualTo(9_000);

        rig.drain(20_000);
        assertThat(rpc.state()).isEqualTo(ClientRpc.State.SENDING_REQUEST);
        assertThat(rpc.timerDeadlineNs).as("later packets do not move it").isEqualTo(9_000 + INTERVAL_NS);
    }

    @Test
    void shouldMoveAResponseToAwaitingAckOnceFullySent() {
        ComponentRig rig = new ComponentRig();
        ServerRpc rpc = rig.serverRpcInService(0, PEER, 800, 10);
        byte[] response = ComponentRig.pattern(3_000, 4);
        rig.sender.respond(rpc, new byte[][] {response}, 0L);
        assertThat(rpc.state()).isEqualTo(ServerRpc.State.SENDING_RESPONSE);
        assertThat(rpc.timerArmed()).isTrue();
        assertThat(rpc.timerDeadlineNs).as("reclaim check").isEqualTo(rig.params.reclaimAfterNs() + 1);

        List<Sent> sent = rig.drain(1_000);
        assertThat(sent).hasSize(3);
        assertThat(rpcIdsOf(sent)).as("from the server: S bit").containsOnly(801L);
        assertCarries(sent, response);
        assertThat(rpc.state()).isEqualTo(ServerRpc.State.AWAITING_ACK);
        assertThat(rpc.nextTimerNs).isEqualTo(1_000 + INTERVAL_NS);
        assertThat(rpc.timerDeadlineNs).as("NEED_ACK comes before the reclaim check").isEqualTo(1_000 + INTERVAL_NS);
    }

    @Test
    void shouldSendOnlyTheHeadItsClientNamedOfTheResponseToAnIncastRequestUnscheduled() {
        ComponentRig rig = new ComponentRig();
        ServerRpc rpc = rig.serverRpcInService(0, PEER, 800, 10);
        rpc.incastHeadBytes = 2_000;
        rig.sender.respond(rpc, new byte[][] {new byte[5_000]}, 0L);
        List<Sent> sent = rig.drain(0);
        assertThat(sent).extracting(Sent::payloadBytes).as("a whole packet, then what is left of the 2,000 B head")
                .containsExactly(rig.params.payloadBytes(), 2_000 - rig.params.payloadBytes());
        assertThat(sent.get(0).data().incoming()).isEqualTo(2_000);
    }

    @Test
    void shouldMarkRequestsIncastPastTheThresholdWithAHeadOfTheIncastBufferOverTheRpcsOutstandingAsTheyLeave() {
        int payload = EngineParams.of(EngineConfig.defaults()).payloadBytes();
        ComponentRig rig = new ComponentRig(EngineConfig.builder().incastThreshold(2).incastBufferBytes(100_000).build());
        List<ClientRpc> rpcs = new ArrayList<>();
        Map<Long, Integer> headByRpcId = new HashMap<>();
        for (int burst : new int[] {2, 3}) {
            for (int i = 0; i < burst; i++) {
                rpcs.add(rig.startRequest(0, PEER, new byte[10]));
            }
            for (Sent packet : rig.drain(0)) {
                boolean incast = (packet.data().flags() & DataHeader.FLAG_INCAST) != 0;
                assertThat(packet.data().incastHeadBytes() != 0).as("a head is named with the mark").isEqualTo(incast);
                headByRpcId.put(packet.wireRpcId(), packet.data().incastHeadBytes());
            }
        }
        // First two leave with one other outstanding (below the threshold); the next three, queued
        // together, each leave with all five outstanding: 100,000 / 5 in whole packets.
        int head = 100_000 / 5 / payload * payload;
        assertThat(rpcs).extracting(rpc -> headByRpcId.get(rpc.rpcId)).containsExactly(0, 0, head, head, head);
        assertThat(rig.counters.incastMarked()).isEqualTo(3);
    }

    @Test
    void shouldNotMarkARequestWhoseHeadWouldBeAllTheUnscheduledBytes() {
        ComponentRig rig = new ComponentRig(EngineConfig.builder().incastThreshold(1).incastBufferBytes(1_000_000).build());
        rig.startRequest(0, PEER, new byte[10]);
        rig.startRequest(0, PEER, new byte[10]);
        assertThat(rig.drain(0)).allSatisfy(packet -> assertThat(packet.data().flags()).isZero());
        assertThat(rig.counters.incastMarked()).isZero();
    }

    @Test
    void shouldNameTheFixedIncastHeadWithoutAnIncastBuffer() {
        ComponentRig rig = new ComponentRig(EngineConfig.builder().incastThreshold(1).incastBufferBytes(0).build());
        ClientRpc first = rig.startRequest(0, PEER, new byte[10]);
        List<Sent> sent = new ArrayList<>(rig.drain(0));
        ClientRpc second = rig.startRequest(0, PEER, new byte[20]);
        sent.addAll(rig.drain(0));
        assertThat(sent).hasSize(2);
        for (Sent packet : sent) {
            boolean incast = (packet.data().flags() & DataHeader.FLAG_INCAST) != 0;
            assertThat(incast).as("rpc %d", packet.wireRpcId()).isEqualTo(packet.wireRpcId() == second.rpcId);
            assertThat(packet.data().incastHeadBytes()).isEqualTo(incast ? EngineConfig.DEFAULT_INCAST_UNSCHEDULED_BYTES : 0);
        }
        assertThat(first.request.flags).isZero();
        assertThat(rig.counters.incastMarked()).isEqualTo(1);
    }

    @Test
    void shouldCarryAnOwedAckOnTheNextRequestToThatServer() {
        ComponentRig rig = new ComponentRig();
        Peer server = rig.rpcs.peer(PEER, 0);
        server.addPendingAck(90);
        rig.startRequest(0, PEER, new byte[10]);
        List<Sent> sent = rig.drain(0);
        assertThat(sent).hasSize(1);
        assertThat(sent.get(0).data().ackRpcId()).isEqualTo(90);
        assertThat(sent.get(0).data().ackServerPort()).isEqualTo(PEER.getPort());
        assertThat(server.pendingAckCount).isZero();

        rig.startRequest(0, OTHER, new byte[10]);
        assertThat(rig.drain(0).get(0).data().ackRpcId()).as("nothing owed to that server").isZero();
    }

    @Test
    void shouldUseThePeersCutoffsForUnscheduledPriorities() {
        ComponentRig rig = new ComponentRig();
        Peer server = rig.rpcs.peer(PEER, 0);
        int max = Integer.MAX_VALUE;
        int[] cutoffs = {max, max, max, max, max, max, 5_000, 1_000};
        ClientRpc medium = rig.startRequest(0, PEER, new byte[3_000]);
        // The server sends CUTOFFS about an RPC of ours (here the one just started).
        assertThat(rig.feedback.onCutoffs(PEER, ComponentRig.cutoffsPacket(medium.rpcId | HomaHeader.FROM_SERVER_BIT,
                cutoffs, 9), 0, 62, true, medium.rpcId)).isTrue();
        assertThat(server.cutoffs).containsExactly(cutoffs);
        assertThat(server.cutoffVersion).isEqualTo(9);
        assertThat(rig.counters.cutoffsIgnored()).isZero();

        ClientRpc small = rig.startRequest(0, PEER, new byte[500]);
        ClientRpc large = rig.startRequest(0, PEER, new byte[20_000]);
        for (Sent packet : rig.drain(0)) {
            assertThat(packet.data().cutoffVersion()).isEqualTo(9);
            long id = packet.wireRpcId();
            int expected = id == small.rpcId ? 7 : id == medium.rpcId ? 6 : 5;
            assertThat(packet.priority()).as("rpc %d", id).isEqualTo(expected);
        }
        assertThat(large.request.nextOffset).isEqualTo(20_000);

        // CUTOFFS from an unknown host create nothing; a short one is malformed.
        assertThat(rig.feedback.onCutoffs(OTHER, ComponentRig.cutoffsPacket(2, cutoffs, 3), 0, 62, true, 2)).isTrue();
        assertThat(rig.rpcs.knownPeer(OTHER)).isNull();
        assertThat(rig.feedback.onCutoffs(PEER, ByteBuffer.allocate(61), 0, 61, true, medium.rpcId)).isFalse();
    }

    @Test
    void shouldIgnoreCutoffsAboutNoRpcOfOursOrThatAreNotANonIncreasingList() {
        ComponentRig rig = new ComponentRig();
        Peer server = rig.rpcs.peer(PEER, 0);
        ClientRpc held = rig.startRequest(0, PEER, new byte[100]);
        int max = Integer.MAX_VALUE;
        int[] allZero = new int[8];
        int[] increasing = {1_000, 2_000, max, max, max, max, max, max};
        int[] firstZero = {0, 0, 0, 0, 0, 0, 0, 0};
        int[] good = {max, max, max, max, max, max, 5_000, 1_000};

        // The forged CUTOFFS of the attack: all zeros, which would put every message at level 0.
        assertThat(rig.feedback.onCutoffs(PEER, ComponentRig.cutoffsPacket(held.rpcId + 1000, good, 4), 0, 62, true,
                held.rpcId + 1000)).as("about an rpcid we do not hold").isTrue();
        assertThat(rig.feedback.onCutoffs(PEER, ComponentRig.cutoffsPacket(held.rpcId, allZero, 5), 0, 62, false,
                held.rpcId)).as("as if we were its server").isTrue();
        assertThat(rig.feedback.onCutoffs(PEER, ComponentRig.cutoffsPacket(held.rpcId, increasing, 6), 0, 62, true,
                held.rpcId)).isTrue();
        assertThat(rig.feedback.onCutoffs(PEER, ComponentRig.cutoffsPacket(held.rpcId, firstZero, 7), 0, 62, true,
                held.rpcId)).isTrue();
        assertThat(server.cutoffs).as("none applied").isNull();
        assertThat(server.cutoffVersion).isZero();
        assertThat(rig.counters.cutoffsIgnored()).isEqualTo(4);
        assertThat(rig.drain(0).get(0).priority()).as("still the highest level").isEqualTo(7);

        // Unsigned: 0xFFFFFFFF (a draft peer's "every length") above MAX_VALUE is still non-increasing.
        int[] unsigned = {-1, max, max, max, max, max, 5_000, 1_000};
        rig.feedback.onCutoffs(PEER, ComponentRig.cutoffsPacket(held.rpcId, unsigned, 8), 0, 62, true, held.rpcId);
        assertThat(server.cutoffs).containsExactly(unsigned);
        assertThat(rig.counters.cutoffsIgnored()).isEqualTo(4);
    }
}
