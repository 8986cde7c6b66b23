package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import io.homa.engine.internal.wire.ResendHeader;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** One rule of the draft per test, driven packet by packet between two in-memory engines. */
class EngineProtocolTest {
    private static final EngineConfig CONFIG = EngineConfig.defaults();

    private static PacketType typeOf(EnginePair.Packet packet) {
        return PacketType.fromCode(Byte.toUnsignedInt(packet.bytes()[HomaHeader.TYPE_OFFSET]));
    }

    private static List<EnginePair.Packet> ofType(List<EnginePair.Packet> packets, PacketType type) {
        return packets.stream().filter(p -> typeOf(p) == type).toList();
    }

    @Test
    void shouldAskForRequestStartWhenResendArrivesForUnknownRpc() {
        EnginePair pair = new EnginePair(CONFIG);
        pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {7}));
        pair.collect();
        pair.inFlight.clear(); // the whole request is lost
        pair.advance(CONFIG.resendIntervalNs()); // client asks for the response
        pair.collect();
        List<EnginePair.Packet> resends = ofType(pair.inFlight, PacketType.RESEND);
        assertThat(resends).hasSize(1);
        pair.deliverShuffled(new Random(1));
        pair.collect();
        // The server never saw the request: it asks for the request's first bytes (S bit set).
        List<EnginePair.Packet> answer = ofType(pair.inFlight, PacketType.RESEND);
        assertThat(answer).hasSize(1);
        ResendHeader resend = new ResendHeader();
        resend.wrap(ByteBuffer.wrap(answer.get(0).bytes()), 0);
        assertThat(resend.fromServer()).isTrue();
        assertThat(resend.resendOffset()).isZero();
        assertThat(resend.length()).isPositive();
        // The client sends the request again (retransmitted) and the RPC completes.
        pair.deliverShuffled(new Random(2));
        pair.collect();
        List<EnginePair.Packet> data = ofType(pair.inFlight, PacketType.DATA);
        assertThat(data).hasSize(1);
        DataHeader header = new DataHeader();
        header.wrap(ByteBuffer.wrap(data.get(0).bytes()), 0);
        assertThat(header.retransmitted()).isTrue();
        EnginePairTest.runUntilQuiet(pair, new Random(3));
        assertThat(pair.client.counters().rpcsCompleted()).isEqualTo(1);
        assertThat(pair.server.counters().requestsDelivered()).isEqualTo(1);
    }

    @Test
    void shouldAnswerBusyWhileHandlerRunsSoLongHandlersDoNotTimeOut() {
        EnginePair pair = new EnginePair(CONFIG);
        long rpcId = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {7}));
        pair.exchange(new Random(1));
        HomaEvent.RequestReceived request = (HomaEvent.RequestReceived) pair.server.pollEvent();
        assertThat(request).isNotNull();
        // The handler runs for 1.5 silence budgets: BUSY keeps the RPC alive all along.
        long handlerNs = CONFIG.peerSilenceTimeoutNs() * 3 / 2;
        for (int i = 0; i < handlerNs / (CONFIG.resendIntervalNs() / 4); i++) {
            pair.advance(CONFIG.resendIntervalNs() / 4);
            pair.collect();
            pair.deliverShuffled(new Random(i));
        }
        assertThat(pair.client.pollEvent()).as("no timeout").isNull();
        // Each BUSY answers a RESEND, and the RESENDs back off to one per second (the cap).
        assertThat(pair.server.counters().busySent()).isBetween(7L, handlerNs / 1_000_000_000L + 8);
        assertThat(pair.client.counters().resendsSent()).isEqualTo(pair.server.counters().busySent());
        pair.server.sendResponse(pair.nowNs, request.client(), request.rpcId(), SendOptions.of(new byte[] {8}));
        EnginePairTest.runUntilQuiet(pair, new Random(9));
        assertThat(pair.client.counters().rpcsCompleted()).isEqualTo(1);
        assertThat(pair.client.counters().timeouts()).isZero();
        assertThat(rpcId).isEqualTo(request.rpcId());
    }

    /**
     * A RESEND cannot make a handler finish sooner: once the client has seen how long this server
     * takes to answer, its first RESEND for a response waits about that long, so a server that is
     * busy, not lossy, is not probed for every RPC.
     */
    @Test
    void shouldStopProbingAServerWhoseHandlerIsSlowOnceItsResponseTimeIsKnown() {
        EnginePair pair = new EnginePair(CONFIG);
        long handlerNs = 50_000_000L;
        long[] resendsPerRpc = new long[20];
        for (int rpc = 0; rpc < resendsPerRpc.length; rpc++) {
            long resendsBefore = pair.client.counters().resendsSent();
            pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {(byte) rpc}));
            HomaEvent.RequestReceived request = null;
            long receivedNs = 0;
            boolean answered = false;
            for (int step = 0; step < 1_000 && !answered; step++) {
                pair.collect();
                pair.deliverShuffled(new Random(step));
                HomaEvent event = pair.server.pollEvent();
                if (event instanceof HomaEvent.RequestReceived received) {
                    request = received;
                    receivedNs = pair.nowNs;
                }
                if (request != null && pair.nowNs - receivedNs >= handlerNs) {
                    pair.server.sendResponse(pair.nowNs, request.client(), request.rpcId(), SendOptions.of(new byte[] {1}));
                    request = null;
                    receivedNs = Long.MAX_VALUE;
                }
                answered = pair.client.pollEvent() instanceof HomaEvent.ResponseReceived;
                pair.advance(1_000_000L);
            }
            assertThat(answered).as("rpc %d answered", rpc).isTrue();
            resendsPerRpc[rpc] = pair.client.counters().resendsSent() - resendsBefore;
        }
        assertThat(resendsPerRpc[0]).as("the first RPC probes the silent server").isPositive();
        assertThat(java.util.Arrays.stream(resendsPerRpc, 10, 20).sum())
                .as("RESENDs of the last 10 RPCs, once the response time is known: %s", java.util.Arrays.toString(resendsPerRpc))
                .isZero();
        assertThat(pair.client.counters().timeouts()).isZero();
    }

    @Test
    void shouldAnswerNeedAckForUnknownRpcWithAck() {
        EnginePair pair = new EnginePair(CONFIG);
        ByteBuffer needAck = ByteBuffer.allocate(HomaHeader.COMMON_HEADER_LENGTH);
        new io.homa.engine.internal.wire.ControlHeader().wrap(needAck, 0).writeCommon(PacketType.NEED_ACK, EnginePair.SERVER.getPort(),
                EnginePair.CLIENT.getPort(), 5000 | HomaHeader.FROM_SERVER_BIT);
        pair.client.onPacket(pair.nowNs, EnginePair.SERVER, needAck);
        pair.collect();
        List<EnginePair.Packet> acks = ofType(pair.inFlight, PacketType.ACK);
        assertThat(acks).hasSize(1);
        DataHeader header = new DataHeader();
        header.wrap(ByteBuffer.wrap(acks.get(0).bytes()), 0);
        assertThat(header.rpcId()).isEqualTo(5000);
    }

    @Test
    void shouldNotExecuteDuplicateRequestAfterAck() {
        EnginePair pair = new EnginePair(CONFIG);
        pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {1, 2}));
        pair.collect();
        EnginePair.Packet request = ofType(pair.inFlight, PacketType.DATA).get(0);
        EnginePairTest.runUntilQuiet(pair, new Random(1));
        pair.advance(CONFIG.resendIntervalNs() / 4); // ACK goes out
        EnginePairTest.runUntilQuiet(pair, new Random(2));
        assertThat(pair.server.activeServerRpcs()).isZero();
        // A long-delayed copy of the request arrives after the ACK.
        pair.deliver(request);
        assertThat(pair.server.pollEvent()).isNull();
        assertThat(pair.server.counters().requestsDelivered()).isEqualTo(1);
        assertThat(pair.server.activeServerRpcs()).isZero();
    }

    @Test
    void shouldRepeatNeedAckWithBackoffThenReclaimAfterTwiceTheSilenceBudget() {
        EnginePair pair = new EnginePair(CONFIG);
        pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {1}));
        pair.collect();
        EnginePair.Packet request = ofType(pair.inFlight, PacketType.DATA).get(0);
        EnginePairTest.runUntilQuiet(pair, new Random(1));
        // Every packet from the client is lost from now on.
        long lostFromNs = pair.nowNs;
        int needAcks = 0;
        long reclaimedAfterNs = -1;
        for (int i = 0; reclaimedAfterNs < 0 && i < 100_000; i++) {
            pair.advance(CONFIG.resendIntervalNs());
            pair.collect();
            needAcks += ofType(pair.inFlight, PacketType.NEED_ACK).size();
            pair.inFlight.removeIf(p -> p.from().equals(EnginePair.CLIENT));
            pair.deliverShuffled(new Random(i));
            if (pair.server.activeServerRpcs() == 0) {
                reclaimedAfterNs = pair.nowNs - lostFromNs;
            }
        }
        assertThat(reclaimedAfterNs).as("held for twice the client's silence budget, then reclaimed")
                .isBetween(2 * CONFIG.peerSilenceTimeoutNs(), 2 * CONFIG.peerSilenceTimeoutNs() + 2 * CONFIG.resendIntervalNs());
        // NEED_ACKs back off to one per second: a handful over 10 s, not one per 10 ms.
        assertThat(needAcks).isBetween(8, (int) (reclaimedAfterNs / 1_000_000_000L) + 8);
        // Given up but remembered as finished: a late copy of the request does not execute again.
        pair.deliver(request);
        assertThat(pair.server.pollEvent()).isNull();
        assertThat(pair.server.counters().requestsDelivered()).isEqualTo(1);
    }

    @Test
    void shouldCompleteManyConcurrentRpcsOfMixedSizesWithLossAndReordering() {
        EnginePair pair = new EnginePair(CONFIG);
        Random random = new Random(99);
        Map<Long, byte[]> expected = new HashMap<>();
        for (int i = 0; i < 200; i++) {
            int length = 1 + (random.nextInt(4) == 0 ? random.nextInt(300_000) : random.nextInt(3000));
            byte[] request = EnginePairTest.randomBytes(random, length);
            expected.put(pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(request)), request);
        }
        List<Long> completed = new ArrayList<>();
        for (int step = 0; step < 200_000 && completed.size() < expected.size(); step++) {
            pair.collect();
            pair.inFlight.removeIf(p -> random.nextInt(50) == 0); // 2% loss
            pair.deliverShuffled(random);
            pair.advance(100_000);
            HomaEvent event;
            while ((event = pair.server.pollEvent()) != null) {
                HomaEvent.RequestReceived received = (HomaEvent.RequestReceived) event;
                pair.server.sendResponse(pair.nowNs, received.client(), received.rpcId(), SendOptions.of(received.message()));
            }
            while ((event = pair.client.pollEvent()) != null) {
                HomaEvent.ResponseReceived response = (HomaEvent.ResponseReceived) event;
                assertThat(response.message()).isEqualTo(expected.get(response.rpcId()));
                completed.add(response.rpcId());
            }
        }
        assertThat(completed).hasSize(expected.size()).doesNotHaveDuplicates();
        assertThat(pair.server.counters().requestsDelivered()).isEqualTo(expected.size());
        // After acks settle, the server holds no RPC state.
        for (int i = 0; i < 100 && pair.server.activeServerRpcs() > 0; i++) {
            pair.collect();
            pair.deliverShuffled(random);
            pair.advance(CONFIG.resendIntervalNs() / 4);
        }
        assertThat(pair.server.activeServerRpcs()).isZero();
    }

    @Test
    void shouldFailRpcWithoutResendingRequestWhenServerAnswersRpcUnknown() {
        EnginePair pair = new EnginePair(CONFIG);
        long rpcId = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {5}));
        pair.exchange(new Random(1));
        long retransmittedAtFirstContact = pair.client.counters().retransmittedDataPackets();
        HomaEvent.RequestReceived request = (HomaEvent.RequestReceived) pair.server.pollEvent();
        // The application gives up the request: the server forgets it, remembering it as finished.
        assertThat(pair.server.abortRequest(pair.nowNs, request.client(), request.rpcId())).isTrue();
        assertThat(pair.server.activeServerRpcs()).isZero();
        HomaEvent event = null;
        for (int i = 0; i < 40 && event == null; i++) {
            pair.advance(CONFIG.resendIntervalNs() / 4);
            pair.collect();
            pair.deliverShuffled(new Random(i));
            event = pair.client.pollEvent();
        }
        assertThat(event).isInstanceOf(HomaEvent.RpcFailed.class);
        HomaEvent.RpcFailed failed = (HomaEvent.RpcFailed) event;
        assertThat(failed.rpcId()).isEqualTo(rpcId);
        assertThat(failed.reason()).isEqualTo(HomaEvent.Reason.SERVER_LOST_RPC);
        assertThat(pair.client.counters().retransmittedDataPackets()).as("request never sent again")
                .isEqualTo(retransmittedAtFirstContact);
        assertThat(pair.server.counters().requestsDelivered()).isEqualTo(1);
        assertThat(pair.client.activeClientRpcs()).isZero();
    }

    @Test
    void shouldNotTimeOutRpcWhileItsServerKeepsSendingOtherMessages() {
        EnginePair pair = new EnginePair(CONFIG);
        long waiting = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {1}));
        pair.exchange(new Random(1));
        HomaEvent.RequestReceived held = (HomaEvent.RequestReceived) pair.server.pollEvent();
        assertThat(held.rpcId()).isEqualTo(waiting);
        // From now on the server's answers about the held RPC are lost, but it keeps answering others.
        for (int i = 0; i < 200; i++) {
            pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {2}));
            pair.advance(CONFIG.resendIntervalNs() / 4);
            pair.collect();
            pair.inFlight.removeIf(p -> p.from().equals(EnginePair.SERVER) && new io.homa.engine.internal.wire.ControlHeader()
                    .wrap(ByteBuffer.wrap(p.bytes()), 0).rpcId() == (waiting | HomaHeader.FROM_SERVER_BIT));
            pair.deliverShuffled(new Random(i));
            HomaEvent event;
            while ((event = pair.server.pollEvent()) != null) {
                HomaEvent.RequestReceived other = (HomaEvent.RequestReceived) event;
                pair.server.sendResponse(pair.nowNs, other.client(), other.rpcId(), SendOptions.of(new byte[] {3}));
            }
            while ((event = pair.client.pollEvent()) != null) {
                assertThat(event).isInstanceOf(HomaEvent.ResponseReceived.class);
            }
        }
        assertThat(pair.client.counters().timeouts()).isZero();
        assertThat(pair.client.activeClientRpcs()).isGreaterThanOrEqualTo(1);
    }

    @Test
    void shouldForgetIdlePeersAfterPeerIdleTimeout() {
        EngineConfig config = CONFIG.toBuilder().peerIdleTimeoutNs(2_000_000_000L)
                .peerSilenceTimeoutNs(500_000_000L).build();
        EnginePair pair = new EnginePair(config);
        pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {1}));
        EnginePairTest.runUntilQuiet(pair, new Random(1));
        for (int i = 0; i < 8; i++) { // acks settle
            pair.advance(config.resendIntervalNs() / 4);
            EnginePairTest.runUntilQuiet(pair, new Random(i));
        }
        assertThat(pair.server.activeServerRpcs()).isZero();
        assertThat(pair.server.knownPeers()).isEqualTo(1);
        assertThat(pair.server.nextTimeoutNs()).as("still ticking for the idle peer").isNotEqualTo(Long.MAX_VALUE);
        for (int i = 0; i < 20; i++) {
            pair.nowNs = Math.max(pair.nowNs, pair.server.nextTimeoutNs());
            pair.server.onTimeout(pair.nowNs);
        }
        assertThat(pair.server.knownPeers()).isZero();
        assertThat(pair.server.counters().peersForgotten()).isEqualTo(1);
        assertThat(pair.server.nextTimeoutNs()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void shouldRefuseARequestUnexecutedAndTellTheClientWhy() {
        EnginePair pair = new EnginePair(CONFIG);
        long rpcId = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {7}));
        EnginePair.Packet request = pair.firstContact();
        pair.deliverShuffled(new Random(1));
        HomaEvent.RequestReceived received = (HomaEvent.RequestReceived) pair.server.pollEvent();
        assertThat(pair.server.refuseRequest(pair.nowNs, received.client(), received.rpcId())).isTrue();
        assertThat(pair.server.refuseRequest(pair.nowNs, received.client(), received.rpcId())).as("once").isFalse();
        assertThat(pair.server.counters().requestsRefused()).isEqualTo(1);

        pair.collect();
        EnginePair.Packet unknown = ofType(pair.inFlight, PacketType.RPC_UNKNOWN).get(0);
        assertThat(unknown.bytes()[HomaHeader.REASON_OFFSET]).isEqualTo((byte) HomaHeader.REASON_SHUTTING_DOWN);
        pair.deliverShuffled(new Random(2));
        HomaEvent.RpcFailed failed = (HomaEvent.RpcFailed) pair.client.pollEvent();
        assertThat(failed.rpcId()).isEqualTo(rpcId);
        assertThat(failed.reason()).isEqualTo(HomaEvent.Reason.SERVER_SHUTTING_DOWN);
        assertThat(failed.detail()).contains("without executing it");

        // A late copy of the request never executes: the rpcid is finished.
        pair.deliver(request);
        assertThat(pair.server.pollEvent()).isNull();
        // An RPC_UNKNOWN without the byte (a draft-only server) is the ordinary "lost" failure.
        long other = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {8}));
        java.nio.ByteBuffer plain = java.nio.ByteBuffer.allocate(io.homa.engine.internal.wire.ControlHeader.HEADER_LENGTH);
        new io.homa.engine.internal.wire.ControlHeader().wrap(plain, 0).writeCommon(PacketType.RPC_UNKNOWN,
                EnginePair.SERVER.getPort(), EnginePair.CLIENT.getPort(), other | HomaHeader.FROM_SERVER_BIT);
        pair.client.onPacket(pair.nowNs, EnginePair.SERVER, plain);
        assertThat(((HomaEvent.RpcFailed) pair.client.pollEvent()).reason()).isEqualTo(HomaEvent.Reason.SERVER_LOST_RPC);
    }

    @Test
    void shouldFailOnlyTheUnsentRequestsToAServerThatIsShuttingDown() {
        EnginePair pair = new EnginePair(CONFIG);
        java.net.InetSocketAddress other = new java.net.InetSocketAddress("10.0.0.3", 4000);
        long sent = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {1}));
        pair.collect(); // its first packet left
        long unsentA = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {2}));
        long unsentB = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {3}));
        long elsewhere = pair.client.sendRequest(pair.nowNs, other, SendOptions.of(new byte[] {4}));

        assertThat(pair.client.failUnsentRequests(pair.nowNs, EnginePair.SERVER)).isEqualTo(2);

        List<HomaEvent.RpcFailed> failed = new ArrayList<>();
        HomaEvent event;
        while ((event = pair.client.pollEvent()) != null) {
            failed.add((HomaEvent.RpcFailed) event);
        }
        assertThat(failed).extracting(HomaEvent.RpcFailed::rpcId).containsExactlyInAnyOrder(unsentA, unsentB);
        assertThat(failed).allSatisfy(f -> assertThat(f.reason()).isEqualTo(HomaEvent.Reason.SERVER_SHUTTING_DOWN));
        assertThat(pair.client.activeClientRpcs()).as("the one sent and the one to another server").isEqualTo(2);
        pair.inFlight.clear();
        pair.collect();
        assertThat(ofType(pair.inFlight, PacketType.DATA)).as("nothing of the failed ones leaves")
                .allSatisfy(p -> assertThat(new DataHeader().wrap(ByteBuffer.wrap(p.bytes()), 0).clientRpcId())
                        .isIn(sent, elsewhere));
    }

    @Test
    void shouldRefuseAFirstContactAtOnceWhileRefusingFirstContacts() {
        EnginePair pair = new EnginePair(CONFIG);
        pair.server.refuseFirstContacts(); // what a draining transport does
        long rpcId = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {1}));
        pair.collect();
        pair.deliverShuffled(new Random(1));
        pair.collect();
        List<EnginePair.Packet> answer = new ArrayList<>(pair.inFlight);
        assertThat(answer).extracting(EngineProtocolTest::typeOf).containsOnly(PacketType.RPC_UNKNOWN);
        assertThat(answer.get(0).bytes()[HomaHeader.REASON_OFFSET]).isEqualTo((byte) HomaHeader.REASON_SHUTTING_DOWN);
        pair.deliverShuffled(new Random(2));
        HomaEvent.RpcFailed failed = (HomaEvent.RpcFailed) pair.client.pollEvent();
        assertThat(failed.rpcId()).isEqualTo(rpcId);
        assertThat(failed.reason()).isEqualTo(HomaEvent.Reason.SERVER_SHUTTING_DOWN);
        assertThat(pair.server.counters().requestsRefused()).isEqualTo(1);
        assertThat(pair.server.counters().firstContactResends()).isZero();
        assertThat(pair.server.counters().requestsDelivered()).isZero();
    }

    @Test
    void shouldRefuseANewRequestOnItsFirstPacketWhileOverloadedAndNeverDeliverIt() {
        EnginePair pair = new EnginePair(CONFIG);
        pair.server.refuseNewRequests(true); // what a full transport does
        long refused = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {1}));
        pair.collect();
        pair.deliverShuffled(new Random(1));
        assertThat(pair.server.pollEvent()).as("refused before delivery").isNull();
        assertThat(pair.server.activeServerRpcs()).as("no state kept for it").isZero();
        pair.collect();
        List<EnginePair.Packet> answer = new ArrayList<>(pair.inFlight);
        assertThat(answer).extracting(EngineProtocolTest::typeOf).containsOnly(PacketType.RPC_UNKNOWN);
        assertThat(answer.get(0).bytes()[HomaHeader.REASON_OFFSET]).isEqualTo((byte) HomaHeader.REASON_OVERLOADED);
        pair.deliverShuffled(new Random(2));
        HomaEvent.RpcFailed failed = (HomaEvent.RpcFailed) pair.client.pollEvent();
        assertThat(failed.rpcId()).isEqualTo(refused);
        assertThat(failed.reason()).isEqualTo(HomaEvent.Reason.SERVER_OVERLOADED);
        assertThat(failed.detail()).contains("without executing it", "overloaded");
        assertThat(pair.server.counters().requestsRefusedOverloaded()).isEqualTo(1);
        assertThat(pair.server.counters().requestsRefused()).as("not a shutdown refusal").isZero();
        assertThat(pair.server.counters().requestsDelivered()).isZero();

        // Overload is momentary: the client sends its next request to that server at once, and once
        // the server has room again it runs.
        pair.server.refuseNewRequests(false);
        long next = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {2}));
        assertThat(pair.client.pollEvent()).as("nothing failed on the client's side").isNull();
        List<Long> delivered = new ArrayList<>();
        List<Long> answered = new ArrayList<>();
        for (int step = 0; step < 100 && answered.isEmpty(); step++) {
            pair.collect();
            HomaEvent event;
            while ((event = pair.server.pollEvent()) != null) {
                HomaEvent.RequestReceived received = (HomaEvent.RequestReceived) event;
                delivered.add(received.rpcId());
                pair.server.sendResponse(pair.nowNs, received.client(), received.rpcId(), SendOptions.of(received.message()));
            }
            while ((event = pair.client.pollEvent()) != null) {
                answered.add(((HomaEvent.ResponseReceived) event).rpcId());
            }
            pair.deliverShuffled(new Random(3 + step));
            pair.nowNs += 1_000;
        }
        assertThat(delivered).containsExactly(next);
        assertThat(answered).containsExactly(next);
    }

    @Test
    void shouldRefuseADeliveredRequestAsOverloadedWithoutHoldingBackTheClient() {
        EnginePair pair = new EnginePair(CONFIG);
        long rpcId = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {7}));
        EnginePair.Packet request = pair.firstContact();
        pair.deliverShuffled(new Random(1));
        HomaEvent.RequestReceived received = (HomaEvent.RequestReceived) pair.server.pollEvent();
        long queued = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {8}));
        assertThat(pair.server.refuseOverloaded(pair.nowNs, received.client(), received.rpcId())).isTrue();
        assertThat(pair.server.refuseOverloaded(pair.nowNs, received.client(), received.rpcId())).as("once").isFalse();
        assertThat(pair.server.counters().requestsRefusedOverloaded()).isEqualTo(1);

        pair.collect();
        List<EnginePair.Packet> unknown = ofType(pair.inFlight, PacketType.RPC_UNKNOWN);
        assertThat(unknown).hasSize(1);
        assertThat(unknown.get(0).bytes()[HomaHeader.REASON_OFFSET]).isEqualTo((byte) HomaHeader.REASON_OVERLOADED);
        pair.deliver(unknown.get(0));
        HomaEvent.RpcFailed failed = (HomaEvent.RpcFailed) pair.client.pollEvent();
        assertThat(failed.rpcId()).isEqualTo(rpcId);
        assertThat(failed.reason()).isEqualTo(HomaEvent.Reason.SERVER_OVERLOADED);
        assertThat(pair.client.pollEvent()).as("the other RPC to that server goes on").isNull();
        assertThat(pair.client.activeClientRpcs()).isEqualTo(1);

        // A late copy of the refused request never executes: the rpcid is finished.
        pair.deliver(request);
        HomaEvent event;
        while ((event = pair.server.pollEvent()) != null) {
            assertThat(((HomaEvent.RequestReceived) event).rpcId()).isNotEqualTo(rpcId);
        }
        assertThat(queued).isNotEqualTo(rpcId);
    }

    @Test
    void shouldRejectLateDuplicatesBelowTheFinishedFloor() {
        EnginePair pair = new EnginePair(CONFIG);
        pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {1}));
        EnginePair.Packet first = pair.firstContact();
        EnginePairTest.runUntilQuiet(pair, new Random(1));
        // Many more RPCs finish than the server keeps individually.
        int more = Peer.FINISHED_RPC_IDS_KEPT + 100;
        for (int i = 0; i < more; i++) {
            pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {2}));
        }
        for (int i = 0; i < 50; i++) {
            EnginePairTest.runUntilQuiet(pair, new Random(i));
            pair.advance(CONFIG.resendIntervalNs() / 4);
        }
        assertThat(pair.server.counters().requestsDelivered()).isEqualTo(more + 1);
        assertThat(pair.server.activeServerRpcs()).isZero();
        // The very first request arrives again, long after: it must not execute again.
        pair.deliver(first);
        assertThat(pair.server.pollEvent()).isNull();
        assertThat(pair.server.counters().requestsDelivered()).isEqualTo(more + 1);
    }

    @Test
    void shouldNotReserveDeclaredLengthsAndDropNewMessagesBeyondTheInboundBudget() {
        EngineConfig config = CONFIG.toBuilder().maxInboundBufferBytes(1024 * 1024).build();
        EnginePair pair = new EnginePair(config);
        DataHeader data = new DataHeader();
        for (int i = 0; i < 1000; i++) {
            ByteBuffer packet = ByteBuffer.allocate(DataHeader.HEADER_LENGTH + 1000);
            data.wrap(packet, 0).writeCommon(PacketType.DATA, 5000 + i, EnginePair.SERVER.getPort(), 2L * (i + 1))
                    .messageLength(config.maxMessageBytes()).incoming(60_000).dataOffset(0);
            pair.server.onPacket(pair.nowNs, new java.net.InetSocketAddress("10.0.1.1", 5000 + i), packet);
        }
        // Each first packet holds one 16 KiB chunk, not 1 MiB; past 1 MiB new messages are refused.
        assertThat(pair.server.inboundBufferedBytes()).isLessThanOrEqualTo(1024 * 1024 + InboundMessage.CHUNK_BYTES);
        assertThat(pair.server.activeServerRpcs()).isEqualTo(64);
        assertThat(pair.server.counters().droppedForBufferSpace()).isEqualTo(1000 - 64);
        assertRealRpcStillWorks(pair);
    }

    private static void assertRealRpcStillWorks(EnginePair pair) {
        pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {9}));
        pair.collect();
        pair.deliverShuffled(new Random(5));
        // Over budget, the server refuses the new request; it is accepted once the junk is reclaimed.
        long steps = 4 * CONFIG.peerSilenceTimeoutNs() / (CONFIG.resendIntervalNs() / 2);
        for (int i = 0; i < steps && pair.client.counters().rpcsCompleted() == 0; i++) {
            pair.advance(CONFIG.resendIntervalNs() / 2);
            pair.collect();
            pair.inFlight.removeIf(p -> !p.to().equals(EnginePair.SERVER) && !p.to().equals(EnginePair.CLIENT));
            pair.deliverShuffled(new Random(i));
            HomaEvent event;
            while ((event = pair.server.pollEvent()) != null) {
                HomaEvent.RequestReceived request = (HomaEvent.RequestReceived) event;
                pair.server.sendResponse(pair.nowNs, request.client(), request.rpcId(), SendOptions.of(request.message()));
            }
            while (pair.client.pollEvent() != null) {
                // the response
            }
        }
        assertThat(pair.client.counters().rpcsCompleted()).isEqualTo(1);
        assertThat(pair.server.inboundBufferedBytes()).isZero();
    }
}
