package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.internal.wire.AckHeader;
import io.homa.engine.internal.wire.ControlHeader;
import io.homa.engine.internal.wire.CutoffsHeader;
import io.homa.engine.internal.wire.GrantHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import io.homa.engine.internal.wire.ResendHeader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Control packets: queued oldest first, pooled, and encoded so that the wire flyweights read them back. */
class ControlQueueTest {
    private static final int LOCAL_PORT = 4000;
    private static final int CONTROL_PRIORITY = 6;
    private static final int MAX_ACKS = 5;
    private static final InetSocketAddress PEER = new InetSocketAddress("10.0.0.1", 5000);

    private final ControlQueue queue = new ControlQueue(LOCAL_PORT, CONTROL_PRIORITY, MAX_ACKS);

    /** Encodes into a buffer full of stale bytes, so that a field left unwritten shows. */
    private ByteBuffer encode(PendingControl control) {
        ByteBuffer buffer = ByteBuffer.allocate(1500);
        Arrays.fill(buffer.array(), (byte) 0xA5);
        int length = queue.encode(control, buffer);
        return ByteBuffer.wrap(Arrays.copyOf(buffer.array(), length));
    }

    private static void assertCommon(HomaHeader header, PacketType type, long wireRpcId) {
        assertThat(header.type()).isEqualTo(type);
        assertThat(header.sourcePort()).as("source port").isEqualTo(LOCAL_PORT);
        assertThat(header.destPort()).as("destination port").isEqualTo(PEER.getPort());
        assertThat(header.rpcId()).as("rpcid with S bit").isEqualTo(wireRpcId);
        assertThat(header.segmentOffset()).as("common offset zeroed").isZero();
    }

    @Test
    void shouldHandOutPacketsOldestFirst() {
        assertThat(queue.isEmpty()).isTrue();
        queue.add(PacketType.BUSY, PEER, 11);
        queue.grant(PEER, 13, 5000, 2);
        queue.resend(PEER, 15, 0, 100);
        queue.add(PacketType.NEED_ACK, PEER, 17);
        assertThat(queue.size()).isEqualTo(4);
        List<PacketType> types = new ArrayList<>();
        List<Long> rpcIds = new ArrayList<>();
        PendingControl next;
        while ((next = queue.poll()) != null) {
            types.add(next.type);
            rpcIds.add(next.wireRpcId);
            queue.recycle(next);
        }
        assertThat(types).containsExactly(PacketType.BUSY, PacketType.GRANT, PacketType.RESEND, PacketType.NEED_ACK);
        assertThat(rpcIds).containsExactly(11L, 13L, 15L, 17L);
        assertThat(queue.isEmpty()).isTrue();
    }

    @Test
    void shouldEncodeGrant() {
        queue.grant(PEER, 43, 70_800, 3);
        PendingControl grant = queue.poll();
        ByteBuffer packet = encode(grant);
        assertThat(packet.limit()).isEqualTo(GrantHeader.HEADER_LENGTH);
        GrantHeader header = new GrantHeader().wrap(packet, 0);
        assertCommon(header, PacketType.GRANT, 43);
        assertThat(header.fromServer()).isTrue();
        assertThat(header.grantOffset()).isEqualTo(70_800);
        assertThat(header.priority()).as("a GRANT carries the granted priority").isEqualTo(3);
        assertThat(header.resendAll()).isFalse();
    }

    @Test
    void shouldEncodeResendAtTheControlPriority() {
        queue.resend(PEER, 42, 1_416, 2_832);
        PendingControl resend = queue.poll();
        assertThat(resend.priority).isEqualTo(CONTROL_PRIORITY);
        ByteBuffer packet = encode(resend);
        assertThat(packet.limit()).isEqualTo(ResendHeader.HEADER_LENGTH);
        ResendHeader header = new ResendHeader().wrap(packet, 0);
        assertCommon(header, PacketType.RESEND, 42);
        assertThat(header.resendOffset()).isEqualTo(1_416);
        assertThat(header.length()).isEqualTo(2_832);
        assertThat(header.priority()).isEqualTo(CONTROL_PRIORITY);
        assertThat(queue.controlPriority()).isEqualTo(CONTROL_PRIORITY);
    }

