package io.homa.engine;

import static io.homa.engine.ComponentRig.PEER;
import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.ComponentRig.Sent;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Well-formed packets an attacker can forge without keys (issue 14, "budgets that hold without
 * keys"): each may not drop, corrupt or amplify anything of a legitimate peer's, and each is
 * counted.
 */
class HostilePacketTest {

    private static final long RPC_ID = 40;

    @Test
    void shouldKeepAnRpcWhoseResponseHasNotGoneOutInFullWhenAnAckNamesIt() {
        ComponentRig rig = new ComponentRig();
        ServerRpc rpc = rig.serverRpcInService(0, PEER, RPC_ID, 100);

        assertThat(rig.onAck(PEER, ComponentRig.ack(RPC_ID))).isTrue();
        assertThat(rig.rpcs.serverRpc(PEER, RPC_ID)).as("in service: no client can have its response").isSameAs(rpc);

        // A response longer than the unscheduled bytes goes out in part; an ack is still forged.
        int length = rig.params.unscheduledBytes() + 10 * rig.payload();
        rig.sender.respond(rpc, new byte[][] {ComponentRig.pattern(length, 1)}, 0L);
        assertThat(rig.drain(0)).isNotEmpty();
        assertThat(rpc.response.nextOffset).isLessThan(length);
        assertThat(rig.onAck(PEER, ComponentRig.ack(2, RPC_ID))).isTrue();
        assertThat(rig.rpcs.serverRpc(PEER, RPC_ID)).isSameAs(rpc);
        assertThat(rig.counters.acksIgnored()).isEqualTo(2);

        // Once every byte went out, the client's ACK releases it and the rpcid counts as finished.
        rig.onGrant(0, PEER, ComponentRig.grant(RPC_ID, length, 0));
        rig.drain(1_000_000_000L);
        assertThat(rpc.response.nextOffset).isEqualTo(length);
        assertThat(rig.onAck(PEER, ComponentRig.ack(RPC_ID))).isTrue();
        assertThat(rig.rpcs.serverRpc(PEER, RPC_ID)).isNull();
        assertThat(rig.rpcs.peer(PEER, 0).finished.contains(RPC_ID)).isTrue();
        assertThat(rig.counters.acksIgnored()).isEqualTo(2);
    }

    @Test
    void shouldTakeAnAckListingMoreRpcidsThanOurSendersPutInOnePacketAsMalformed() {
        ComponentRig rig = new ComponentRig();
        rig.serverRpcInService(0, PEER, RPC_ID, 100);
        long[] listed = new long[AtMostOnce.MAX_ACKS_PER_PACKET + 1];
        for (int i = 0; i < listed.length; i++) {
            listed[i] = 2 + 2L * i;
        }
        assertThat(rig.onAck(PEER, ComponentRig.ack(2, listed))).isFalse();
        assertThat(rig.onAck(PEER, ComponentRig.ack(2, java.util.Arrays.copyOf(listed, listed.length - 1)))).isTrue();
        assertThat(rig.params.maxAcksPerPacket()).isLessThanOrEqualTo(AtMostOnce.MAX_ACKS_PER_PACKET);
    }

    @Test
    void shouldForgetARequestWhoseOverlappingSegmentsDisagree() {
        ComponentRig rig = new ComponentRig();
        byte[] request = ComponentRig.pattern(3_000, 2);
        byte[] forged = request.clone();
        forged[700] ^= 1;

        assertThat(rig.onData(0, PEER, ComponentRig.data(RPC_ID, request, 3_000, 0, 1_000, 0))).isTrue();
        // The same bytes again (a retransmission) are a duplicate, not a conflict.
        assertThat(rig.onData(0, PEER, ComponentRig.data(RPC_ID, request, 3_000, 500, 1_000, 0))).isTrue();
        assertThat(rig.counters.conflictingDataPackets()).isZero();
        assertThat(rig.rpcs.serverRpc(PEER, RPC_ID)).isNotNull();

        // Bytes 500..1000 arrived before; byte 700 now differs.
        assertThat(rig.onData(0, PEER, ComponentRig.data(RPC_ID, forged, 3_000, 600, 1_000, 0))).isTrue();
        assertThat(rig.counters.conflictingDataPackets()).isEqualTo(1);
        assertThat(rig.rpcs.serverRpc(PEER, RPC_ID)).as("not executed: forgotten").isNull();
        assertThat(rig.events).isEmpty();
        assertThat(rig.counters.malformedPackets()).isZero();
    }

    @Test
    void shouldFailAResponseWhoseOverlappingSegmentsDisagree() {
        ComponentRig rig = new ComponentRig();
        ClientRpc rpc = rig.startRequest(0, PEER, new byte[100]);
        rig.drain(0);
        byte[] response = ComponentRig.pattern(3_000, 3);
        byte[] forged = response.clone();
        forged[1_999] ^= 0x40;
        long wireRpcId = rpc.rpcId | HomaHeader.FROM_SERVER_BIT;

        assertThat(rig.onData(0, PEER, ComponentRig.data(wireRpcId, response, 3_000, 1_000, 1_000, 0))).isTrue();
        assertThat(rig.onData(0, PEER, ComponentRig.data(wireRpcId, forged, 3_000, 0, 2_000, 0))).isTrue();

        assertThat(rig.counters.conflictingDataPackets()).isEqualTo(1);
        assertThat(rig.rpcs.clientRpc(rpc.rpcId, PEER)).isNull();
        HomaEvent.RpcFailed failed = (HomaEvent.RpcFailed) rig.events.poll();
        assertThat(failed.reason()).isEqualTo(HomaEvent.Reason.PROTOCOL_ERROR);
        assertThat(failed.detail()).contains("offset 0", "differs");
        assertThat(rig.events).isEmpty();
    }

    /** The amplification attack: forged RESENDs for a stored response, spoofing its client. */
    @Test
    void shouldRetransmitAStoredResponseAtMostItsBudgetThenDropItAndSayRpcUnknown() {
        ComponentRig rig = new ComponentRig();
        ServerRpc rpc = rig.serverRpcInService(0, PEER, RPC_ID, 100);
        int length = 20_000;
        long budgetBytes = (long) SenderFeedback.RETRANSMIT_BUDGET_FACTOR * SenderFeedback.RETRANSMIT_BUDGET_FLOOR_BYTES;
        rig.sender.respond(rpc, new byte[][] {ComponentRig.pattern(length, 4)}, 0L);
        long firstBytes = payloadBytes(rig.drain(0));
        assertThat(firstBytes).isEqualTo(length);

        long retransmittedBytes = 0;
        List<Sent> last = List.of();
        Sent givenUp = null;
        int rounds = (int) (budgetBytes / length) + 5;
        for (int i = 1; i <= rounds; i++) {
            long nowNs = i * 10_000_000L; // the pacer lets each round out
            rig.onResend(nowNs, PEER, ComponentRig.resend(RPC_ID, 0, length));
            last = rig.drain(nowNs);
            retransmittedBytes += payloadBytes(last);
            if (givenUp == null && !ComponentRig.ofType(last, PacketType.RPC_UNKNOWN).isEmpty()) {
                givenUp = ComponentRig.ofType(last, PacketType.RPC_UNKNOWN).get(0);
            }
        }
        assertThat(givenUp).isNotNull();
        assertThat(givenUp.bytes()[io.homa.engine.internal.wire.HomaHeader.REASON_OFFSET])
                .as("the client is told why").isEqualTo((byte) io.homa.engine.internal.wire.HomaHeader.REASON_RETRANSMIT_BUDGET);
        // Whole rounds while the budget lasts; the round that would pass it is not sent.
        assertThat(retransmittedBytes).isEqualTo(budgetBytes / length * length);
        assertThat(rig.counters.retransmitBudgetExceeded()).isEqualTo(1);
        assertThat(rig.rpcs.serverRpc(PEER, RPC_ID)).isNull();
        assertThat(rig.rpcs.peer(PEER, 0).finished.contains(RPC_ID)).as("never executed again").isTrue();
        assertThat(ComponentRig.ofType(last, PacketType.RPC_UNKNOWN)).as("later RESENDs").hasSize(1);
    }

    @Test
    void shouldNotCountLossRecoveryAgainstTheBudget() {
        ComponentRig rig = new ComponentRig();
        ServerRpc rpc = rig.serverRpcInService(0, PEER, RPC_ID, 100);
        int length = 20_000;
        rig.sender.respond(rpc, new byte[][] {ComponentRig.pattern(length, 5)}, 0L);
        rig.drain(0);
        // Each packet of the response asked for once more, one by one, as a lossy path would.
        int payload = rig.payload();
        long retransmittedBytes = 0;
        for (int offset = 0; offset < length; offset += payload) {
            long nowNs = (offset / payload + 1) * 10_000_000L;
            rig.onResend(nowNs, PEER, ComponentRig.resend(RPC_ID, offset, payload));
            retransmittedBytes += payloadBytes(rig.drain(nowNs));
        }
        assertThat(retransmittedBytes).isEqualTo(length);
        assertThat(rig.counters.retransmitBudgetExceeded()).isZero();
        assertThat(rig.rpcs.serverRpc(PEER, RPC_ID)).isSameAs(rpc);
    }

    /** Requests have no budget: a server short of buffer space asks for one over and over. */
    @Test
    void shouldSendARequestAgainAsOftenAsItsServerAsks() {
        ComponentRig rig = new ComponentRig();
        int length = 100_000;
        ClientRpc rpc = rig.startRequest(0, PEER, ComponentRig.pattern(length, 6));
        rig.onGrant(0, PEER, ComponentRig.grant(rpc.rpcId | HomaHeader.FROM_SERVER_BIT, length, 0));
        rig.drain(1_000_000_000L);
        assertThat(rpc.request.nextOffset).isEqualTo(length);
        long retransmittedBytes = 0;
        int rounds = 2 * SenderFeedback.RETRANSMIT_BUDGET_FACTOR;
        for (int i = 1; i <= rounds; i++) {
            long nowNs = (i + 1) * 1_000_000_000L;
            rig.onResend(nowNs, PEER, ComponentRig.resend(rpc.rpcId | HomaHeader.FROM_SERVER_BIT, 0, length));
            retransmittedBytes += payloadBytes(rig.drain(nowNs));
        }
        assertThat(retransmittedBytes).isEqualTo((long) rounds * length);
        assertThat(rig.counters.retransmitBudgetExceeded()).isZero();
        assertThat(rig.rpcs.clientRpc(rpc.rpcId, PEER)).isSameAs(rpc);
        assertThat(rig.events).isEmpty();
    }

    @Test
    void shouldTakeADataPacketWithoutBytesAsMalformedAndOpenNoRpc() {
        ComponentRig rig = new ComponentRig();
        assertThat(rig.onData(0, PEER, ComponentRig.data(RPC_ID, new byte[1 << 20], 60_000, 0, 0, 0))).isFalse();
        assertThat(rig.rpcs.serverRpc(PEER, RPC_ID)).isNull();
    }

    @Test
    void shouldLetAShortFirstPacketClaimOnlyTheBytesItCarries() {
        // max-incoming of one packet: what a message claims shows as its granted offset, since a
        // claim of a whole window leaves no room for a GRANT.
        EngineConfig defaults = EngineConfig.defaults();
        int payload = defaults.maxDataPayloadBytes();
        ComponentRig rig = new ComponentRig(defaults.toBuilder().maxIncomingBytes(payload).build());
        byte[] phantom = new byte[1 << 20];
        // One byte, declaring a 1 MiB message with a whole unscheduled window on its way.
        assertThat(rig.onData(0, PEER, ComponentRig.data(RPC_ID, phantom, 60_000, 0, 1, 0))).isTrue();
        assertThat(rig.rpcs.serverRpc(PEER, RPC_ID).request.grantedOffset).as("1 byte claimed, a GRANT for the rest")
                .isLessThanOrEqualTo(1 + payload);
        rig.rpcs.removeServerRpc(rig.rpcs.serverRpc(PEER, RPC_ID));
        // A full first packet of a real sender claims its window.
        byte[] real = new byte[200_000];
        assertThat(rig.onData(0, PEER, ComponentRig.data(RPC_ID + 2, real, 60_000, 0, payload, 0))).isTrue();
        assertThat(rig.rpcs.serverRpc(PEER, RPC_ID + 2).request.grantedOffset)
                .isEqualTo(Math.min(60_000, rig.params.unscheduledBytes()));
    }

    /**
     * The phantom flood: first packets declaring 1 MiB from eight ports of another host, sent
     * again every 50 ms, never followed by more. Each is granted a window; once two RTOs pass
     * without a byte, those grants no longer hold max-incoming, and a real 200 KB request, which
     * needs GRANTs, completes.
     */
    @Test
    void shouldServeARealRequestThatNeedsGrantsThroughAPhantomFlood() {
        EnginePair pair = new EnginePair(EngineConfig.defaults());
        long[] phantomsNs = {0};
        runRealRequest(pair, () -> {
            if (pair.nowNs - phantomsNs[0] >= 50_000_000L) {
                phantomsNs[0] = pair.nowNs;
                for (int port = 0; port < 8; port++) {
                    pair.server.onPacket(pair.nowNs, new java.net.InetSocketAddress("10.0.9.9", 7000 + port),
                            phantomPacket(2L + 2 * port));
                }
            }
        });
        assertThat(pair.client.counters().rpcsCompleted()).isEqualTo(1);
        assertThat(pair.server.counters().packetsSent(PacketType.GRANT)).as("to the real client and the phantoms")
                .isPositive();
    }

    /**
     * The one-byte flood: 18,000 first packets of one byte from one address (many ports), each
     * pinning a 16 KiB chunk. That address gets its share of the inbound buffer and no more; a
     * real request from another address is served; and the flood's RPCs, silent about themselves
     * however much the address keeps sending, are forgotten after peer-silence-timeout.
     */
    @Test
    void shouldKeepOneAddressToItsShareOfTheInboundBuffer() {
        EngineConfig config = EngineConfig.builder().maxInboundBufferBytes(64L << 20).build();
        EnginePair pair = new EnginePair(config);
        long shareBytes = config.maxInboundBufferBytes() / RpcTable.ADDRESS_SHARE_DIVISOR;
        Runnable flood = oneByteFlood(pair, "10.0.9.9", 1000, 60_000);
        for (int i = 0; i < 90; i++) {
            flood.run();
        }
        assertThat(pair.server.inboundBufferedBytes()).as("the flooding address's share")
                .isBetween(shareBytes, shareBytes + InboundMessage.CHUNK_BYTES);
        assertThat(pair.server.counters().droppedForAddressBudget())
                .isEqualTo(18_000 - shareBytes / InboundMessage.CHUNK_BYTES);
        assertThat(pair.server.counters().droppedForBufferSpace()).as("the rest stays for others").isZero();

        int opened = pair.server.activeServerRpcs();
        assertThat(opened).isEqualTo((int) (shareBytes / InboundMessage.CHUNK_BYTES));
        runRealRequest(pair, flood);
        assertThat(pair.client.counters().rpcsCompleted()).isEqualTo(1);

        // The address keeps flooding; the RPCs it opened long ago are forgotten on their own silence.
        long untilNs = pair.nowNs + config.peerSilenceTimeoutNs() + config.resendIntervalNs() * 2;
        while (pair.nowNs < untilNs) {
            flood.run();
            pair.advance(config.resendIntervalNs());
        }
        assertThat(pair.server.counters().timeouts()).as("half-open RPCs reclaimed").isGreaterThanOrEqualTo(opened);
        assertThat(pair.server.inboundBufferedBytes()).isLessThanOrEqualTo(shareBytes + InboundMessage.CHUNK_BYTES);
    }

    /** Runs a real 200 KB request from the pair's client, with {@code eachMs} every simulated millisecond. */
    /**
     * The one-byte flood from the real client's own IP address (other ports, which anyone can
     * forge): the address's share of the inbound buffer fills, but the client, whose address echoed
     * the server's token in its first contact (validated), is not held to that share.
     */
    @Test
    void shouldServeAValidatedClientWhileForgersFillItsAddressShare() {
        EngineConfig config = EngineConfig.builder().maxInboundBufferBytes(64L << 20).build();
        EnginePair pair = new EnginePair(config);
        long shareBytes = config.maxInboundBufferBytes() / RpcTable.ADDRESS_SHARE_DIVISOR;
        Runnable flood = oneByteFlood(pair, EnginePair.CLIENT.getHostString(), 10_000, 50_000);
        for (int i = 0; i < 90; i++) {
            flood.run();
        }
        long droppedBefore = pair.server.counters().droppedForAddressBudget();
        assertThat(droppedBefore).as("the share is full").isPositive();
        assertThat(pair.server.inboundBufferedBytes()).isGreaterThanOrEqualTo(shareBytes);
        runRealRequest(pair, flood);
        assertThat(pair.client.counters().rpcsCompleted()).isEqualTo(1);
        assertThat(pair.server.counters().addressesValidated()).isEqualTo(1);
    }

    /**
     * A forged first packet naming a live rpcid, with another length, reaches the server while the
     * real request is lost (here during first contact): the server holds the forged message and
     * asks for bytes beyond the real request's end. The client answers with its request from the
     * start (BUSY, as before, kept both ends answering each other forever), the server drops the
     * forged message unexecuted, and the RPC completes.
     */
    @Test
    void shouldRecoverWhenAForgedFirstPacketTakesALiveRpcIdAtTheServer() {
        EngineConfig config = EngineConfig.defaults();
        EnginePair pair = new EnginePair(config);
        byte[] request = ComponentRig.pattern(34, 3);
        long rpcId = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(request));
        pair.firstContact();
        pair.inFlight.clear(); // the request naming the server's epoch is lost
        java.nio.ByteBuffer forged = java.nio.ByteBuffer.allocate(io.homa.engine.internal.wire.DataHeader.HEADER_LENGTH + 35);
        new io.homa.engine.internal.wire.DataHeader().wrap(forged, 0)
                .writeCommon(PacketType.DATA, EnginePair.CLIENT.getPort(), EnginePair.SERVER.getPort(), rpcId)
                .messageLength(651).incoming(651).dataOffset(0).segmentOffset(0);
        pair.server.onPacket(pair.nowNs, EnginePair.CLIENT, forged);
        assertThat(pair.server.activeServerRpcs()).as("the forged message holds the rpcid").isEqualTo(1);
        long deadlineNs = pair.nowNs + config.peerSilenceTimeoutNs();
        while (pair.client.counters().rpcsCompleted() == 0 && pair.nowNs < deadlineNs) {
            pair.advance(config.resendIntervalNs());
            EnginePairTest.runUntilQuiet(pair, new java.util.Random(pair.nowNs));
        }
        assertThat(pair.client.counters().rpcsCompleted()).isEqualTo(1);
        assertThat(pair.server.counters().requestsDelivered()).as("only the real request ran").isEqualTo(1);
    }

    private static void runRealRequest(EnginePair pair, Runnable eachMs) {
        java.util.Random random = new java.util.Random(7);
        byte[] request = ComponentRig.pattern(200_000, 8);
        boolean sent = false;
        long deadlineNs = pair.nowNs + 2 * pair.client.config().peerSilenceTimeoutNs();
        while (pair.nowNs < deadlineNs && pair.client.counters().rpcsCompleted() == 0) {
            eachMs.run();
            if (!sent) {
                pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(request));
                sent = true;
            }
            pair.collect();
            pair.inFlight.removeIf(p -> !p.to().equals(EnginePair.SERVER) && !p.to().equals(EnginePair.CLIENT));
            pair.deliverShuffled(random);
            HomaEvent event;
            while ((event = pair.server.pollEvent()) != null) {
                HomaEvent.RequestReceived received = (HomaEvent.RequestReceived) event;
                assertThat(received.message()).isEqualTo(request);
                pair.server.sendResponse(pair.nowNs, received.client(), received.rpcId(), SendOptions.of(new byte[] {1}));
            }
            while ((event = pair.client.pollEvent()) != null) {
                assertThat(event).isInstanceOf(HomaEvent.ResponseReceived.class);
            }
            pair.advance(1_000_000L);
        }
    }

    /** 200 one-byte first packets (new rpcids, 1 MiB declared) per run, from {@code host} and ports cycling from {@code firstPort}. */
    private static Runnable oneByteFlood(EnginePair pair, String host, int firstPort, int ports) {
        int[] next = {0};
        return () -> {
            for (int i = 0; i < 200; i++, next[0]++) {
                pair.server.onPacket(pair.nowNs, new java.net.InetSocketAddress(host, firstPort + next[0] % ports),
                        phantomPacket(2L + 2L * next[0]));
            }
        };
    }

    private static java.nio.ByteBuffer phantomPacket(long rpcId) {
        java.nio.ByteBuffer packet = java.nio.ByteBuffer.allocate(io.homa.engine.internal.wire.DataHeader.HEADER_LENGTH + 1);
        new io.homa.engine.internal.wire.DataHeader().wrap(packet, 0)
                .writeCommon(PacketType.DATA, 7000, EnginePair.SERVER.getPort(), rpcId)
                .messageLength(1 << 20).incoming(60_000).dataOffset(0).segmentOffset(0);
        return packet;
    }

    private static long payloadBytes(List<Sent> packets) {
        return ComponentRig.ofType(packets, PacketType.DATA).stream().mapToLong(Sent::payloadBytes).sum();
    }
}
