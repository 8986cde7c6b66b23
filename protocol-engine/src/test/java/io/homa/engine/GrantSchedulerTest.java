package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
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
        message.write(ByteBuffer.allocate(message.grantedOffset - from), 0, from, message.grantedOffset - from);
        scheduler.received(message, added);
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
    void shouldGrantOneMessagePerPeerByDefault() {
        GrantScheduler scheduler = scheduler(EngineConfig.builder().maxIncomingBytes(10_000_000).build());
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
}
