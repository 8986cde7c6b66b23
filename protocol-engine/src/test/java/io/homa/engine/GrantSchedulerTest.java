package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The receiver's grant policy, driven directly (draft "Flow control"; paper §3.4-§3.5). */
class GrantSchedulerTest {
    private static final int PAYLOAD = 1416;
    private static final int RTT_BYTES = 43 * PAYLOAD;

    private record Grant(InboundMessage message, int offset, int priority) {}

    private final List<Grant> grants = new ArrayList<>();
    private final GrantScheduler.GrantSink sink = (message, offset, priority) -> grants.add(new Grant(message, offset, priority));
    private int nextPeer = 1;

    private static GrantScheduler scheduler(EngineConfig config) {
        return new GrantScheduler(config, RTT_BYTES, PAYLOAD, 5 * PAYLOAD);
    }

    private InboundMessage message(GrantScheduler scheduler, int lengthBytes, Peer peer) {
        InboundMessage message = new InboundMessage(lengthBytes, RTT_BYTES, peer, 2L * nextPeer);
        scheduler.added(message);
        return message;
    }

    private Peer newPeer() {
        return new Peer(InetSocketAddress.createUnresolved("peer-" + nextPeer++, 5000), 0);
    }

    /** Delivers every authorised byte of the message. */
    private static void receiveAll(GrantScheduler scheduler, InboundMessage message) {
        int from = (int) message.received.coveredBytes();
        if (from >= message.grantedOffset) {
            return;
        }
        scheduler.beforeReceive(message);
        int added = message.received.add(from, message.grantedOffset);
        message.write(ByteBuffer.allocate(message.grantedOffset - from), 0, from, message.grantedOffset - from, new ChunkPool(0));
        scheduler.received(message, added);
    }

    @Test
    void aStalledMessageShouldGiveUpItsIncomingAndItsSlotUntilBytesOfItArrive() {
        GrantScheduler scheduler = scheduler(EngineConfig.builder().maxOvercommit(1).fifoGrantFraction(0.5)
                .maxIncomingBytes(10_000_000).build());
        InboundMessage stalled = message(scheduler, 300_000, newPeer());
        InboundMessage waiting = message(scheduler, 900_000, newPeer());
        InboundMessage newest = message(scheduler, 950_000, newPeer());
        receiveAll(scheduler, stalled);
        receiveAll(scheduler, waiting);
        receiveAll(scheduler, newest);
        grants.clear();
        scheduler.schedule(8, sink);
        assertThat(grants).extracting(Grant::message).first().isEqualTo(stalled);
        long incomingBefore = scheduler.totalIncomingBytes();
        long outstanding = stalled.grantedOffset - stalled.receivedBytes();
        assertThat(outstanding).isPositive();

        scheduler.stalled(stalled);
        assertThat(scheduler.totalIncomingBytes()).isEqualTo(incomingBefore - outstanding);
        grants.clear();
        scheduler.schedule(8, sink);
        assertThat(grants).extracting(Grant::message).as("its overcommitment slot goes to the next").contains(waiting)
                .doesNotContain(stalled);

        // Bytes of it arrive: what is still outstanding counts again, and it is back, oldest first.
        long incomingNow = scheduler.totalIncomingBytes();
        scheduler.beforeReceive(stalled);
        int from = (int) stalled.receivedBytes();
        int added = stalled.received.add(from, from + PAYLOAD);
        stalled.write(ByteBuffer.allocate(PAYLOAD), 0, from, PAYLOAD, new ChunkPool(0));
        scheduler.received(stalled, added);
        assertThat(stalled.stalled).isFalse();
        assertThat(scheduler.totalIncomingBytes()).isEqualTo(incomingNow + outstanding - PAYLOAD);
        scheduler.ended(waiting);
        scheduler.ended(newest);
        scheduler.ended(stalled);
        assertThat(scheduler.totalIncomingBytes()).isZero();
    }

