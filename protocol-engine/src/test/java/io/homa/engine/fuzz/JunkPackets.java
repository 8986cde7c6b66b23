package io.homa.engine.fuzz;

import io.homa.engine.EngineConfig;
import io.homa.engine.internal.wire.AckHeader;
import io.homa.engine.internal.wire.ControlHeader;
import io.homa.engine.internal.wire.CutoffsHeader;
import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.GrantHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import io.homa.engine.internal.wire.ResendHeader;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/**
 * jqwik generators of bad input for a {@link io.homa.engine.HomaEngine}: fully random datagrams,
 * and packets of each of the 8 types built with the wire flyweights, with lying field values and
 * then mutated (truncated, extended, bytes flipped, type code, S bit or rpcid overwritten).
 *
 * <p>Every generated packet is a {@link Junk}: a description (what jqwik prints for a shrunk
 * counterexample) and a way to build its bytes.
 */
final class JunkPackets {
    /** Engines under test run with these settings; lying values are chosen around them. */
    static final EngineConfig CONFIG = EngineConfig.defaults();
    static final int MAX_MESSAGE_BYTES = CONFIG.maxMessageBytes();
    static final int PAYLOAD_BYTES = CONFIG.maxDataPayloadBytes();

    /** Wire type codes that are not Homa packet types (22 is the draft's unused code). */
    static final List<Integer> UNKNOWN_TYPE_CODES = List.of(0, 1, 15, 22, 25, 99, 128, 254, 255);
    private static final Set<Integer> KNOWN_TYPE_CODES = Set.of(16, 17, 18, 19, 20, 21, 23, 24);

    private JunkPackets() {}

    /** One bad datagram payload. */
    interface Junk {
        byte[] bytes();
    }

    /** Fully random bytes. */
    record RawJunk(byte[] raw) implements Junk {
        @Override
        public byte[] bytes() {
            return raw.clone();
        }

        @Override
        public String toString() {
            return "Raw[" + raw.length + " bytes " + HexFormat.of().formatHex(raw) + "]";
        }
    }

    /** A packet built field by field ({@link Body}), then mutated in order. */
    record BuiltJunk(Common common, Body body, List<Mutation> mutations) implements Junk {
        @Override
        public byte[] bytes() {
            ByteBuffer buffer = ByteBuffer.allocate(body.lengthBytes());
            // Every body is at least as long as the common header; writeCommon zeroes it.
            new ControlHeader().wrap(buffer, 0).writeCommon(body.type(), common.sourcePort(), common.destPort(),
                    common.rpcIdWithSBit());
            body.write(buffer);
            byte[] bytes = buffer.array();
            for (Mutation mutation : mutations) {
                bytes = mutation.apply(bytes);
            }
            return bytes;
        }

        @Override
        public String toString() {
            return "Built[" + common + " " + body + (mutations.isEmpty() ? "" : " then " + mutations) + "]";
        }
    }

    /** Common header fields of a built packet. */
    record Common(int sourcePort, int destPort, long rpcId, boolean sBit) {
        long rpcIdWithSBit() {
            return sBit ? rpcId | HomaHeader.FROM_SERVER_BIT : rpcId & ~HomaHeader.FROM_SERVER_BIT;
        }

        @Override
        public String toString() {
            return "ports " + sourcePort + "->" + destPort + " rpcid " + rpcId + (sBit ? " S=1" : " S=0");
        }
    }

    /** Type-specific part of a built packet. */
    sealed interface Body permits DataBody, GrantBody, ResendBody, CutoffsBody, AckBody, BareBody {
        PacketType type();

        int lengthBytes();

        void write(ByteBuffer buffer);
    }

    record DataBody(int messageLength, int incoming, int dataOffset, int payloadBytes, long ackRpcId,
            int ackServerPort, int cutoffVersion, int retransAndFlags) implements Body {
        @Override
        public PacketType type() {
            return PacketType.DATA;
        }

        @Override
        public int lengthBytes() {
            return DataHeader.HEADER_LENGTH + payloadBytes;
        }

        @Override
        public void write(ByteBuffer buffer) {
            DataHeader data = new DataHeader();
            data.wrap(buffer, 0);
            data.messageLength(messageLength).incoming(incoming).ackRpcId(ackRpcId).ackServerPort(ackServerPort)
                    .cutoffVersion(cutoffVersion).retransmitted((retransAndFlags & 0x100) != 0)
                    .flags(retransAndFlags & 0xff).dataOffset(dataOffset).segmentOffset(dataOffset);
            for (int i = 0; i < payloadBytes; i++) {
                buffer.put(DataHeader.HEADER_LENGTH + i, (byte) (i * 31 + dataOffset));
            }
        }
    }