    @Test
    void shouldEncodeCutoffs() {
        int[] cutoffs = {Integer.MAX_VALUE, Integer.MAX_VALUE, 90_000, 40_000, 9_000, 3_000, 1_000, 200};
        queue.cutoffs(PEER, 45, cutoffs, 4242);
        ByteBuffer packet = encode(queue.poll());
        assertThat(packet.limit()).isEqualTo(CutoffsHeader.HEADER_LENGTH);
        CutoffsHeader header = new CutoffsHeader().wrap(packet, 0);
        assertCommon(header, PacketType.CUTOFFS, 45);
        int[] decoded = new int[CutoffsHeader.NUM_PRIORITIES];
        for (int i = 0; i < decoded.length; i++) {
            decoded[i] = header.cutoff(i);
        }
        assertThat(decoded).containsExactly(cutoffs);
        assertThat(header.cutoffVersion()).isEqualTo(4242);
    }

    @Test
    void shouldEncodeHeaderOnlyPackets() {
        for (PacketType type : List.of(PacketType.BUSY, PacketType.RPC_UNKNOWN, PacketType.NEED_ACK)) {
            queue.add(type, PEER, 101);
            ByteBuffer packet = encode(queue.poll());
            assertThat(packet.limit()).as(type.name()).isEqualTo(ControlHeader.HEADER_LENGTH);
            assertCommon(new ControlHeader().wrap(packet, 0), type, 101);
        }
    }

    @Test
    void shouldEncodeAckWithItsListedRpcIds() {
        Peer server = new Peer(PEER, 0);
        server.addPendingAck(20);
        server.addPendingAck(22);
        queue.ack(server, 24);
        ByteBuffer packet = encode(queue.poll());
        assertThat(packet.limit()).isEqualTo(AckHeader.packetLength(2));
        AckHeader header = new AckHeader().wrap(packet, 0);
        assertCommon(header, PacketType.ACK, 24);
        assertThat(header.numAcks()).isEqualTo(2);
        assertThat(List.of(header.ackRpcId(0), header.ackRpcId(1))).containsExactlyInAnyOrder(20L, 22L);
        assertThat(header.ackServerPort(0)).as("the server the RPC went to").isEqualTo(PEER.getPort());
        assertThat(header.ackServerPort(1)).isEqualTo(PEER.getPort());
        assertThat(server.pendingAckCount).isZero();
    }

    @Test
    void shouldTakeAtMostMaxAcksPerPacketFromThePeer() {
        Peer server = new Peer(PEER, 0);
        for (long id = 2; id <= 2 * 12; id += 2) {
            server.addPendingAck(id); // 12 owed
        }
        queue.ack(server, 100);
        PendingControl first = queue.poll();
        assertThat(first.ackCount).isEqualTo(MAX_ACKS);
        assertThat(server.pendingAckCount).isEqualTo(12 - MAX_ACKS);
        queue.ack(server, 102);
        queue.ack(server, 104);
        PendingControl second = queue.poll();
        PendingControl third = queue.poll();
        assertThat(second.ackCount).isEqualTo(MAX_ACKS);
        assertThat(third.ackCount).as("only what is left").isEqualTo(2);
        assertThat(server.pendingAckCount).isZero();

        Set<Long> listed = new HashSet<>();
        for (PendingControl ack : List.of(first, second, third)) {
            AckHeader header = new AckHeader().wrap(encode(ack), 0);
            for (int i = 0; i < header.numAcks(); i++) {
                assertThat(listed.add(header.ackRpcId(i))).as("listed once").isTrue();
            }
        }
        Set<Long> owed = new HashSet<>();
        for (long id = 2; id <= 24; id += 2) {
            owed.add(id);
        }
        assertThat(listed).isEqualTo(owed);

        queue.ack(server, 106);
        assertThat(queue.poll().ackCount).as("nothing owed: the header's rpcid alone").isZero();
    }