    @Test
    void shouldGrantTheShortestRemainingMessagesFirstUpToOvercommit() {
        GrantScheduler scheduler = scheduler(EngineConfig.builder().maxOvercommit(2).maxIncomingBytes(10_000_000).build());
        InboundMessage longest = message(scheduler, 900_000, newPeer());
        InboundMessage shortest = message(scheduler, 200_000, newPeer());
        InboundMessage middle = message(scheduler, 500_000, newPeer());
        for (InboundMessage m : List.of(longest, shortest, middle)) {
            receiveAll(scheduler, m);
        }
        grants.clear();
        scheduler.schedule(8, sink);
        assertThat(grants).extracting(Grant::message).containsExactly(shortest, middle);
        // SRPT priorities among the two lowest levels: the shortest higher.
        assertThat(grants).extracting(Grant::priority).containsExactly(1, 0);
        assertThat(grants.get(0).offset()).isEqualTo(2 * RTT_BYTES);
    }

    @Test
    void shouldGrantUpToFourMessagesOfOnePeerByDefault() {
        GrantScheduler scheduler = scheduler(EngineConfig.builder().maxIncomingBytes(10_000_000).build());
        Peer busy = newPeer();
        List<InboundMessage> fromBusy = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            fromBusy.add(message(scheduler, 200_000 + i * 100_000, busy));
        }
        InboundMessage other = message(scheduler, 900_000, newPeer());
        fromBusy.forEach(m -> receiveAll(scheduler, m));
        receiveAll(scheduler, other);
        grants.clear();
        scheduler.schedule(8, sink);
        // SRPT among the chosen; the fifth of the busy peer waits (the FIFO share may follow, to the oldest).
        assertThat(grants).extracting(Grant::message)
                .startsWith(fromBusy.get(0), fromBusy.get(1), fromBusy.get(2), fromBusy.get(3), other)
                .doesNotContain(fromBusy.get(4));
    }

    @Test
    void shouldGrantOneMessagePerPeerWhenCappedAtOne() {
        GrantScheduler scheduler = scheduler(EngineConfig.builder().maxIncomingBytes(10_000_000).maxGrantsPerPeer(1).build());
        Peer busy = newPeer();
        InboundMessage first = message(scheduler, 200_000, busy);
        InboundMessage second = message(scheduler, 300_000, busy);
        InboundMessage other = message(scheduler, 900_000, newPeer());
        for (InboundMessage m : List.of(first, second, other)) {
            receiveAll(scheduler, m);
        }
        grants.clear();
        scheduler.schedule(8, sink);
        assertThat(grants).extracting(Grant::message).containsExactly(first, other);
    }

    @Test
    void shouldKeepTotalIncomingUnderMaxIncoming() {
        int maxIncoming = 200_000;
        GrantScheduler scheduler = scheduler(EngineConfig.builder().maxIncomingBytes(maxIncoming).build());
        List<InboundMessage> messages = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            messages.add(message(scheduler, 1_000_000, newPeer()));
        }
        messages.forEach(m -> receiveAll(scheduler, m));
        for (int round = 0; round < 50; round++) {
            scheduler.schedule(8, sink);
            assertThat(scheduler.totalIncomingBytes()).isLessThanOrEqualTo(maxIncoming);
            messages.forEach(m -> receiveAll(scheduler, m));
        }
        assertThat(grants).isNotEmpty();
    }

    @Test
    void shouldGiveTheOldestMessageItsFifoShareUnderAnEndlessStreamOfShortOnes() {
        GrantScheduler scheduler = scheduler(EngineConfig.builder().maxOvercommit(1).build());
        InboundMessage oldest = message(scheduler, 1_000_000, newPeer());
        receiveAll(scheduler, oldest);
        int grantedBefore = oldest.grantedOffset;
        for (int i = 0; i < 500; i++) {
            InboundMessage shortOne = message(scheduler, 150_000, newPeer());
            receiveAll(scheduler, shortOne);
            scheduler.schedule(8, sink);
            receiveAll(scheduler, shortOne);
            scheduler.schedule(8, sink);
            receiveAll(scheduler, shortOne);
            scheduler.schedule(8, sink);
            receiveAll(scheduler, shortOne);
            scheduler.ended(shortOne);
            receiveAll(scheduler, oldest);
        }
        // Without the FIFO share the oldest (longest) message would never be granted.
        assertThat(oldest.grantedOffset).isGreaterThan(grantedBefore + 10 * PAYLOAD);
    }

    @Test
    void shouldStarveTheLongestMessageWithoutFifoShare() {
        GrantScheduler scheduler = scheduler(EngineConfig.builder().maxOvercommit(1).fifoGrantFraction(0).build());
        InboundMessage oldest = message(scheduler, 1_000_000, newPeer());
        receiveAll(scheduler, oldest);
        int grantedBefore = oldest.grantedOffset;
        for (int i = 0; i < 200; i++) {
            InboundMessage shortOne = message(scheduler, 150_000, newPeer());
            receiveAll(scheduler, shortOne);
            scheduler.schedule(8, sink);
            receiveAll(scheduler, shortOne);
            scheduler.ended(shortOne);
        }
        assertThat(oldest.grantedOffset).isEqualTo(grantedBefore);
    }

    @Test
    void shouldAssignPrioritiesLowestLevelsFirstAndShareLevelZeroWhenOutnumbered() {
        // 3 active messages, 8 scheduled levels: levels 2, 1, 0 (shortest highest).
        assertThat(List.of(GrantScheduler.priorityFor(0, 3, 8), GrantScheduler.priorityFor(1, 3, 8),
                GrantScheduler.priorityFor(2, 3, 8))).containsExactly(2, 1, 0);
        // 5 active messages, 3 levels: the 2 shortest get 2 and 1, the rest share 0.
        assertThat(List.of(GrantScheduler.priorityFor(0, 5, 3), GrantScheduler.priorityFor(1, 5, 3),
                GrantScheduler.priorityFor(2, 5, 3), GrantScheduler.priorityFor(4, 5, 3))).containsExactly(2, 1, 0, 0);
    }

    /** Marks every authorised byte of the message received, without storing any. */
    private static void deliverAuthorised(GrantScheduler scheduler, InboundMessage message) {
        int from = (int) message.receivedBytes();
        if (from >= message.grantedOffset) {
            return;
        }
        scheduler.beforeReceive(message);
        int added = message.received.add(from, message.grantedOffset);
        scheduler.received(message, added);
        if (message.complete()) {
            scheduler.ended(message);
        }
    }

    /** SRPT with the per-peer cap, by brute force over every message. */
    private static List<InboundMessage> expectedChoice(List<InboundMessage> messages, int maxOvercommit,
            int maxGrantsPerPeer) {
        List<InboundMessage> waiting = new ArrayList<>();
        for (InboundMessage message : messages) {
            if (!message.ended && message.grantedOffset < message.lengthBytes && !message.complete()) {
                waiting.add(message);
            }
        }
        waiting.sort(SRPT);
        Map<Peer, Integer> perPeer = new IdentityHashMap<>();
        List<InboundMessage> chosen = new ArrayList<>();
        for (InboundMessage message : waiting) {
            if (chosen.size() == maxOvercommit) {
                break;
            }
            if (perPeer.merge(message.peer, 1, Integer::sum) <= maxGrantsPerPeer) {
                chosen.add(message);
            }
        }
        return chosen;
    }

    private static final Comparator<InboundMessage> SRPT =
            Comparator.comparingLong(InboundMessage::remainingBytes).thenComparingLong(m -> m.sequence);

    @Test
    void shouldExamineOnlyTheOvercommittedMessagesWhenOnePeerHasTenThousandWaiting() {
        int maxOvercommit = 8;
        GrantScheduler scheduler = scheduler(EngineConfig.builder().maxOvercommit(maxOvercommit).maxGrantsPerPeer(1)
                .maxIncomingBytes(1 << 30).fifoGrantFraction(0.2).build());
        Random random = new Random(11);
        List<InboundMessage> messages = new ArrayList<>();
        Peer busy = newPeer();
        for (int i = 0; i < 10_000; i++) {
            // Shorter than every other peer's: the old walk skipped all of them on every packet.
            messages.add(message(scheduler, 200_000 + random.nextInt(800_000), busy));
        }
        for (int p = 0; p < 12; p++) {
            Peer peer = newPeer();
            for (int i = 0; i < 3; i++) {
                messages.add(message(scheduler, 1_000_000 + random.nextInt(2_000_000), peer));
            }
        }
        messages.forEach(m -> deliverAuthorised(scheduler, m));
        InboundMessage oldest = messages.get(0);
        int fifoGrants = 0;
        for (int round = 0; round < 40; round++) {
            List<InboundMessage> expected = expectedChoice(messages, maxOvercommit, 1);
            assertThat(expected).hasSize(maxOvercommit).contains(messages.stream()
                    .filter(m -> m.peer == busy && !m.ended).min(SRPT).orElseThrow());
            grants.clear();
            long examinedBefore = scheduler.messagesExamined();
            scheduler.schedule(8, sink);
            assertThat(scheduler.messagesExamined() - examinedBefore).isLessThanOrEqualTo(maxOvercommit + 1);
            // Nothing outstanding on any chosen message: each gets a grant, shortest highest.
            assertThat(grants.subList(0, maxOvercommit)).extracting(Grant::message).containsExactlyElementsOf(expected);
            assertThat(grants.subList(0, maxOvercommit)).extracting(Grant::priority)
                    .containsExactly(7, 6, 5, 4, 3, 2, 1, 0);
            if (grants.size() > maxOvercommit) {
                // The FIFO share: the oldest message still waiting, at the highest scheduled priority.
                assertThat(grants).hasSize(maxOvercommit + 1);
                Grant fifo = grants.get(maxOvercommit);
                assertThat(fifo.priority()).isEqualTo(7);
                assertThat(messages.stream().filter(m -> !m.ended && m.grantedOffset < m.lengthBytes)
                        .mapToLong(m -> m.sequence).min().orElseThrow()).isGreaterThanOrEqualTo(fifo.message().sequence);
                assertThat(fifo.message()).isSameAs(oldest); // the first message, long enough to outlast the test
                fifoGrants++;
            }
            for (Grant grant : grants) {
                deliverAuthorised(scheduler, grant.message());
            }
        }
        assertThat(fifoGrants).isPositive();
        // Busy's shortest messages completed in turn, each replaced by its next shortest.
        assertThat(messages.stream().filter(m -> m.peer == busy && m.ended).count()).isGreaterThan(5);
    }

    private record Issued(int message, int offset, int priority) {}

    @Test
    void shouldKeepNoMoreIncomingThanTheOvercommittedWindowsWhateverTheConfiguredCap() {
        GrantScheduler scheduler = scheduler(EngineConfig.builder().maxOvercommit(2).maxIncomingBytes(1 << 30).build());
        for (int i = 0; i < 6; i++) {
            message(scheduler, 1_000_000, newPeer());
        }
        scheduler.schedule(1, sink);
        assertThat(scheduler.totalIncomingBytes()).as("two windows: six unscheduled heads already pass it")
                .isEqualTo(6L * RTT_BYTES);
        assertThat(grants).as("nothing granted while the unscheduled bytes fill the windows").isEmpty();
    }

    @Test
    void shouldGrantExactlyAsTheWalkOverAllWaitingMessagesDid() {
        for (int seed = 1; seed <= 8; seed++) {
            Random random = new Random(seed);
            EngineConfig config = EngineConfig.builder()
                    .maxOvercommit(1 + random.nextInt(6))
                    .maxGrantsPerPeer(1 + random.nextInt(3))
                    .maxIncomingBytes(List.of(300_000, 1_000_000, 4_000_000).get(random.nextInt(3)))
                    .fifoGrantFraction(List.of(0.0, 0.05, 0.3).get(random.nextInt(3)))
                    .build();
            GrantScheduler scheduler = scheduler(config);
            ReferenceScheduler reference = new ReferenceScheduler(config, RTT_BYTES, PAYLOAD, 5 * PAYLOAD);
            List<Issued> issued = new ArrayList<>();
            List<Issued> referenceIssued = new ArrayList<>();
            Map<InboundMessage, Integer> ids = new IdentityHashMap<>();
            GrantScheduler.GrantSink issuedSink = (m, offset, priority) -> issued.add(new Issued(ids.get(m), offset, priority));
            GrantScheduler.GrantSink referenceSink =
                    (m, offset, priority) -> referenceIssued.add(new Issued(ids.get(m), offset, priority));
            List<Peer> peers = new ArrayList<>();
            for (int p = 0; p < 6; p++) {
                peers.add(newPeer());
            }
            // Twins: live.get(i) is driven through the scheduler, twins.get(i) through the reference.
            List<InboundMessage> live = new ArrayList<>();
            List<InboundMessage> twins = new ArrayList<>();
            int schedules = 0;
            for (int step = 0; step < 4000; step++) {
                int op = random.nextInt(100);
                if (live.isEmpty() || (op < 10 && live.size() < 40)) {
                    int lengthBytes = random.nextInt(4) == 0 ? 1 + random.nextInt(RTT_BYTES) : 1 + random.nextInt(1_500_000);
                    int incomingBytes = random.nextInt(3) == 0 ? random.nextInt(RTT_BYTES) : RTT_BYTES;
                    Peer peer = peers.get(random.nextInt(peers.size()));
                    InboundMessage message = new InboundMessage(lengthBytes, incomingBytes, peer, 2L * step);
                    InboundMessage twin = new InboundMessage(lengthBytes, incomingBytes, peer, 2L * step);
                    ids.put(message, step);
                    ids.put(twin, step);
                    scheduler.added(message);
                    reference.added(twin);
                    live.add(message);
                    twins.add(twin);
                } else if (op < 65) {
                    int i = random.nextInt(live.size());
                    InboundMessage message = live.get(i);
                    InboundMessage twin = twins.get(i);
                    if (message.grantedOffset > 0) {
                        // Half the time all that is authorised (a sender catching up), else a few packets' worth anywhere.
                        int start = random.nextBoolean() ? 0 : random.nextInt(message.grantedOffset);
                        int end = start == 0 ? message.grantedOffset
                                : Math.min(message.grantedOffset, start + 1 + random.nextInt(3 * PAYLOAD));
                        scheduler.beforeReceive(message);
                        int added = message.received.add(start, end);
                        scheduler.received(message, added);
                        reference.beforeReceive(twin);
                        assertThat(twin.received.add(start, end)).isEqualTo(added);
                        reference.received(twin, added);
                        if (message.complete()) {
                            scheduler.ended(message);
                            reference.ended(twin);
                            live.remove(i);
                            twins.remove(i);
                        }
                    }
                } else if (op < 70) {
                    int i = random.nextInt(live.size());
                    InboundMessage message = live.get(i);
                    int stated = (int) Math.min(message.lengthBytes, message.grantedOffset + (long) random.nextInt(3 * PAYLOAD));
                    scheduler.raised(message, stated);
                    reference.raised(twins.get(i), stated);
                } else if (op < 75) {
                    int i = random.nextInt(live.size());
                    scheduler.ended(live.remove(i));
                    reference.ended(twins.remove(i));
                } else {
                    int levels = 1 + random.nextInt(8);
                    long examinedBefore = scheduler.messagesExamined();
                    scheduler.schedule(levels, issuedSink);
                    reference.schedule(levels, referenceSink);
                    assertThat(scheduler.messagesExamined() - examinedBefore)
                            .isLessThanOrEqualTo(config.maxOvercommit() + 1);
                    assertThat(issued).as("seed %d step %d", seed, step).isEqualTo(referenceIssued);
                    schedules++;
                }
                assertThat(scheduler.totalIncomingBytes()).isEqualTo(reference.totalIncomingBytes());
                for (int i = 0; i < live.size(); i++) {
                    assertThat(live.get(i).grantedOffset).isEqualTo(twins.get(i).grantedOffset);
                }
            }
            assertThat(schedules).isGreaterThan(800);
            // Grants issued at all (a scheduler of one message has a cap of one window: few of them).
            assertThat(issued).as("seed %d", seed).hasSizeGreaterThan(20);
        }
    }

    /**
     * The oracle: the scheduler as it was before per-peer orders, walking every waiting message
     * in SRPT order for the candidates and for the oldest.
     */
    private static final class ReferenceScheduler {
        private final int maxOvercommit;
        private final int maxGrantsPerPeer;
        private final long maxIncomingBytes;
        private final double fifoGrantFraction;
        private final int rttBytes;
        private final int payloadBytes;
        private final int grantIncrementBytes;
        private final TreeSet<InboundMessage> waiting = new TreeSet<>(SRPT);
        private long totalIncomingBytes;
        private double fifoCreditBytes;
        private long sequence;

        ReferenceScheduler(EngineConfig config, int rttBytes, int payloadBytes, int grantIncrementBytes) {
            this.maxOvercommit = config.maxOvercommit();
            this.maxGrantsPerPeer = config.maxGrantsPerPeer();
            this.maxIncomingBytes = Math.min(config.maxIncomingBytes(), (long) config.maxOvercommit() * rttBytes);
            this.fifoGrantFraction = config.fifoGrantFraction();
            this.rttBytes = rttBytes;
            this.payloadBytes = payloadBytes;
            this.grantIncrementBytes = grantIncrementBytes;
        }

        void added(InboundMessage message) {
            message.sequence = sequence++;
            totalIncomingBytes += message.grantedOffset;
            track(message);
        }

        void raised(InboundMessage message, int grantedOffset) {
            if (grantedOffset > message.grantedOffset) {
                waiting.remove(message);
                totalIncomingBytes += grantedOffset - message.grantedOffset;
                message.grantedOffset = grantedOffset;
                track(message);
            }
        }

        void beforeReceive(InboundMessage message) {
            waiting.remove(message);
        }

        void received(InboundMessage message, int addedBytes) {
            totalIncomingBytes -= addedBytes;
            track(message);
        }

        void ended(InboundMessage message) {
            waiting.remove(message);
            totalIncomingBytes -= Math.max(0, message.grantedOffset - message.receivedBytes());
            message.grantedOffset = Math.max(message.grantedOffset, (int) message.receivedBytes());
            message.ended = true;
        }

        private void track(InboundMessage message) {
            if (!message.ended && message.grantedOffset < message.lengthBytes && !message.complete()) {
                waiting.add(message);
            }
        }

        long totalIncomingBytes() {
            return totalIncomingBytes;
        }

        void schedule(int scheduledLevels, GrantScheduler.GrantSink sink) {
            if (waiting.isEmpty()) {
                return;
            }
            Map<Peer, Integer> grantsThisPass = new IdentityHashMap<>();
            List<InboundMessage> chosen = new ArrayList<>();
            for (InboundMessage message : waiting) {
                if (chosen.size() == maxOvercommit) {
                    break;
                }
                int peerGrants = grantsThisPass.getOrDefault(message.peer, 0);
                if (peerGrants >= maxGrantsPerPeer) {
                    continue;
                }
                grantsThisPass.put(message.peer, peerGrants + 1);
                chosen.add(message);
            }
            int active = chosen.size();
            for (int rank = 0; rank < active; rank++) {
                InboundMessage message = chosen.get(rank);
                int priority = GrantScheduler.priorityFor(rank, active, scheduledLevels);
                long target = Math.min(message.lengthBytes, roundUpToPackets(message.receivedBytes() + rttBytes));
                long increase = target - message.grantedOffset;
                if (increase <= 0) {
                    continue;
                }
                long room = maxIncomingBytes - totalIncomingBytes;
                if (room <= 0) {
                    break;
                }
                if (increase > room) {
                    increase = room;
                }
                boolean nothingOutstanding = message.receivedBytes() >= message.grantedOffset;
                if (increase < grantIncrementBytes && message.grantedOffset + increase < message.lengthBytes
                        && !nothingOutstanding) {
                    continue;
                }
                grant(message, (int) (message.grantedOffset + increase), priority, sink);
                fifoCreditBytes += increase * fifoGrantFraction;
            }
            if (fifoCreditBytes >= grantIncrementBytes) {
                grantOldest(sink, scheduledLevels - 1);
            }
        }

        private void grantOldest(GrantScheduler.GrantSink sink, int priority) {
            InboundMessage oldest = null;
            for (InboundMessage message : waiting) {
                if (oldest == null || message.sequence < oldest.sequence) {
                    oldest = message;
                }
            }
            if (oldest == null || oldest.grantedOffset - oldest.receivedBytes() >= rttBytes + 2L * grantIncrementBytes) {
                fifoCreditBytes = 0;
                return;
            }
            long room = maxIncomingBytes - totalIncomingBytes;
            if (room < payloadBytes) {
                return;
            }
            int offset = (int) Math.min(oldest.lengthBytes,
                    (long) oldest.grantedOffset + Math.min(grantIncrementBytes, room));
            fifoCreditBytes -= offset - oldest.grantedOffset;
            grant(oldest, offset, priority, sink);
        }

        private void grant(InboundMessage message, int offset, int priority, GrantScheduler.GrantSink sink) {
            waiting.remove(message);
            totalIncomingBytes += offset - message.grantedOffset;
            message.grantedOffset = offset;
            track(message);
            sink.grant(message, offset, priority);
        }

        private long roundUpToPackets(long bytes) {
            return (bytes + payloadBytes - 1) / payloadBytes * payloadBytes;
        }
    }

    @Test
    void shouldKeepTheArrivalOrderOldestFirstAsItSlidesAndGrows() {
        Random random = new Random(5);
        GrantScheduler.ArrivalOrder arrivals = new GrantScheduler.ArrivalOrder();
        TreeSet<InboundMessage> reference = new TreeSet<>(Comparator.comparingLong(m -> m.sequence));
        Peer peer = newPeer();
        List<InboundMessage> held = new ArrayList<>();
        for (int step = 0; step < 20_000; step++) {
            // Grows to a few hundred, shrinks to a few, then grows again: slides and growth both.
            boolean growing = (step / 2_000) % 2 == 0;
            if (held.isEmpty() || random.nextInt(10) < (growing ? 7 : 3)) {
                InboundMessage message = new InboundMessage(1000, 0, peer, step);
                message.sequence = step;
                arrivals.append(message);
                reference.add(message);
                held.add(message);
            } else {
                // Mostly the oldest, as messages tend to finish in order, else any.
                InboundMessage message = random.nextBoolean() ? reference.first() : held.get(random.nextInt(held.size()));
                held.remove(message);
                assertThat(arrivals.remove(message)).isEqualTo(reference.remove(message));
                assertThat(arrivals.remove(message)).isFalse();
            }
            assertThat(arrivals.size()).isEqualTo(reference.size());
            assertThat(arrivals.first()).isSameAs(reference.isEmpty() ? null : reference.first());
        }
    }
}
