package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.homa.engine.wire.PacketType;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class EnginePairTest {
    private static final EngineConfig CONFIG = EngineConfig.defaults();
    private static final int ONE_PACKET = CONFIG.maxDataPayloadBytes();

    static byte[] randomBytes(Random random, int length) {
        byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    @ParameterizedTest(name = "request and response of {0} bytes, shuffled delivery")
    @ValueSource(ints = {1, 1416, 1417, 100_000, 1_048_576})
    void shouldCarryOneRpcBothWaysWithShuffledDelivery(int lengthBytes) {
        assertThat(ONE_PACKET).isEqualTo(1416);
        Random random = new Random(lengthBytes);
        EnginePair pair = new EnginePair(CONFIG);
        byte[] request = randomBytes(random, lengthBytes);
        byte[] response = randomBytes(random, lengthBytes);

        long rpcId = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(request));
        assertThat(rpcId % 2).isZero();

        HomaEvent.ResponseReceived done = pair.runToResponse(random, 10_000, received -> {
            assertThat(received.rpcId()).isEqualTo(rpcId);
            assertThat(received.client()).isEqualTo(EnginePair.CLIENT);
            assertThat(received.message()).isEqualTo(request);
            assertThat(pair.server.sendResponse(pair.nowNs, received.client(), received.rpcId(), SendOptions.of(response))).isTrue();
        });
        assertThat(done).as("response arrived").isNotNull();
        assertThat(done.rpcId()).isEqualTo(rpcId);
        assertThat(done.message()).isEqualTo(response);
        assertThat(pair.client.activeClientRpcs()).isZero();
        int expectedPackets = (lengthBytes + ONE_PACKET - 1) / ONE_PACKET;
        // First contact (issue 14): the client knew no epoch of the server, so the server asked for
        // the request's unscheduled packets again (one RESEND) before it ran it; sent twice.
        int firstContactPackets = (Math.min(lengthBytes, CONFIG.unscheduledBytes()) + ONE_PACKET - 1) / ONE_PACKET;
        assertThat(pair.server.counters().firstContactResends()).isEqualTo(1);
        assertThat(pair.client.counters().packetsSent(PacketType.DATA)).isEqualTo(expectedPackets + firstContactPackets);
        assertThat(pair.server.counters().packetsSent(PacketType.DATA)).isEqualTo(expectedPackets);
        assertThat(pair.server.counters().addressesValidated()).as("the client echoed the address token").isEqualTo(1);
        assertThat(pair.server.counters().bytesHeldForValidation()).isZero();
        assertThat(pair.client.counters().resendsSent()).isZero();
        if (lengthBytes > CONFIG.unscheduledBytes()) {
            assertThat(pair.server.counters().packetsSent(PacketType.GRANT)).isPositive();
        } else {
            assertThat(pair.server.counters().packetsSent(PacketType.GRANT)).isZero();
        }
    }

    @ParameterizedTest(name = "message of a {0}-byte head and a body, 5,000 bytes in all")
    @ValueSource(ints = {0, 1, 100, 1416, 1417, 4999, 5000})
    void shouldSendHeadThenBodyAsOneMessage(int headBytes) {
        Random random = new Random(headBytes);
        EnginePair pair = new EnginePair(CONFIG);
        byte[] request = randomBytes(random, 5_000);
        byte[] response = randomBytes(random, 5_000);
        byte[] requestHead = Arrays.copyOfRange(request, 0, headBytes);
        byte[] requestBody = Arrays.copyOfRange(request, headBytes, request.length);

        long rpcId = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(requestHead, requestBody));
        HomaEvent.ResponseReceived done = pair.runToResponse(random, 1_000, received -> {
            assertThat(received.message()).as("request as sent, head then body").isEqualTo(request);
            assertThat(pair.server.sendResponse(pair.nowNs, received.client(), received.rpcId(),
                    SendOptions.of(Arrays.copyOfRange(response, 0, headBytes),
                    Arrays.copyOfRange(response, headBytes, response.length)))).isTrue();
        });
        assertThat(done).as("response arrived").isNotNull();
        assertThat(done.rpcId()).isEqualTo(rpcId);
        assertThat(done.message()).as("response as sent, head then body").isEqualTo(response);
    }

    @ParameterizedTest(name = "{0}-byte message sent in random parts, answered with the parts it arrived in")
    @ValueSource(ints = {1, 1416, 16_384, 16_385, 100_000, 1_048_576})
    void shouldSendAnyPartsAsOneMessageAndHandOutChunksThatNeedNoJoining(int lengthBytes) {
        Random random = new Random(lengthBytes);
        EnginePair pair = new EnginePair(CONFIG);
        byte[] request = randomBytes(random, lengthBytes);
        byte[][] requestParts = randomParts(random, request);

        long rpcId = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(requestParts));
        HomaEvent.ResponseReceived done = pair.runToResponse(random, 10_000, received -> {
            assertThat(received.message()).as("request as sent, part after part").isEqualTo(request);
            assertChunks(received.parts(), lengthBytes);
            // The echo sends the received chunks themselves: nothing is joined or copied on the way.
            assertThat(pair.server.sendResponse(pair.nowNs, received.client(), received.rpcId(), SendOptions.of(received.parts())))
                    .isTrue();
        });
        assertThat(done).as("response arrived").isNotNull();
        assertThat(done.rpcId()).isEqualTo(rpcId);
        assertThat(done.message()).as("the request echoed").isEqualTo(request);
        assertChunks(done.parts(), lengthBytes);
        if (lengthBytes <= InboundMessage.CHUNK_BYTES) {
            assertThat(done.message()).as("one chunk is handed out as it is").isSameAs(done.parts()[0]);
        }
    }

    /** {@code message} cut at random offsets into parts, some of them empty. */
    private static byte[][] randomParts(Random random, byte[] message) {
        int cuts = random.nextInt(6);
        int[] offsets = new int[cuts + 2];
        for (int i = 1; i <= cuts; i++) {
            offsets[i] = random.nextInt(message.length + 1);
        }
        offsets[cuts + 1] = message.length;
        Arrays.sort(offsets);
        byte[][] parts = new byte[cuts + 2][];
        parts[0] = new byte[0];
        for (int i = 1; i < parts.length; i++) {
            parts[i] = Arrays.copyOfRange(message, offsets[i - 1], offsets[i]);
        }
        return parts;
    }

    /** Received parts are the engine's chunks: {@value InboundMessage#CHUNK_BYTES} bytes each but the last. */
    private static void assertChunks(byte[][] parts, int lengthBytes) {
        assertThat(parts.length).isEqualTo((lengthBytes + InboundMessage.CHUNK_BYTES - 1) / InboundMessage.CHUNK_BYTES);
        for (int i = 0; i < parts.length - 1; i++) {
            assertThat(parts[i]).hasSize(InboundMessage.CHUNK_BYTES);
        }
        assertThat(MessageBytes.lengthBytes(parts)).isEqualTo(lengthBytes);
    }

    @Test
    void shouldRefuseAnEmptyOrOversizedTwoPartMessage() {
        EnginePair pair = new EnginePair(CONFIG);
        assertThatIllegalArgumentException()
                .isThrownBy(() -> pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[][] {new byte[0]})))
                .withMessageContaining("was 0");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> pair.client.sendRequest(pair.nowNs, EnginePair.SERVER,
                        SendOptions.of(new byte[][] {new byte[CONFIG.maxMessageBytes() / 2], new byte[CONFIG.maxMessageBytes() / 2 + 1]})))
                .withMessageContaining("was " + (CONFIG.maxMessageBytes() + 1));
        assertThatIllegalArgumentException()
                .isThrownBy(() -> pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[0], new byte[0])))
                .withMessageContaining("was 0");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[1],
                        new byte[CONFIG.maxMessageBytes()])))
                .withMessageContaining("was " + (CONFIG.maxMessageBytes() + 1));
        assertThat(pair.client.activeClientRpcs()).isZero();
    }

    @Test
    void shouldReleaseServerStateAfterExplicitAck() {
        EnginePair pair = new EnginePair(CONFIG);
        pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {42}));
        runUntilQuiet(pair, new Random(1));
        assertThat(pair.client.activeClientRpcs()).isZero();
        assertThat(pair.server.activeServerRpcs()).as("held until ACK").isEqualTo(1);
        // The client's next timer tick flushes its pending ACK, before the server's NEED_ACK is due.
        pair.advance(CONFIG.resendIntervalNs() / 4);
        runUntilQuiet(pair, new Random(2));
        assertThat(pair.server.activeServerRpcs()).isZero();
        assertThat(pair.client.counters().packetsSent(PacketType.ACK)).isEqualTo(1);
    }

    @Test
    void shouldRecoverFromLostPacketsWithResend() {
        EnginePair pair = new EnginePair(CONFIG);
        Random random = new Random(7);
        byte[] request = randomBytes(random, 200_000);
        long rpcId = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(request));
        HomaEvent.ResponseReceived done = null;
        for (int step = 0; step < 100_000 && done == null; step++) {
            pair.collect();
            // Drop 20% of packets, deliver the rest shuffled.
            pair.inFlight.removeIf(p -> random.nextInt(5) == 0);
            pair.deliverShuffled(random);
            pair.advance(1_000_000); // 1 ms per step: RESEND timers fire
            HomaEvent event;
            while ((event = pair.server.pollEvent()) != null) {
                HomaEvent.RequestReceived received = (HomaEvent.RequestReceived) event;
                assertThat(received.message()).isEqualTo(request);
                pair.server.sendResponse(pair.nowNs, received.client(), received.rpcId(), SendOptions.of(received.message()));
            }
            while ((event = pair.client.pollEvent()) != null) {
                assertThat(event).isInstanceOf(HomaEvent.ResponseReceived.class);
                done = (HomaEvent.ResponseReceived) event;
            }
        }
        assertThat(done).isNotNull();
        assertThat(done.rpcId()).isEqualTo(rpcId);
        assertThat(done.message()).isEqualTo(request);
        assertThat(pair.client.counters().resendsSent() + pair.server.counters().resendsSent()).isPositive();
        assertThat(pair.server.counters().requestsDelivered()).isEqualTo(1);
    }

    @Test
    void shouldTimeOutWhenServerIsSilent() {
        EnginePair pair = new EnginePair(CONFIG);
        long rpcId = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {1, 2, 3}));
        long startNs = pair.nowNs;
        HomaEvent event = null;
        for (int step = 0; step < 100_000 && event == null; step++) {
            pair.collect();
            pair.inFlight.clear(); // the server is gone
            pair.advance(CONFIG.resendIntervalNs() / 2);
            event = pair.client.pollEvent();
        }
        long silenceNs = pair.nowNs - startNs;
        assertThat(event).isInstanceOf(HomaEvent.RpcFailed.class);
        HomaEvent.RpcFailed failed = (HomaEvent.RpcFailed) event;
        assertThat(failed.rpcId()).isEqualTo(rpcId);
        assertThat(failed.reason()).isEqualTo(HomaEvent.Reason.TIMEOUT);
        assertThat(silenceNs).as("fails at the silence budget, not before")
                .isBetween(CONFIG.peerSilenceTimeoutNs(), CONFIG.peerSilenceTimeoutNs() + CONFIG.resendIntervalNs());
        // Backoff: RESENDs after 10, 30, 70, 150, 310, 630 ms, then every second (the cap) until 5 s.
        assertThat(pair.client.counters().resendsSent()).as("backed off, not one per interval").isEqualTo(10);
        assertThat(pair.client.activeClientRpcs()).isZero();
    }

    static void runUntilQuiet(EnginePair pair, Random random) {
        for (int step = 0; step < 10_000; step++) {
            int moved = pair.collect();
            HomaEvent event;
            while ((event = pair.server.pollEvent()) != null) {
                if (event instanceof HomaEvent.RequestReceived received) {
                    pair.server.sendResponse(pair.nowNs, received.client(), received.rpcId(), SendOptions.of(received.message()));
                    moved++;
                }
            }
            while (pair.client.pollEvent() != null) {
                moved++;
            }
            if (moved == 0 && pair.inFlight.isEmpty()) {
                return;
            }
            pair.deliverShuffled(random);
            pair.nowNs += 1_000;
        }
    }
}