    @Test
    void shouldFitAFullAckInOneDatagramEvenAtTheSmallestMtu() {
        for (int mtu : new int[] {256, 1500, 9000, 65535}) {
            EngineConfig config = EngineConfig.builder().mtuBytes(mtu).build();
            EngineParams params = EngineParams.of(config);
            assertThat(params.maxAcksPerPacket()).isPositive();
            assertThat(AckHeader.packetLength(params.maxAcksPerPacket())).as("mtu %d", mtu)
                    .isLessThanOrEqualTo(config.maxDatagramBytes());
            ControlQueue control = new ControlQueue(LOCAL_PORT, params.controlPriority(), params.maxAcksPerPacket());
            Peer server = new Peer(PEER, 0);
            for (int i = 0; i < 200; i++) {
                server.addPendingAck(2L * i + 2);
            }
            control.ack(server, 1_000);
            ByteBuffer buffer = ByteBuffer.allocate(config.maxDatagramBytes()); // throws if it does not fit
            int length = control.encode(control.poll(), buffer);
            assertThat(new AckHeader().wrap(buffer, 0).numAcks()).isEqualTo(params.maxAcksPerPacket());
            assertThat(length).isLessThanOrEqualTo(config.maxDatagramBytes());
        }
    }

    @Test
    void shouldReuseRecycledEntriesAfterWarmUp() {
        Set<PendingControl> warm = Collections.newSetFromMap(new IdentityHashMap<>());
        Peer server = new Peer(PEER, 0);
        // Warm-up: one burst of the 6 packets each round sends (ACK entries keep a pool of their own).
        queue.add(PacketType.BUSY, PEER, 1);
        queue.grant(PEER, 3, 10_000, 1);
        queue.resend(PEER, 5, 0, 10);
        queue.cutoffs(PEER, 7, new int[8], 9);
        server.addPendingAck(2);
        queue.ack(server, 9);
        queue.add(PacketType.NEED_ACK, PEER, 11);
        PendingControl next;
        while ((next = queue.poll()) != null) {
            warm.add(next);
            queue.recycle(next);
        }
        assertThat(warm).hasSize(6);
        Set<long[]> ackArrays = Collections.newSetFromMap(new IdentityHashMap<>());
        warm.stream().filter(c -> c.acks.length > 0).forEach(c -> ackArrays.add(c.acks));
        assertThat(ackArrays).hasSize(1);

        for (int round = 0; round < 50; round++) {
            queue.add(PacketType.BUSY, PEER, 1);
            queue.grant(PEER, 3, 10_000, 1);
            queue.resend(PEER, 5, 0, 10);
            queue.cutoffs(PEER, 7, new int[8], 9);
            server.addPendingAck(2);
            queue.ack(server, 9);
            queue.add(PacketType.NEED_ACK, PEER, 11);
            while ((next = queue.poll()) != null) {
                assertThat(warm).as("round %d: %s entry from the pool", round, next.type).contains(next);
                if (next.type == PacketType.ACK) {
                    assertThat(ackArrays).as("its acks array is reused too").contains(next.acks);
                }
                if (next.type == PacketType.BUSY || next.type == PacketType.NEED_ACK) {
                    // A reused entry carries nothing of its previous life.
                    assertThat(next.ackCount).isZero();
                    assertThat(next.cutoffs).isNull();
                    assertThat(next.offset).isZero();
                    assertThat(next.length).isZero();
                    assertThat(next.priority).isEqualTo(CONTROL_PRIORITY);
                    ByteBuffer packet = encode(next);
                    assertThat(packet.limit()).isEqualTo(ControlHeader.HEADER_LENGTH);
                }
                queue.recycle(next);
            }
        }
    }

    @Test
    void shouldDropQueuedPacketsOnClear() {
        queue.add(PacketType.BUSY, PEER, 1);
        queue.resend(PEER, 3, 0, 10);
        queue.clear();
        assertThat(queue.isEmpty()).isTrue();
        assertThat(queue.size()).isZero();
        assertThat(queue.poll()).isNull();
    }
}
