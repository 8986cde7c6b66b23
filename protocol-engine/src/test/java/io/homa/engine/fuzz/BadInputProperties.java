package io.homa.engine.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.HomaEngine;
import io.homa.engine.HomaEvent;
import io.homa.engine.wire.PacketType;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.RandomDistribution;
import net.jqwik.api.Tuple;
import net.jqwik.api.statistics.Statistics;

/**
 * Bad input, property-based: random and mutated packets, interleaved with time advances, real
 * RPCs and packet exchanges between two engines, never make an engine throw, never corrupt its
 * state for later real RPCs, and the definitely malformed ones are counted.
 */
class BadInputProperties {

    /** One thing that happens to the two engines. */
    sealed interface Step permits Inject, Advance, Exchange, Call {}

    /**
     * Junk to A or B, claiming to come from the other engine (fromIndex 0) or from a stranger, with
     * its own rpcid (liveIndex -1) or naming a real RPC in progress or finished.
     */
    record Inject(boolean toB, int fromIndex, int liveIndex, JunkPackets.Junk junk) implements Step {}

    /** The virtual clock moves on, and both engines' onTimeout run. */
    record Advance(long ns) implements Step {}

    /** Both engines transmit; packets between them are delivered; events are handled. */
    record Exchange(int maxPackets, FuzzWorld.Answer answer) implements Step {}

    /** A real RPC between A and B starts. */
    record Call(boolean fromA, int lengthBytes) implements Step {}