    record GrantBody(int grantOffset, int priority, boolean resendAll) implements Body {
        @Override
        public PacketType type() {
            return PacketType.GRANT;
        }

        @Override
        public int lengthBytes() {
            return GrantHeader.HEADER_LENGTH;
        }

        @Override
        public void write(ByteBuffer buffer) {
            GrantHeader grant = new GrantHeader().wrap(buffer, 0);
            grant.grantOffset(grantOffset).priority(priority).resendAll(resendAll);
        }
    }

    record ResendBody(int resendOffset, int length, int priority) implements Body {
        @Override
        public PacketType type() {
            return PacketType.RESEND;
        }

        @Override
        public int lengthBytes() {
            return ResendHeader.HEADER_LENGTH;
        }

        @Override
        public void write(ByteBuffer buffer) {
            ResendHeader resend = new ResendHeader().wrap(buffer, 0);
            resend.resendOffset(resendOffset).length(length).priority(priority);
        }
    }

    record CutoffsBody(List<Integer> cutoffs, int version) implements Body {
        @Override
        public PacketType type() {
            return PacketType.CUTOFFS;
        }

        @Override
        public int lengthBytes() {
            return CutoffsHeader.HEADER_LENGTH;
        }

        @Override
        public void write(ByteBuffer buffer) {
            CutoffsHeader header = new CutoffsHeader().wrap(buffer, 0);
            for (int i = 0; i < CutoffsHeader.NUM_PRIORITIES; i++) {
                header.cutoff(i, cutoffs.get(i % cutoffs.size()));
            }
            header.cutoffVersion(version);
        }
    }

    /**
     * ACK listing {@code listed} acks but claiming {@code numAcks} (which may be more than the
     * packet holds).
     */
    record AckBody(int numAcks, List<Long> listed, int listedServerPort) implements Body {
        @Override
        public PacketType type() {
            return PacketType.ACK;
        }

        @Override
        public int lengthBytes() {
            return AckHeader.packetLength(listed.size());
        }

        @Override
        public void write(ByteBuffer buffer) {
            AckHeader ack = new AckHeader().wrap(buffer, 0);
            ack.numAcks(numAcks);
            for (int i = 0; i < listed.size(); i++) {
                ack.ack(i, listed.get(i), listedServerPort);
            }
        }
    }

    /** RPC_UNKNOWN, BUSY or NEED_ACK: a common header only. */
    record BareBody(PacketType type) implements Body {
        @Override
        public int lengthBytes() {
            return ControlHeader.HEADER_LENGTH;
        }

        @Override
        public void write(ByteBuffer buffer) {}
    }

    /** A change applied to a built packet's bytes. */
    sealed interface Mutation permits Truncate, Extend, Flip, SetType, SetSBit, SetRpcId, SetInt {
        byte[] apply(byte[] bytes);
    }

    /** Keeps the first {@code keepBytes} bytes (or all, if fewer). */
    record Truncate(int keepBytes) implements Mutation {
        @Override
        public byte[] apply(byte[] bytes) {
            return Arrays.copyOf(bytes, Math.min(bytes.length, keepBytes));
        }
    }

    /** Appends trailing garbage. */
    record Extend(int extraBytes, byte fill) implements Mutation {
        @Override
        public byte[] apply(byte[] bytes) {
            byte[] longer = Arrays.copyOf(bytes, bytes.length + extraBytes);
            Arrays.fill(longer, bytes.length, longer.length, fill);
            return longer;
        }
    }

    /** XORs one byte (its index taken modulo the length) with a non-zero mask. */
    record Flip(int index, byte mask) implements Mutation {
        @Override
        public byte[] apply(byte[] bytes) {
            if (bytes.length > 0) {
                bytes[Math.floorMod(index, bytes.length)] ^= mask;
            }
            return bytes;
        }
    }

    record SetType(int code) implements Mutation {
        @Override
        public byte[] apply(byte[] bytes) {
            if (bytes.length > HomaHeader.TYPE_OFFSET) {
                bytes[HomaHeader.TYPE_OFFSET] = (byte) code;
            }
            return bytes;
        }
    }

