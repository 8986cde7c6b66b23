package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.homa.engine.internal.wire.AckHeader;
import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.GrantHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Bad input is dropped and counted, never thrown, and the engine keeps working. */
class MalformedPacketTest {
    private static final EngineConfig CONFIG = EngineConfig.defaults();

    static ByteBuffer packet(int lengthBytes, PacketType type, Consumer<ByteBuffer> fill) {
        ByteBuffer buffer = ByteBuffer.allocate(lengthBytes);
        if (lengthBytes >= HomaHeader.COMMON_HEADER_LENGTH) {
            new io.homa.engine.internal.wire.ControlHeader().wrap(buffer, 0).writeCommon(type, EnginePair.CLIENT.getPort(), EnginePair.SERVER.getPort(), 1234);
        }
        fill.accept(buffer);
        return buffer;
    }

    static Stream<Arguments> malformed() {
        return Stream.of(
                Arguments.of("empty", ByteBuffer.allocate(0)),
                Arguments.of("5 bytes", ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5})),
                Arguments.of("27 bytes", ByteBuffer.allocate(27)),
                Arguments.of("unknown type 99", packet(28, PacketType.DATA, b -> b.put(HomaHeader.TYPE_OFFSET, (byte) 99))),
                Arguments.of("unused type 22", packet(28, PacketType.DATA, b -> b.put(HomaHeader.TYPE_OFFSET, (byte) 22))),
                Arguments.of("DATA shorter than its header", packet(40, PacketType.DATA, b -> {})),
                Arguments.of("DATA message length 0", packet(60, PacketType.DATA, b -> b.putInt(DataHeader.MESSAGE_LENGTH_OFFSET, 0))),
                Arguments.of("DATA message length 2^30", packet(60, PacketType.DATA,
                        b -> b.putInt(DataHeader.MESSAGE_LENGTH_OFFSET, 1 << 30))),
                Arguments.of("DATA negative message length", packet(60, PacketType.DATA,
                        b -> b.putInt(DataHeader.MESSAGE_LENGTH_OFFSET, -5))),
                Arguments.of("DATA bytes beyond message length", packet(60, PacketType.DATA, b -> {
                    b.putInt(DataHeader.MESSAGE_LENGTH_OFFSET, 10);
                    b.putInt(DataHeader.DATA_OFFSET_OFFSET, 8);
                })),
                Arguments.of("DATA negative offset", packet(60, PacketType.DATA, b -> {
                    b.putInt(DataHeader.MESSAGE_LENGTH_OFFSET, 10);
                    b.putInt(DataHeader.DATA_OFFSET_OFFSET, -1);
                })),
                Arguments.of("GRANT too short", packet(30, PacketType.GRANT, b -> {})),
                Arguments.of("GRANT priority 8", packet(GrantHeader.HEADER_LENGTH, PacketType.GRANT,
                        b -> b.put(GrantHeader.PRIORITY_OFFSET, (byte) 8))),
                Arguments.of("RESEND too short", packet(33, PacketType.RESEND, b -> {})),
                Arguments.of("CUTOFFS too short", packet(40, PacketType.CUTOFFS, b -> {})),
                Arguments.of("ACK too short", packet(29, PacketType.ACK, b -> {})),
                Arguments.of("ACK lying about its count", packet(AckHeader.packetLength(2), PacketType.ACK,
                        b -> b.putShort(AckHeader.NUM_ACKS_OFFSET, (short) 60000))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void shouldDropAndCountMalformedPacketAndKeepServing(String name, ByteBuffer bad) {
        EnginePair pair = new EnginePair(CONFIG);
        assertThatCode(() -> pair.server.onPacket(pair.nowNs, EnginePair.CLIENT, bad)).doesNotThrowAnyException();
        assertThat(pair.server.counters().malformedPackets()).isEqualTo(1);
        assertThat(pair.server.activeServerRpcs()).isZero();
        assertRoundTripWorks(pair);
    }

    @Test
    void shouldSurviveAFloodOfRandomAndMutatedPackets() {
        EnginePair pair = new EnginePair(CONFIG);
        Random random = new Random(42);
        int[] types = {16, 17, 18, 19, 20, 21, 23, 24, 0, 255};
        for (int i = 0; i < 200_000; i++) {
            int length = random.nextInt(4) == 0 ? random.nextInt(28) : 28 + random.nextInt(100);
            byte[] bytes = new byte[length];
            random.nextBytes(bytes);
            if (length > HomaHeader.TYPE_OFFSET && random.nextBoolean()) {
                bytes[HomaHeader.TYPE_OFFSET] = (byte) types[random.nextInt(types.length)];
            }
            if (length >= DataHeader.HEADER_LENGTH && random.nextBoolean()) {
                // Plausible lengths so that some DATA gets past validation.
                ByteBuffer.wrap(bytes).putInt(DataHeader.MESSAGE_LENGTH_OFFSET, 1 + random.nextInt(200))
                        .putInt(DataHeader.DATA_OFFSET_OFFSET, random.nextInt(100));
            }
            ByteBuffer packet = ByteBuffer.wrap(bytes);
            assertThatCode(() -> pair.server.onPacket(pair.nowNs, EnginePair.CLIENT, packet)).doesNotThrowAnyException();
            assertThatCode(() -> pair.client.onPacket(pair.nowNs, EnginePair.SERVER, packet.rewind())).doesNotThrowAnyException();
        }
        assertThat(pair.server.counters().malformedPackets()).isPositive();
        // Answers to the junk (GRANT, RESEND, ACK...) go out without error; then real traffic works.
        pair.collect();
        pair.inFlight.clear();
        drainEvents(pair);
        assertRoundTripWorks(pair);
    }

    private static void drainEvents(EnginePair pair) {
        while (pair.server.pollEvent() != null) {
            // junk requests that happened to be complete
        }
        while (pair.client.pollEvent() != null) {
            // nothing expected
        }
    }

    private static void assertRoundTripWorks(EnginePair pair) {
        byte[] request = {1, 2, 3};
        long rpcId = pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(request));
        EnginePairTest.runUntilQuiet(pair, new Random(3));
        assertThat(pair.client.activeClientRpcs()).as("rpc %d completed", rpcId).isZero();
        assertThat(pair.client.counters().rpcsCompleted()).isEqualTo(1);
    }
}
