package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class FinishedRpcIdsTest {

    @Test
    void shouldRememberIdsInOrder() {
        FinishedRpcIds finished = new FinishedRpcIds(8);
        finished.received(20);
        for (long id = 2; id <= 10; id += 2) {
            finished.remember(id);
        }
        assertThat(finished.size()).isEqualTo(5);
        assertThat(finished.floorRpcId()).isZero();
        for (long id = 2; id <= 10; id += 2) {
            assertThat(finished.contains(id)).as("rpcid %d", id).isTrue();
            assertThat(finished.contains(id + 1)).as("rpcid %d", id + 1).isFalse();
        }
        assertThat(finished.contains(12)).isFalse();
        assertThat(finished.contains(0)).as("0 is at the floor").isTrue();
    }

    @Test
    void shouldRememberIdsOutOfOrder() {
        FinishedRpcIds finished = new FinishedRpcIds(64);
        finished.received(1_000);
        long[] ids = {40, 10, 30, 20, 50, 2, 44, 46, 42, 4, 48, 6};
        for (long id : ids) {
            finished.remember(id);
        }
        assertThat(finished.size()).isEqualTo(ids.length);
        TreeSet<Long> expected = new TreeSet<>();
        for (long id : ids) {
            expected.add(id);
        }
        for (long id = 1; id <= 60; id++) {
            assertThat(finished.contains(id)).as("rpcid %d", id).isEqualTo(expected.contains(id));
        }
    }

    @Test
    void shouldFoldTheSmallestIntoTheFloorWhenFull() {
        FinishedRpcIds finished = new FinishedRpcIds(4);
        finished.received(100);
        finished.remember(10);
        finished.remember(30);
        finished.remember(20);
        finished.remember(40);
        assertThat(finished.size()).isEqualTo(4);
        assertThat(finished.floorRpcId()).isZero();

        finished.remember(50);

        assertThat(finished.size()).isEqualTo(4);
        assertThat(finished.floorRpcId()).isEqualTo(10);
        for (long id = -5; id <= 10; id++) {
            assertThat(finished.contains(id)).as("rpcid %d at or below the floor", id).isTrue();
        }
        for (long id = 11; id <= 60; id++) {
            boolean remembered = id == 20 || id == 30 || id == 40 || id == 50;
            assertThat(finished.contains(id)).as("rpcid %d", id).isEqualTo(remembered);
        }

        finished.remember(25); // out of order while full: 20 goes to the floor
        assertThat(finished.floorRpcId()).isEqualTo(20);
        assertThat(finished.contains(15)).isTrue();
        assertThat(finished.contains(25)).isTrue();
        assertThat(finished.contains(27)).isFalse();

        finished.remember(22); // smaller than all held, while full: becomes the floor itself
        assertThat(finished.floorRpcId()).isEqualTo(22);
        assertThat(finished.size()).isEqualTo(4);
        assertThat(finished.contains(23)).isFalse();
        assertThat(finished.contains(25)).isTrue();

        finished.remember(5); // below the floor: nothing changes
        assertThat(finished.floorRpcId()).isEqualTo(22);
        assertThat(finished.size()).isEqualTo(4);
    }

    @Test
    void shouldFoldManyInOrderIdsAtTheDefaultCapacity() {
        FinishedRpcIds finished = new FinishedRpcIds();
        assertThat(finished.capacity()).isEqualTo(FinishedRpcIds.DEFAULT_CAPACITY);
        for (long id = 2; id <= 20_000; id += 2) {
            finished.received(id);
            finished.remember(id);
        }
        assertThat(finished.size()).isEqualTo(4096);
        assertThat(finished.floorRpcId()).isEqualTo(20_000 - 2 * 4096);
        assertThat(finished.contains(20_000 - 2 * 4096 - 1)).isTrue();
        assertThat(finished.contains(20_000 - 2 * 4096 + 1)).isFalse();
        assertThat(finished.contains(20_000)).isTrue();
        assertThat(finished.contains(20_002)).isFalse();
    }

    @Test
    void shouldIgnoreDuplicates() {
        FinishedRpcIds finished = new FinishedRpcIds(3);
        finished.received(100);
        finished.remember(10);
        finished.remember(20);
        finished.remember(10);
        finished.remember(20);
        finished.remember(30);
        finished.remember(20);
        assertThat(finished.size()).isEqualTo(3);
        assertThat(finished.floorRpcId()).as("a duplicate must not push the oldest out").isZero();
        assertThat(finished.contains(10)).isTrue();
        assertThat(finished.contains(20)).isTrue();
        assertThat(finished.contains(30)).isTrue();
    }

    @Test
    void shouldIgnoreIdsNeverReceived() {
        FinishedRpcIds finished = new FinishedRpcIds(16);
        finished.remember(2);
        assertThat(finished.size()).isZero();
        assertThat(finished.contains(2)).isFalse();

        finished.received(10);
        finished.received(4); // the highest stays
        assertThat(finished.highestReceivedRpcId()).isEqualTo(10);
        finished.remember(12);
        finished.remember(10);
        assertThat(finished.contains(12)).isFalse();
        assertThat(finished.contains(10)).isTrue();
    }

    @Test
    void shouldNotLetForgedAcksAboveTheHighestReceivedRaiseTheFloor() {
        FinishedRpcIds finished = new FinishedRpcIds();
        finished.received(1_000);
        for (long id = 2; id <= 1_000; id += 2) {
            finished.remember(id);
        }
        // A forged ACK (or many) listing 4,097 rpcids at and above 2^62: one more than the capacity.
        long forged = 1L << 62;
        for (int i = 0; i <= FinishedRpcIds.DEFAULT_CAPACITY; i++) {
            finished.remember(forged + 2L * i);
        }
        assertThat(finished.floorRpcId()).isLessThanOrEqualTo(finished.highestReceivedRpcId()).isZero();
        assertThat(finished.size()).isEqualTo(500);
        assertThat(finished.contains(forged)).isFalse();
        // Later real rpcids still execute, and are remembered once finished.
        for (long id = 1_002; id <= 2_000; id += 2) {
            assertThat(finished.contains(id)).as("new rpcid %d", id).isFalse();
            finished.received(id);
            finished.remember(id);
            assertThat(finished.contains(id)).isTrue();
        }
        assertThat(finished.contains(2_002)).isFalse();
    }

    @Test
    void shouldKeepTheFloorAtOrBelowTheHighestReceived() {
        FinishedRpcIds finished = new FinishedRpcIds(4);
        Random random = new Random(7);
        for (int step = 0; step < 10_000; step++) {
            if (random.nextInt(4) == 0) {
                finished.received(random.nextInt(50_000));
            }
            finished.remember(random.nextBoolean() ? random.nextLong() : random.nextInt(60_000));
            assertThat(finished.floorRpcId()).isLessThanOrEqualTo(finished.highestReceivedRpcId());
        }
    }

    /** Same rules on a TreeSet: a floor, at most {@code capacity} rpcids above it, none above the highest received. */
    private static final class ReferenceModel {
        final int capacity;
        final TreeSet<Long> ids = new TreeSet<>();
        long floor;
        long highestReceived;

        ReferenceModel(int capacity) {
            this.capacity = capacity;
        }

        void received(long rpcId) {
            highestReceived = Math.max(highestReceived, rpcId);
        }

        void remember(long rpcId) {
            if (rpcId <= floor || rpcId > highestReceived) {
                return;
            }
            ids.add(rpcId);
            if (ids.size() > capacity) {
                floor = ids.pollFirst();
            }
        }

        boolean contains(long rpcId) {
            return rpcId <= floor || ids.contains(rpcId);
        }
    }

    @Test
    void shouldBehaveLikeTheReferenceModel() {
        Random random = new Random(20240611L);
        for (int capacity : new int[] {1, 2, 3, 5, 16, 17, 100, 4096}) {
            FinishedRpcIds finished = new FinishedRpcIds(capacity);
            ReferenceModel reference = new ReferenceModel(capacity);
            long next = 2;
            int window = Math.max(4, capacity / 2);
            for (int step = 0; step < 100_000; step++) {
                int operation = random.nextInt(20);
                long id;
                if (operation < 6) {
                    // A new request arrives.
                    id = next;
                    next += 2;
                    finished.received(id);
                    reference.received(id);
                } else if (operation < 14) {
                    // A recent RPC finishes: usually the oldest outstanding, sometimes out of order.
                    id = Math.max(2, next - 2L * (1 + random.nextInt(random.nextInt(8) == 0 ? 4 * window : window)));
                    finished.remember(id);
                    reference.remember(id);
                } else if (operation < 15) {
                    // Forged or stray ids: huge, negative, zero, odd.
                    id = switch (random.nextInt(4)) {
                        case 0 -> (1L << 62) + random.nextInt(1000);
                        case 1 -> -random.nextInt(1000);
                        case 2 -> random.nextLong();
                        default -> next + 1 + random.nextInt(100);
                    };
                    finished.remember(id);
                    reference.remember(id);
                } else {
                    id = next - random.nextInt(2 * Math.max(8, 2 * capacity));
                }
                assertThat(finished.contains(id)).as("capacity %d, step %d, rpcid %d", capacity, step, id)
                        .isEqualTo(reference.contains(id));
                assertThat(finished.size()).isEqualTo(reference.ids.size());
                assertThat(finished.floorRpcId()).isEqualTo(reference.floor);
            }
            for (long id = reference.floor - 4; id <= next + 4; id++) {
                assertThat(finished.contains(id)).as("capacity %d, final rpcid %d", capacity, id)
                        .isEqualTo(reference.contains(id));
            }
        }
    }

    @Test
    void shouldRejectBadCapacities() {
        assertThatThrownBy(() -> new FinishedRpcIds(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("capacity");
        assertThatThrownBy(() -> new FinishedRpcIds(FinishedRpcIds.MAX_CAPACITY + 1))
                .isInstanceOf(IllegalArgumentException.class);
    }

    /** Sink for lookups, so that no compiler can drop them. */
    static volatile int foundSink;

    @Test
    void shouldNotAllocateOnceWarm() {
        com.sun.management.ThreadMXBean threads = ThreadAllocation.threadBean();
        FinishedRpcIds finished = new FinishedRpcIds();
        long[] next = {2};
        // Warm-up: the buffer grows to its capacity, and the code is exercised (and maybe compiled).
        int found = exercise(finished, next, 50_000);
        long threadId = Thread.currentThread().getId();
        long calibrate = threads.getThreadAllocatedBytes(threadId);
        long start = threads.getThreadAllocatedBytes(threadId);
        long counterCost = start - calibrate;
        start = threads.getThreadAllocatedBytes(threadId);

        int measuredIds = 100_000;
        found += exercise(finished, next, measuredIds);

        long allocated = threads.getThreadAllocatedBytes(threadId) - start - counterCost;
        foundSink = found;
        assertThat(found).as("lookups that found their rpcid").isPositive();
        assertThat(allocated).as("bytes allocated over %d remember()+contains()", measuredIds)
                .isLessThan(measuredIds);
    }

    /** Receives and finishes {@code count} rpcids, a few out of order, with lookups of each kind. */
    private static int exercise(FinishedRpcIds finished, long[] next, int count) {
        int found = 0;
        for (int i = 0; i < count; i++) {
            long id = next[0];
            next[0] += 2;
            finished.received(id);
            // Every 8th rpcid finishes 6 rpcids late, out of order.
            if ((i & 7) != 0) {
                finished.remember(id);
            }
            if ((i & 7) == 6) {
                finished.remember(id - 12);
            }
            if (finished.contains(id - 40)) {
                found++;
            }
            if (finished.contains(id + 2) || finished.contains(id - 1)) {
                found--;
            }
        }
        return found;
    }
}