    record SetSBit(boolean fromServer) implements Mutation {
        @Override
        public byte[] apply(byte[] bytes) {
            int last = HomaHeader.RPC_ID_OFFSET + 7;
            if (bytes.length > last) {
                bytes[last] = (byte) (fromServer ? bytes[last] | 1 : bytes[last] & ~1);
            }
            return bytes;
        }
    }

    record SetRpcId(long rpcIdWithSBit) implements Mutation {
        @Override
        public byte[] apply(byte[] bytes) {
            if (bytes.length >= HomaHeader.RPC_ID_OFFSET + 8) {
                ByteBuffer.wrap(bytes).putLong(HomaHeader.RPC_ID_OFFSET, rpcIdWithSBit);
            }
            return bytes;
        }
    }

    /** Overwrites a 32-bit field (any offset past the common header's first bytes) with a lying value. */
    record SetInt(int offset, int value) implements Mutation {
        @Override
        public byte[] apply(byte[] bytes) {
            if (offset >= 0 && offset + 4 <= bytes.length) {
                ByteBuffer.wrap(bytes).putInt(offset, value);
            }
            return bytes;
        }
    }

    // ------------------------------------------------------------------------------------------
    // Field values

    /**
     * Rpcids that junk uses. The real RPCs of the tests use ids far from these (see
     * {@link FuzzWorld}), so junk never names them, even after a bit flip: the tests check that junk
     * does not corrupt state, not what a spoofer knowing live rpcids can do.
     */
    static Arbitrary<Long> junkRpcIds() {
        return Arbitraries.frequencyOf(
                Tuple.of(6, Arbitraries.of(0L, 1L, 2L, 3L, 4L, 6L, 1234L, 1235L)),
                Tuple.of(2, Arbitraries.of(Long.MAX_VALUE, Long.MAX_VALUE - 1, Long.MIN_VALUE, -1L, -2L)),
                Tuple.of(2, Arbitraries.longs().between(2, 10_000)));
    }

