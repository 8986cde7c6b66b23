package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class InboundOrderTest {
    private static final Peer PEER = new Peer(new InetSocketAddress("10.0.0.1", 5000), 0);

    @Test
    void shouldKeepTheSrptOrderOfATreeSet() {
        Random random = new Random(7);
        InboundOrder order = new InboundOrder();
        TreeSet<InboundMessage> reference = new TreeSet<>(
                Comparator.comparingLong(InboundMessage::remainingBytes).thenComparingLong(m -> m.sequence));
        List<InboundMessage> messages = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            InboundMessage message = new InboundMessage(1 + random.nextInt(20_000), 0, PEER, 2L * i + 1);
            message.sequence = i;
            messages.add(message);
        }
        for (int step = 0; step < 50_000; step++) {
            InboundMessage message = messages.get(random.nextInt(messages.size()));
            switch (random.nextInt(3)) {
                case 0 -> assertThat(order.add(message)).isEqualTo(reference.add(message));
                case 1 -> assertThat(order.remove(message)).isEqualTo(reference.remove(message));
                default -> {
                    // Receive bytes the way the scheduler does: out of the order, change, back in.
                    boolean held = order.remove(message);
                    assertThat(reference.remove(message)).isEqualTo(held);
                    int start = random.nextInt(message.lengthBytes);
                    message.received.add(start, Math.min(message.lengthBytes, start + 1 + random.nextInt(3000)));
                    if (held) {
                        order.add(message);
                        reference.add(message);
                    }
                }
            }
            assertThat(order.size()).isEqualTo(reference.size());
        }
        List<InboundMessage> inOrder = new ArrayList<>();
        for (int i = 0; i < order.size(); i++) {
            inOrder.add(order.get(i));
        }
        assertThat(inOrder).containsExactlyElementsOf(reference);
        order.clear();
        assertThat(order.isEmpty()).isTrue();
    }

    @Test
    void shouldReportTheIndexInOrderOnInsertAndDelete() {
        Random random = new Random(3);
        InboundOrder order = new InboundOrder();
        TreeSet<InboundMessage> reference = new TreeSet<>(
                Comparator.comparingLong(InboundMessage::remainingBytes).thenComparingLong(m -> m.sequence));
        List<InboundMessage> messages = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            InboundMessage message = new InboundMessage(1 + random.nextInt(5_000), 0, PEER, 2L * i + 1);
            message.sequence = i;
            messages.add(message);
        }
        for (int step = 0; step < 20_000; step++) {
            InboundMessage message = messages.get(random.nextInt(messages.size()));
            if (random.nextBoolean()) {
                int expected = reference.add(message) ? reference.headSet(message).size() : -1;
                assertThat(order.insert(message)).isEqualTo(expected);
            } else {
                int expected = reference.contains(message) ? reference.headSet(message).size() : -1;
                reference.remove(message);
                assertThat(order.delete(message)).isEqualTo(expected);
            }
            if (!reference.isEmpty()) {
                assertThat(order.get(0)).isSameAs(reference.first());
                assertThat(order.get(order.size() - 1)).isSameAs(reference.last());
            }
        }
    }
}
