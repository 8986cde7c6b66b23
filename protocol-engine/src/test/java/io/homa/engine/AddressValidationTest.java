package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.GrantHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import io.homa.engine.internal.wire.ResendHeader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Address validation (issue 14, item 3): a server sends an address that has not echoed its address
 * token at most 3x what it received from it, however the forger asks (a request for a long
 * response, RESENDs, GRANTs); a real client echoes the token from its first round trip and is not
 * held back at all.
 */
class AddressValidationTest {
    private static final EngineConfig CONFIG = EngineConfig.defaults();
    private static final InetSocketAddress SERVER = new InetSocketAddress("10.0.0.2", 4000);
    /** The victim: a host whose address the forger writes as the source. */
    private static final InetSocketAddress VICTIM = new InetSocketAddress("10.0.0.9", 7000);
    private static final int RESPONSE_BYTES = 1_000_000;

    private final HomaEngine server = new HomaEngine(CONFIG, SERVER.getPort(), 2_000);
    private long nowNs = 1_000_000_000L;
    private long bytesToVictim;
    private long bytesFromVictim;

    private void fromVictim(ByteBuffer packet) {
        bytesFromVictim += packet.remaining();
        server.onPacket(nowNs, VICTIM, packet);
    }

    private void drainServer() {
        while (server.pollTransmit(nowNs, (to, packet, priority) -> {
            if (to.equals(VICTIM)) {
                bytesToVictim += packet.remaining();
            }
        }, 64) > 0) {
            // drain
        }
    }

    /** A one-packet request DATA as a draft-only client writes it (no epoch, no token). */
    private static ByteBuffer request(long rpcId) {
        ByteBuffer packet = ByteBuffer.allocate(DataHeader.HEADER_LENGTH + 8);
        new DataHeader().wrap(packet, 0).writeCommon(PacketType.DATA, VICTIM.getPort(), SERVER.getPort(), rpcId)
                .messageLength(8).incoming(8).dataOffset(0).segmentOffset(0);
        return packet;
    }

    private static ByteBuffer resend(long rpcId, int offset, int length) {
        ByteBuffer packet = ByteBuffer.allocate(ResendHeader.HEADER_LENGTH);
        ((ResendHeader) new ResendHeader().wrap(packet, 0)
                .writeCommon(PacketType.RESEND, VICTIM.getPort(), SERVER.getPort(), rpcId))
                .resendOffset(offset).length(length).priority(7);
        return packet;
    }

    private static ByteBuffer grant(long rpcId, int offset, boolean resendAll) {
        ByteBuffer packet = ByteBuffer.allocate(GrantHeader.HEADER_LENGTH);
        ((GrantHeader) new GrantHeader().wrap(packet, 0)
                .writeCommon(PacketType.GRANT, VICTIM.getPort(), SERVER.getPort(), rpcId))
                .grantOffset(offset).priority(0).resendAll(resendAll);
        return packet;
    }

    @Test
    void aForgedRequestShouldDrawAtMostThreeTimesWhatTheVictimsAddressSent() {
        long rpcId = 4_000;
        fromVictim(request(rpcId));
        HomaEvent.RequestReceived received = (HomaEvent.RequestReceived) server.pollEvent();
        assertThat(server.sendResponse(nowNs, received.client(), received.rpcId(), SendOptions.of(new byte[RESPONSE_BYTES]))).isTrue();
        drainServer();
        assertThat(bytesToVictim).as("the response's unscheduled part, cut to the credit").isPositive()
                .isLessThanOrEqualTo(3 * bytesFromVictim);

        // The forger asks for all of it every way the protocol has, without the token.
        for (int i = 0; i < 2_000; i++) {
            nowNs += 1_000;
            fromVictim(resend(rpcId, 0, RESPONSE_BYTES));
            fromVictim(grant(rpcId, RESPONSE_BYTES, i % 2 == 0));
            drainServer();
        }
        System.out.printf("Address validation: %,d B from the victim's address drew %,d B to it (%.2fx) for a"
                + " %,d B response%n", bytesFromVictim, bytesToVictim, (double) bytesToVictim / bytesFromVictim, RESPONSE_BYTES);
        assertThat(bytesToVictim).isLessThanOrEqualTo(3 * bytesFromVictim);
        assertThat(bytesFromVictim).isLessThan(200_000);
        assertThat(server.counters().bytesHeldForValidation()).isPositive();
        assertThat(server.counters().addressesValidated()).isZero();
    }

    @Test
    void aGuessedTokenShouldNotValidateTheAddress() {
        long rpcId = 4_000;
        fromVictim(request(rpcId));
        HomaEvent.RequestReceived received = (HomaEvent.RequestReceived) server.pollEvent();
        server.sendResponse(nowNs, received.client(), received.rpcId(), SendOptions.of(new byte[RESPONSE_BYTES]));
        drainServer();
        Random random = new Random(7);
        for (int i = 0; i < 10_000; i++) {
            ByteBuffer packet = grant(rpcId, RESPONSE_BYTES, false);
            new GrantHeader().wrap(packet, 0).addressToken(random.nextLong() & HomaHeader.MAX_ADDRESS_TOKEN);
            fromVictim(packet);
            drainServer();
        }
        assertThat(server.counters().addressesValidated()).isZero();
        assertThat(bytesToVictim).isLessThanOrEqualTo(3 * bytesFromVictim);
    }

    @Test
    void aRealClientShouldBeValidatedInItsFirstRoundTripAndNeverHeldBack() {
        EnginePair pair = new EnginePair(CONFIG);
        byte[] response = new byte[RESPONSE_BYTES];
        new Random(3).nextBytes(response);
        long rpcId = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {1}));
        HomaEvent.ResponseReceived done = pair.runToResponse(new Random(4), 10_000,
                request -> pair.server.sendResponse(pair.nowNs, request.client(), request.rpcId(), SendOptions.of(response)));
        assertThat(done).isNotNull();
        assertThat(done.rpcId()).isEqualTo(rpcId);
        assertThat(done.message()).isEqualTo(response);
        assertThat(pair.server.counters().addressesValidated()).isEqualTo(1);
        assertThat(pair.server.counters().bytesHeldForValidation()).as("validated before the response existed").isZero();
        assertThat(pair.client.counters().resendsSent()).isZero();
    }

    @Test
    void theTokenShouldDifferPerAddressAndPerServerKey() {
        AddressValidation one = new AddressValidation(true, 1416, new byte[32], new EngineCounters());
        byte[] otherKey = new byte[32];
        otherKey[0] = 1;
        AddressValidation two = new AddressValidation(true, 1416, otherKey, new EngineCounters());
        long token = one.tokenFor(VICTIM);
        assertThat(token).isPositive().isLessThanOrEqualTo(HomaHeader.MAX_ADDRESS_TOKEN);
        assertThat(one.tokenFor(VICTIM)).as("stateless: the same every time").isEqualTo(token);
        assertThat(one.tokenFor(new InetSocketAddress("10.0.0.9", 7001))).isNotEqualTo(token);
        assertThat(one.tokenFor(new InetSocketAddress("10.0.0.8", 7000))).isNotEqualTo(token);
        assertThat(two.tokenFor(VICTIM)).as("a restarted server has another key").isNotEqualTo(token);
    }
}