    /** Ints around the limits that matter: 0, -1, MIN/MAX, maxMessageBytes +-1, plus any int. */
    static Arbitrary<Integer> lyingInts() {
        return Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.of(0, -1, 1, Integer.MIN_VALUE, Integer.MAX_VALUE, Integer.MAX_VALUE - 1,
                        Integer.MAX_VALUE - PAYLOAD_BYTES, MAX_MESSAGE_BYTES - 1, MAX_MESSAGE_BYTES,
                        MAX_MESSAGE_BYTES + 1, -MAX_MESSAGE_BYTES, EngineConfig.MAX_MESSAGE_BYTES_CAP + 1)),
                Tuple.of(1, Arbitraries.integers()));
    }

    /** Message lengths: plausible small ones, exactly the maximum, or lying. */
    static Arbitrary<Integer> messageLengths() {
        return Arbitraries.frequencyOf(
                Tuple.of(4, Arbitraries.integers().between(1, 3 * PAYLOAD_BYTES)),
                Tuple.of(1, Arbitraries.just(MAX_MESSAGE_BYTES)),
                Tuple.of(2, lyingInts()));
    }

    /** Offsets within a message: small, near the end of a small message, or lying. */
    static Arbitrary<Integer> offsets() {
        return Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.just(0)),
                Tuple.of(3, Arbitraries.integers().between(0, 4 * PAYLOAD_BYTES)),
                Tuple.of(2, lyingInts()));
    }

    /** DATA's incoming: the usual unscheduled amount, anything up to the message cap, or lying. */
    static Arbitrary<Integer> incomings() {
        return Arbitraries.frequencyOf(
                Tuple.of(2, Arbitraries.just(CONFIG.unscheduledBytes())),
                Tuple.of(1, Arbitraries.integers().between(0, EngineConfig.MAX_MESSAGE_BYTES_CAP)),
                Tuple.of(2, lyingInts()));
    }

    static Arbitrary<Integer> payloadLengths() {
        return Arbitraries.frequencyOf(
                Tuple.of(4, Arbitraries.integers().between(0, 64)),
                Tuple.of(1, Arbitraries.integers().between(65, PAYLOAD_BYTES)),
                Tuple.of(1, Arbitraries.just(PAYLOAD_BYTES)));
    }

    static Arbitrary<Integer> priorities() {
        return Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.integers().between(0, 7)),
                Tuple.of(1, Arbitraries.integers().between(8, 255)));
    }

    static Arbitrary<Integer> ports() {
        return Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.of(FuzzWorld.A.getPort(), FuzzWorld.B.getPort())),
                Tuple.of(1, Arbitraries.integers().between(0, 65535)));
    }

    // ------------------------------------------------------------------------------------------
    // Bodies of each type

    /**
     * DATA bodies: one third with every field chosen independently (lying values, offsets past the
     * end...), two thirds consistent (so that junk gets into reassembly and state), among them whole
     * one-packet messages (so that junk requests reach the application).
     */
    static Arbitrary<Body> dataBodies() {
        Arbitrary<Long> ackRpcIds = Arbitraries.frequencyOf(Tuple.of(3, Arbitraries.just(0L)), Tuple.of(1, junkRpcIds()));
        Arbitrary<DataBody> independent = Combinators.combine(messageLengths(), incomings(), offsets(),
                        payloadLengths(), ackRpcIds, ports(), Arbitraries.integers().between(0, 65535),
                        Arbitraries.integers().between(0, 0x1ff))
                .as(DataBody::new);
        Arbitrary<DataBody> whole = Combinators.combine(Arbitraries.integers().between(1, 200), incomings(), ackRpcIds,
                        ports())
                .as((length, incoming, ackRpcId, ackPort) ->
                        new DataBody(length, incoming, 0, length, ackRpcId, ackPort, 0, 0));
        Arbitrary<DataBody> consistent = Combinators.combine(validDataBodies(), ackRpcIds, ports())
                .as((body, ackRpcId, ackPort) -> new DataBody(body.messageLength(), body.incoming(), body.dataOffset(),
                        body.payloadBytes(), ackRpcId, ackPort, 0, 0));
        return Arbitraries.frequencyOf(Tuple.of(3, independent), Tuple.of(2, whole), Tuple.of(4, consistent));
    }

    static Arbitrary<Body> grantBodies() {
        return Combinators.combine(offsets(), priorities(), Arbitraries.of(false, true)).as(GrantBody::new);
    }

    static Arbitrary<Body> resendBodies() {
        // Lying offsets and lengths include pairs whose sum overflows an int.
        return Combinators.combine(offsets(), offsets(), priorities()).as(ResendBody::new);
    }

    static Arbitrary<Body> cutoffsBodies() {
        return Combinators.combine(lyingInts().list().ofMinSize(1).ofMaxSize(8),
                Arbitraries.integers().between(0, 65535)).as(CutoffsBody::new);
    }

    static Arbitrary<Body> ackBodies() {
        Arbitrary<List<Long>> listed = junkRpcIds().list().ofMaxSize(6);
        Arbitrary<Integer> counts = Arbitraries.frequencyOf(
                Tuple.of(2, Arbitraries.integers().between(0, 6)),
                Tuple.of(1, Arbitraries.of(7, 100, 65535)));
        return Combinators.combine(counts, listed, ports()).as(AckBody::new);
    }

    static Arbitrary<Body> bareBodies() {
        return Arbitraries.of(PacketType.RPC_UNKNOWN, PacketType.BUSY, PacketType.NEED_ACK).map(BareBody::new);
    }

    static Arbitrary<Body> bodies() {
        return Arbitraries.frequencyOf(
                Tuple.of(4, dataBodies()),
                Tuple.of(2, grantBodies()),
                Tuple.of(2, resendBodies()),
                Tuple.of(1, cutoffsBodies()),
                Tuple.of(2, ackBodies()),
                Tuple.of(2, bareBodies()));
    }

    static Arbitrary<Common> commons() {
        return Combinators.combine(ports(), ports(), junkRpcIds(), Arbitraries.of(false, true)).as(Common::new);
    }

    static Arbitrary<Mutation> mutations() {
        return Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.integers().between(0, DataHeader.HEADER_LENGTH + 8).map(Truncate::new)),
                Tuple.of(1, Combinators.combine(Arbitraries.integers().between(1, 40), Arbitraries.bytes())
                        .as(Extend::new)),
                Tuple.of(4, Combinators.combine(Arbitraries.integers().between(0, 200),
                        Arbitraries.bytes().filter(b -> b != 0)).as(Flip::new)),
                Tuple.of(2, Arbitraries.frequencyOf(
                        Tuple.of(2, Arbitraries.of(UNKNOWN_TYPE_CODES)),
                        Tuple.of(1, Arbitraries.of(KNOWN_TYPE_CODES)),
                        Tuple.of(1, Arbitraries.integers().between(0, 255))).map(SetType::new)),
                Tuple.of(2, Arbitraries.of(false, true).map(SetSBit::new)),
                Tuple.of(1, Arbitraries.of(0L, 1L).map(SetRpcId::new)),
                Tuple.of(2, Combinators.combine(Arbitraries.integers().between(HomaHeader.COMMON_HEADER_LENGTH, 60),
                        lyingInts()).as(SetInt::new)));
    }

    /** Packets of the 8 types built with the flyweights, with lying fields; half of them then mutated 1..3 times. */
    static Arbitrary<Junk> builtPackets() {
        Arbitrary<List<Mutation>> mutationLists = Arbitraries.frequencyOf(
                Tuple.of(1, Arbitraries.just(List.<Mutation>of())),
                Tuple.of(1, mutations().list().ofMinSize(1).ofMaxSize(3)));
        return Combinators.combine(commons(), bodies(), mutationLists).as(BuiltJunk::new);
    }

    /** 0..200 random bytes. */
    static Arbitrary<Junk> rawPackets() {
        return Arbitraries.bytes().array(byte[].class).ofMaxSize(200).map(RawJunk::new);
    }

    /** Any junk: mostly built-and-mutated packets (they get further into the engine), some raw. */
    static Arbitrary<Junk> junk() {
        return Arbitraries.frequencyOf(Tuple.of(1, rawPackets()), Tuple.of(3, builtPackets()));
    }
    // ------------------------------------------------------------------------------------------
    // Packets that are malformed by the wire format alone, whatever the engine's state

    /** Reason of the packets that are malformed because their rpcid is 0. */
    static final String DATA_RPC_ID_ZERO = "DATA rpcid 0";

    /** A packet that no engine may accept, and why. */
    record Malformed(String reason, Junk junk) {
        /** Whether the packet is malformed only with its own rpcid (it must not be made to name a real RPC). */
        boolean needsOwnRpcId() {
            return reason.equals(DATA_RPC_ID_ZERO);
        }

        @Override
        public String toString() {
            return reason + ": " + junk;
        }
    }

    private static Arbitrary<Malformed> malformed(String reason, Arbitrary<Common> commons, Arbitrary<? extends Body> bodies,
            Arbitrary<? extends Mutation> last) {
        return Combinators.combine(commons, bodies, last)
                .as((common, body, mutation) -> new Malformed(reason, new BuiltJunk(common, body, List.of(mutation))));
    }

    private static Arbitrary<Malformed> malformed(String reason, Arbitrary<Common> commons, Arbitrary<? extends Body> bodies) {
        return Combinators.combine(commons, bodies)
                .as((common, body) -> new Malformed(reason, new BuiltJunk(common, body, List.of())));
    }

    private static Arbitrary<Truncate> truncatedBelow(int headerLength) {
        return Arbitraries.integers().between(HomaHeader.COMMON_HEADER_LENGTH, headerLength - 1).map(Truncate::new);
    }

    /** A DATA body that is well formed: valid length, offset and payload. */
    private static Arbitrary<DataBody> validDataBodies() {
        Arbitrary<Integer> lengths = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.integers().between(1, 4 * PAYLOAD_BYTES)),
                Tuple.of(1, Arbitraries.integers().between(1, MAX_MESSAGE_BYTES)),
                Tuple.of(1, Arbitraries.just(MAX_MESSAGE_BYTES)));
        return Combinators.combine(lengths, incomings(), payloadLengths())
                .flatAs((length, incoming, payload) -> {
                    int bytes = Math.min(length, payload);
                    return Arbitraries.integers().between(0, length - bytes)
                            .map(offset -> new DataBody(length, incoming, offset, bytes, 0, 0, 0, 0));
                });
    }

    private static DataBody withLength(DataBody body, int messageLength) {
        return new DataBody(messageLength, body.incoming(), body.dataOffset(), body.payloadBytes(), body.ackRpcId(),
                body.ackServerPort(), body.cutoffVersion(), body.retransAndFlags());
    }

    private static DataBody withOffset(DataBody body, int dataOffset) {
        return new DataBody(body.messageLength(), body.incoming(), dataOffset, body.payloadBytes(), body.ackRpcId(),
                body.ackServerPort(), body.cutoffVersion(), body.retransAndFlags());
    }

    /**
     * Packets malformed whatever the receiver's state: shorter than the common header or than their
     * type's header, an unknown type code, DATA whose message length is outside 1..maxMessageBytes,
     * whose offset is negative, whose bytes run past the message's end or whose rpcid is 0, GRANT
     * with a negative offset or a priority above 7, RESEND with a negative offset or length, ACK
     * whose num_acks is more than the packet holds.
     */
    static Arbitrary<Malformed> definitelyMalformed() {
        Arbitrary<Common> commons = commons().filter(c -> (c.rpcId() & ~HomaHeader.FROM_SERVER_BIT) != 0);
        Arbitrary<Integer> negative = Arbitraries.frequencyOf(
                Tuple.of(1, Arbitraries.of(-1, Integer.MIN_VALUE, -MAX_MESSAGE_BYTES)),
                Tuple.of(1, Arbitraries.integers().lessOrEqual(-1)));
        Arbitrary<Integer> badMessageLengths = Arbitraries.frequencyOf(
                Tuple.of(2, Arbitraries.of(0, -1, Integer.MIN_VALUE, MAX_MESSAGE_BYTES + 1, Integer.MAX_VALUE,
                        EngineConfig.MAX_MESSAGE_BYTES_CAP + 1)),
                Tuple.of(1, Arbitraries.integers().lessOrEqual(0)),
                Tuple.of(1, Arbitraries.integers().greaterOrEqual(MAX_MESSAGE_BYTES + 1)));
        // Bytes past the end: offset + payload > length, up to offsets near Integer.MAX_VALUE.
        Arbitrary<DataBody> overrunning = validDataBodies()
                .filter(b -> b.payloadBytes() > 0)
                .flatMap(b -> Arbitraries.integers()
                        .between(b.messageLength() - b.payloadBytes() + 1, Integer.MAX_VALUE)
                        .map(offset -> withOffset(b, offset)));
        Arbitrary<AckBody> lyingAcks = Combinators.combine(junkRpcIds().list().ofMaxSize(6), ports())
                .flatAs((listed, port) -> Arbitraries.integers().between(listed.size() + 1, 65535)
                        .map(count -> new AckBody(count, listed, port)));
        Arbitrary<Common> rpcIdZero = Combinators.combine(ports(), ports(), Arbitraries.of(0L, 1L),
                Arbitraries.of(false, true)).as(Common::new);
        return Arbitraries.oneOf(List.of(
                Arbitraries.bytes().array(byte[].class).ofMaxSize(HomaHeader.COMMON_HEADER_LENGTH - 1)
                        .map(bytes -> new Malformed("shorter than the common header", new RawJunk(bytes))),
                malformed("unknown type code", commons(), bodies(), Arbitraries.of(UNKNOWN_TYPE_CODES).map(SetType::new)),
                malformed("DATA shorter than its header", commons, dataBodies(), truncatedBelow(DataHeader.HEADER_LENGTH)),
                malformed("DATA message length outside 1..maxMessageBytes", commons,
                        Combinators.combine(validDataBodies(), badMessageLengths).as(JunkPackets::withLength)),
                malformed("DATA negative offset", commons,
                        Combinators.combine(validDataBodies(), negative).as(JunkPackets::withOffset)),
                malformed("DATA bytes past the message end", commons, overrunning),
                malformed(DATA_RPC_ID_ZERO, rpcIdZero, validDataBodies()),
                malformed("GRANT shorter than its header", commons, grantBodies(), truncatedBelow(GrantHeader.HEADER_LENGTH)),
                malformed("GRANT negative offset", commons,
                        Combinators.combine(negative, priorities(), Arbitraries.of(false, true)).as(GrantBody::new)),
                malformed("GRANT priority above 7", commons,
                        Combinators.combine(offsets(), Arbitraries.integers().between(8, 255), Arbitraries.of(false, true))
                                .as(GrantBody::new)),
                malformed("RESEND shorter than its header", commons, resendBodies(), truncatedBelow(ResendHeader.HEADER_LENGTH)),
                malformed("RESEND negative offset", commons,
                        Combinators.combine(negative, offsets(), priorities()).as(ResendBody::new)),
                malformed("RESEND negative length", commons,
                        Combinators.combine(offsets(), negative, priorities()).as(ResendBody::new)),
                malformed("CUTOFFS shorter than its header", commons, cutoffsBodies(), truncatedBelow(CutoffsHeader.HEADER_LENGTH)),
                malformed("ACK shorter than its header", commons, ackBodies(), truncatedBelow(AckHeader.HEADER_LENGTH)),
                malformed("ACK num_acks larger than the packet holds",
                        commons.map(c -> new Common(c.sourcePort(), c.destPort(), c.rpcId(), false)), lyingAcks)));
    }
}