    @Provide
    Arbitrary<Long> origins() {
        // System.nanoTime has an arbitrary origin: negative, zero, or a few seconds before overflow.
        return Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.just(1_000_000_000L)),
                Tuple.of(1, Arbitraries.of(0L, -4_000_000_000_000_000_000L, Long.MAX_VALUE - 5_000_000_000L)),
                Tuple.of(1, Arbitraries.longs()));
    }

    /** Sequences in which junk may also name real RPCs (as a confused or lying peer would). */
    @Provide
    Arbitrary<List<Step>> steps() {
        return steps(true);
    }

    /** Sequences in which junk never names a real RPC. */
    @Provide
    Arbitrary<List<Step>> strayFreeSteps() {
        return steps(false);
    }

    private Arbitrary<List<Step>> steps(boolean namingRealRpcs) {
        Arbitrary<Integer> liveIndexes = namingRealRpcs
                ? Arbitraries.frequencyOf(Tuple.of(2, Arbitraries.just(-1)), Tuple.of(1, Arbitraries.integers().between(0, 20)))
                : Arbitraries.just(-1);
        Arbitrary<Step> inject = Combinators.combine(Arbitraries.of(true, false),
                        Arbitraries.frequencyOf(Tuple.of(3, Arbitraries.just(0)),
                                Tuple.of(1, Arbitraries.integers().between(1, 20))),
                        liveIndexes,
                        JunkPackets.junk())
                .as(Inject::new);
        Arbitrary<Step> advance = Arbitraries.frequencyOf(
                        Tuple.of(3, Arbitraries.longs().between(0, 20_000_000L)),
                        Tuple.of(1, Arbitraries.longs().between(0, 3_000_000_000L)))
                .map(Advance::new);
        Arbitrary<Step> exchange = Combinators.combine(Arbitraries.integers().between(1, 64),
                Arbitraries.of(FuzzWorld.Answer.class)).as(Exchange::new);
        Arbitrary<Step> call = Combinators.combine(Arbitraries.of(true, false), requestLengths()).as(Call::new);
        return Arbitraries.frequencyOf(
                        Tuple.of(10, inject),
                        Tuple.of(2, advance),
                        Tuple.of(3, exchange),
                        Tuple.of(1, call))
                .list().ofMinSize(1).ofMaxSize(200).withSizeDistribution(RandomDistribution.uniform());
    }

    @Provide
    Arbitrary<Integer> requestLengths() {
        int unscheduled = JunkPackets.CONFIG.unscheduledBytes();
        return Arbitraries.frequencyOf(
                Tuple.of(4, Arbitraries.integers().between(1, 3_000)),
                Tuple.of(1, Arbitraries.integers().between(unscheduled, 2 * unscheduled)));
    }

    private static void run(FuzzWorld world, List<Step> steps) {
        int calls = 0;
        for (Step step : steps) {
            if (step instanceof Inject inject) {
                world.inject(inject.toB(), inject.fromIndex(), inject.liveIndex(), inject.junk());
            } else if (step instanceof Advance advance) {
                world.advance(advance.ns());
            } else if (step instanceof Exchange exchange) {
                world.exchange(exchange.maxPackets(), exchange.answer());
            } else if (step instanceof Call call) {
                world.call(call.fromA(), request(call.lengthBytes(), calls++));
            }
            // Read-only calls must not throw either.
            world.a.hasTransmit();
            world.b.hasTransmit();
            world.a.nextTimeoutNs();
            world.b.nextTimeoutNs();
        }
    }

    static byte[] request(int lengthBytes, long seed) {
        byte[] bytes = new byte[lengthBytes];
        new Random(seed * 31 + lengthBytes).nextBytes(bytes);
        return bytes;
    }

    /**
     * (1) No exception escapes onPacket, onTimeout, pollTransmit or pollEvent for any sequence of
     * junk interleaved with time advances, real RPCs and exchanges; every packet is counted either
     * as malformed or as received by type.
     */
    @Property(tries = 400, edgeCases = EdgeCasesMode.NONE)
    void shouldNeverThrowWhateverArrives(@ForAll("origins") long originNs, @ForAll("steps") List<Step> steps) {
        FuzzWorld world = new FuzzWorld(JunkPackets.CONFIG, originNs);
        run(world, steps);
        coverage(world);
        // Let everything play out: timers fire, RPCs end or are reclaimed.
        for (int i = 0; i < 50; i++) {
            world.exchange(64, FuzzWorld.Answer.RESPOND);
            world.advance(JunkPackets.CONFIG.resendIntervalNs());
        }
    }

    /**
     * (1b) Junk that never names a real RPC leaves real RPCs alone: once the applications have
     * answered every request they held and the link has been quiet long enough, every real RPC has
     * ended with exactly one outcome, no real request executed twice, and no inbound memory is left
     * (messages ended, or were reclaimed).
     */
    @Property(tries = 300, edgeCases = EdgeCasesMode.NONE)
    void shouldEndEveryRpcOnceAndReleaseMemory(@ForAll("origins") long originNs,
            @ForAll("strayFreeSteps") List<Step> steps) {
        assertEveryRpcEndsOnceAndMemoryIsReleased(originNs, steps);
    }

    /**
     * (1c) The same when junk also names real RPCs: a stray packet may make an RPC fail, or even
     * complete with wrong bytes, but must not leave it hanging forever.
     */
    @Property(tries = 300, edgeCases = EdgeCasesMode.NONE)
    void shouldEndEveryRpcOnceEvenWhenJunkNamesIt(@ForAll("origins") long originNs, @ForAll("steps") List<Step> steps) {
        assertEveryRpcEndsOnceAndMemoryIsReleased(originNs, steps);
    }

    /**
     * The shortest case of (1c): one stray DATA packet for a live client RPC, claiming a 256-byte
     * response, before the real 100-byte one. The RPC must end (with any outcome) within a minute.
     */
    @Property(tries = 2, edgeCases = EdgeCasesMode.NONE)
    void shouldEndRpcAfterStrayResponsePacketOfAnotherLength(@ForAll boolean fromStranger) {
        FuzzWorld world = new FuzzWorld(JunkPackets.CONFIG, 1_000_000_000L);
        long rpcId = world.call(true, request(100, 1));
        JunkPackets.Junk stray = new JunkPackets.BuiltJunk(
                new JunkPackets.Common(FuzzWorld.B.getPort(), FuzzWorld.A.getPort(), 0, true),
                new JunkPackets.DataBody(256, 256, 0, 8, 0, 0, 0, 0), List.of());
        world.inject(false, fromStranger ? 6 : 0, 0, stray);
        assertThat(world.runUntilOutcome(true, rpcId, 60_000_000_000L)).as("outcome of rpc %d", rpcId).isNotNull();
    }

    private static void assertEveryRpcEndsOnceAndMemoryIsReleased(long originNs, List<Step> steps) {
        FuzzWorld world = new FuzzWorld(JunkPackets.CONFIG, originNs);
        run(world, steps);
        // Longer than a server keeps an RPC its client went silent on.
        long reclaimNs = 2 * JunkPackets.CONFIG.peerSilenceTimeoutNs();
        world.settle(reclaimNs);
        world.releaseHeld();
        world.settle(2 * reclaimNs);

        for (var call : world.realCalls.entrySet()) {
            long rpcId = call.getKey();
            boolean fromA = call.getValue();
            List<byte[]> delivered = (fromA ? world.requestsAtB : world.requestsAtA).get(rpcId);
            assertThat(delivered == null ? 0 : delivered.size()).as("executions of rpc %d", rpcId).isLessThanOrEqualTo(1);
            assertThat(fromA ? world.outcomesAtA : world.outcomesAtB).as("outcome of rpc %d", rpcId).containsKey(rpcId);
        }
        assertThat(world.a.activeClientRpcs()).as("A's client RPCs").isZero();
        assertThat(world.b.activeClientRpcs()).as("B's client RPCs").isZero();
        assertThat(world.a.inboundBufferedBytes()).as("A's inbound memory").isZero();
        assertThat(world.b.inboundBufferedBytes()).as("B's inbound memory").isZero();
    }

    /**
     * Checks that the generators reach deep: most sequences get well-formed DATA, GRANT and RESEND
     * past validation, and a fair share gets junk requests all the way to the application.
     */
    private static void coverage(FuzzWorld world) {
        for (PacketType type : List.of(PacketType.DATA, PacketType.GRANT, PacketType.RESEND, PacketType.ACK)) {
            String label = "junk " + type + " accepted";
            Statistics.label(label).collect(world.junkAccepted.getOrDefault(type, 0) > 0);
            Statistics.label(label).coverage(c -> c.check(true).percentage(p -> p >= 40));
        }
        String label = "junk request delivered to an application";
        Statistics.label(label).collect(world.junkRequestsDelivered() > 0);
        Statistics.label(label).coverage(c -> c.check(true).percentage(p -> p >= 10));
    }

    /**
     * (2) After the junk, real RPCs between the two engines, in both directions, still complete with
     * the right bytes, and each request reaches its server exactly once.
     */
    @Property(tries = 300, edgeCases = EdgeCasesMode.NONE)
    void shouldCompleteRealRpcsAfterJunk(@ForAll("origins") long originNs, @ForAll("steps") List<Step> steps,
            @ForAll("requestLengths") int aToBLength, @ForAll("requestLengths") int bToALength) {
        FuzzWorld world = new FuzzWorld(JunkPackets.CONFIG, originNs);
        run(world, steps);

        byte[] aRequest = request(aToBLength, -1);
        long aRpcId = world.call(true, aRequest);
        assertResponse(world, true, aRpcId, aRequest);
        byte[] bRequest = request(bToALength, -2);
        long bRpcId = world.call(false, bRequest);
        assertResponse(world, false, bRpcId, bRequest);
    }

    private static void assertResponse(FuzzWorld world, boolean clientIsA, long rpcId, byte[] request) {
        HomaEvent outcome = world.runUntilOutcome(clientIsA, rpcId, 10_000_000_000L);
        assertThat(outcome).as("outcome of rpc %d from %s", rpcId, clientIsA ? "A" : "B")
                .isInstanceOf(HomaEvent.ResponseReceived.class);
        assertThat(((HomaEvent.ResponseReceived) outcome).message()).isEqualTo(FuzzWorld.reversed(request));
        List<byte[]> delivered = (clientIsA ? world.requestsAtB : world.requestsAtA).get(rpcId);
        assertThat(delivered).as("request %d delivered exactly once", rpcId).hasSize(1);
        assertThat(delivered.get(0)).isEqualTo(request);
    }

    /**
     * (4) A definitely malformed packet (short, unknown type, DATA/GRANT/RESEND/ACK fields that
     * contradict the wire format) is counted once in malformedPackets, counts as no packet type,
     * creates no RPC and no event, and provokes no answer, whatever state the engine is in.
     */
    @Property(tries = 300)
    void shouldCountEveryDefinitelyMalformedPacket(@ForAll boolean warmUp,
            @ForAll("malformedBatches") List<Bad> batch) {
        FuzzWorld world = new FuzzWorld(JunkPackets.CONFIG, 1_000_000_000L);
        if (warmUp) {
            // Peers known in both roles, a finished RPC remembered.
            long rpcId = world.call(true, request(2_000, 7));
            assertThat(world.runUntilOutcome(true, rpcId, 1_000_000_000L)).isInstanceOf(HomaEvent.ResponseReceived.class);
            world.call(false, request(100_000, 8)); // left in progress
            world.exchange(3, FuzzWorld.Answer.HOLD);
        }
        while (world.exchange(64, FuzzWorld.Answer.HOLD) > 0) {
            // drain what the warm-up has to say
        }
        for (Bad bad : batch) {
            HomaEngine to = bad.toB() ? world.b : world.a;
            long malformed = to.counters().malformedPackets();
            long[] received = receivedByType(to);
            int server = to.activeServerRpcs();
            int client = to.activeClientRpcs();

            world.inject(bad.toB(), bad.fromIndex(), bad.liveIndex(), bad.malformed().junk());

            assertThat(to.counters().malformedPackets()).as("malformedPackets after %s", bad).isEqualTo(malformed + 1);
            assertThat(receivedByType(to)).as("received by type after %s", bad).isEqualTo(received);
            assertThat(to.activeServerRpcs()).as("server RPCs after %s", bad).isEqualTo(server);
            assertThat(to.activeClientRpcs()).as("client RPCs after %s", bad).isEqualTo(client);
            assertThat(to.hasTransmit()).as("answer to %s", bad).isFalse();
            assertThat(to.pollEvent()).as("event after %s", bad).isNull();
        }
    }

    /**
     * A definitely malformed packet, to A or B, claiming to come from the other engine or a
     * stranger, with its own rpcid or naming a real RPC (liveIndex 0 or more).
     */
    record Bad(boolean toB, int fromIndex, int liveIndex, JunkPackets.Malformed malformed) {}

    @Provide
    Arbitrary<List<Bad>> malformedBatches() {
        return Combinators.combine(Arbitraries.of(true, false), Arbitraries.of(0, 0, 3), Arbitraries.of(-1, 0, 1),
                        JunkPackets.definitelyMalformed())
                .as((toB, fromIndex, liveIndex, malformed) ->
                        new Bad(toB, fromIndex, malformed.needsOwnRpcId() ? -1 : liveIndex, malformed))
                .list().ofMinSize(1).ofMaxSize(40);
    }

    private static long[] receivedByType(HomaEngine engine) {
        return Arrays.stream(PacketType.values()).mapToLong(t -> engine.counters().packetsReceived(t)).toArray();
    }
}
