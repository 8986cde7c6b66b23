package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The engine's deadline heap, driven directly on virtual time of any origin. */
class TimerQueueTest {

    /** A bare entry with a name for failure messages. */
    private static final class Entry extends TimerEntry {
        final int id;

        Entry(int id) {
            this.id = id;
        }

        @Override
        public String toString() {
            return "entry" + id + (timerArmed() ? "@" + timerDeadlineNs : "(disarmed)");
        }
    }

    private static List<Entry> entries(int count) {
        List<Entry> entries = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            entries.add(new Entry(i));
        }
        return entries;
    }

    @Test
    void shouldReportTheEarliestDeadline() {
        TimerQueue queue = new TimerQueue();
        assertThat(queue.earliestNs()).as("empty").isEqualTo(Long.MAX_VALUE);
        List<Entry> e = entries(3);
        queue.armAtOrBefore(e.get(0), 300);
        assertThat(queue.earliestNs()).isEqualTo(300);
        queue.armAtOrBefore(e.get(1), 100);
        queue.armAtOrBefore(e.get(2), 200);
        assertThat(queue.earliestNs()).isEqualTo(100);
        assertThat(queue.size()).isEqualTo(3);
        assertThat(e).allMatch(TimerEntry::timerArmed);
    }

    @Test
    void shouldHandOutOnlyDueEntriesInDeadlineOrder() {
        TimerQueue queue = new TimerQueue();
        List<Entry> e = entries(4);
        queue.armAtOrBefore(e.get(0), 30);
        queue.armAtOrBefore(e.get(1), 10);
        queue.armAtOrBefore(e.get(2), 40);
        queue.armAtOrBefore(e.get(3), 20);

        assertThat(queue.pollDue(9)).as("nothing due before the earliest deadline").isNull();
        assertThat(queue.size()).isEqualTo(4);

        assertThat(queue.pollDue(30)).isSameAs(e.get(1));
        assertThat(queue.pollDue(30)).isSameAs(e.get(3));
        assertThat(queue.pollDue(30)).as("due exactly at its deadline").isSameAs(e.get(0));
        assertThat(queue.pollDue(30)).as("40 is not due at 30").isNull();
        assertThat(queue.size()).isEqualTo(1);
        assertThat(queue.earliestNs()).isEqualTo(40);
        assertThat(e.get(1).timerArmed()).as("a polled entry is disarmed").isFalse();

        // A polled entry can be armed again.
        queue.armAtOrBefore(e.get(1), 35);
        assertThat(queue.pollDue(100)).isSameAs(e.get(1));
        assertThat(queue.pollDue(100)).isSameAs(e.get(2));
        assertThat(queue.pollDue(100)).isNull();
        assertThat(queue.earliestNs()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void shouldMoveADeadlineEarlierButNeverLater() {
        TimerQueue queue = new TimerQueue();
        List<Entry> e = entries(3);
        queue.armAtOrBefore(e.get(0), 100);
        queue.armAtOrBefore(e.get(1), 50);
        queue.armAtOrBefore(e.get(2), 70);

        queue.armAtOrBefore(e.get(0), 200);
        assertThat(e.get(0).timerDeadlineNs).as("a later deadline is ignored").isEqualTo(100);
        queue.armAtOrBefore(e.get(0), 100);
        assertThat(e.get(0).timerDeadlineNs).isEqualTo(100);
        assertThat(queue.size()).as("re-arming does not add the entry twice").isEqualTo(3);

        queue.armAtOrBefore(e.get(0), 10);
        assertThat(e.get(0).timerDeadlineNs).isEqualTo(10);
        assertThat(queue.earliestNs()).as("moved to the top of the heap").isEqualTo(10);
        assertThat(queue.pollDue(10)).isSameAs(e.get(0));
        assertThat(queue.pollDue(Long.MAX_VALUE / 2)).isSameAs(e.get(1));
        assertThat(queue.pollDue(Long.MAX_VALUE / 2)).isSameAs(e.get(2));
    }

    @Test
    void shouldKeepHeapOrderWhenCancellingMiddleLastAndAbsentEntries() {
        TimerQueue queue = new TimerQueue();
        List<Entry> e = entries(7);
        long[] deadlines = {10, 20, 30, 40, 50, 60, 70};
        for (int i = 0; i < e.size(); i++) {
            queue.armAtOrBefore(e.get(i), deadlines[i]);
        }
        Entry last = e.get(6); // armed last, at the largest deadline: the heap's last slot
        queue.cancel(last);
        assertThat(last.timerArmed()).isFalse();
        queue.cancel(last); // absent: nothing happens
        queue.cancel(new Entry(99)); // never armed
        assertThat(queue.size()).isEqualTo(6);

        queue.cancel(e.get(1)); // an inner node: its slot is refilled from the end
        queue.cancel(e.get(0)); // the root
        assertThat(queue.size()).isEqualTo(4);
        assertThat(queue.earliestNs()).isEqualTo(30);
        List<Entry> order = new ArrayList<>();
        Entry due;
        while ((due = (Entry) queue.pollDue(1000)) != null) {
            order.add(due);
        }
        assertThat(order).containsExactly(e.get(2), e.get(3), e.get(4), e.get(5));
    }

    @Test
    void shouldDisarmEverythingOnClear() {
        TimerQueue queue = new TimerQueue();
        List<Entry> e = entries(40); // beyond the initial 16 slots: the heap grew
        for (int i = 0; i < e.size(); i++) {
            queue.armAtOrBefore(e.get(i), 1000 - i);
        }
        queue.clear();
        assertThat(queue.size()).isZero();
        assertThat(queue.earliestNs()).isEqualTo(Long.MAX_VALUE);
        assertThat(queue.pollDue(Long.MAX_VALUE)).isNull();
        assertThat(e).noneMatch(TimerEntry::timerArmed);
        // Entries can be armed again after a clear, and cancelling a cleared entry is harmless.
        queue.cancel(e.get(3));
        queue.armAtOrBefore(e.get(5), 7);
        assertThat(queue.size()).isEqualTo(1);
        assertThat(queue.pollDue(7)).isSameAs(e.get(5));
    }

    @Test
    void shouldOrderDeadlinesAcrossTheLongWrap() {
        TimerQueue queue = new TimerQueue();
        List<Entry> e = entries(3);
        long nearMax = Long.MAX_VALUE - 10;
        queue.armAtOrBefore(e.get(0), nearMax + 30); // wraps to a negative number
        queue.armAtOrBefore(e.get(1), nearMax);
        queue.armAtOrBefore(e.get(2), nearMax + 15); // wraps too
        assertThat(queue.earliestNs()).isEqualTo(nearMax);
        assertThat(queue.pollDue(nearMax - 1)).isNull();
        assertThat(queue.pollDue(nearMax + 20)).isSameAs(e.get(1));
        assertThat(queue.pollDue(nearMax + 20)).as("past the wrap, still in order").isSameAs(e.get(2));
        assertThat(queue.pollDue(nearMax + 20)).isNull();
        assertThat(queue.pollDue(nearMax + 30)).isSameAs(e.get(0));
    }

    /**
     * Thousands of random arms, cancels and polls against a reference model (deadlines held as
     * offsets from the clock's origin), with clock origins that include one close to
     * {@link Long#MAX_VALUE}, so that deadlines wrap to negative numbers mid-run.
     */
    @ParameterizedTest(name = "clock origin {0}")
    @ValueSource(longs = {0L, -987_654_321_000L, Long.MAX_VALUE - 400_000L, Long.MIN_VALUE + 5L})
    void shouldMatchAReferenceModelUnderRandomOperations(long originNs) {
        Random random = new Random(originNs ^ 0x5DEECE66DL);
        TimerQueue queue = new TimerQueue();
        List<Entry> pool = entries(300);
        Map<Entry, Long> model = new HashMap<>(); // entry -> deadline offset from originNs
        long nowOffset = 0;
        int polled = 0;
        for (int step = 0; step < 30_000; step++) {
            Entry entry = pool.get(random.nextInt(pool.size()));
            int op = random.nextInt(10);
            if (op < 5) {
                long deadlineOffset = nowOffset - 1_000 + random.nextInt(200_000);
                queue.armAtOrBefore(entry, originNs + deadlineOffset);
                model.merge(entry, deadlineOffset, Math::min);
            } else if (op < 7) {
                queue.cancel(entry);
                model.remove(entry);
            } else {
                nowOffset += random.nextInt(20_000);
                long nowNs = originNs + nowOffset;
                TimerEntry due;
                while ((due = queue.pollDue(nowNs)) != null) {
                    long expected = model.values().stream().min(Long::compare).orElseThrow();
                    Long offset = model.remove((Entry) due);
                    assertThat(offset).as("step %d: polled %s is in the model", step, due).isNotNull();
                    assertThat(offset).as("step %d: polled the earliest", step).isEqualTo(expected);
                    assertThat(offset).as("step %d: polled only what is due", step).isLessThanOrEqualTo(nowOffset);
                    assertThat(due.timerArmed()).isFalse();
                    polled++;
                }
                long reached = nowOffset;
                assertThat(model.values()).as("step %d: nothing due is left", step).allMatch(o -> o > reached);
            }
            checkAgainstModel(queue, pool, model, originNs, step);
        }
        assertThat(polled).as("the run polled entries").isGreaterThan(1_000);
        // Drain: deadlines come out non-decreasing.
        long previous = Long.MIN_VALUE;
        TimerEntry due;
        while ((due = queue.pollDue(originNs + nowOffset + 1_000_000_000L)) != null) {
            long offset = model.remove((Entry) due);
            assertThat(offset).isGreaterThanOrEqualTo(previous);
            previous = offset;
        }
        assertThat(model).isEmpty();
        assertThat(queue.size()).isZero();
    }

    private static void checkAgainstModel(TimerQueue queue, List<Entry> pool, Map<Entry, Long> model, long originNs,
            int step) {
        assertThat(queue.size()).as("step %d: size", step).isEqualTo(model.size());
        if (model.isEmpty()) {
            assertThat(queue.earliestNs()).isEqualTo(Long.MAX_VALUE);
        } else {
            long earliest = model.values().stream().min(Long::compare).orElseThrow();
            assertThat(queue.earliestNs()).as("step %d: earliest", step).isEqualTo(originNs + earliest);
        }
        Set<Integer> indexes = new HashSet<>();
        for (Entry entry : pool) {
            Long offset = model.get(entry);
            if (entry.timerArmed() != (offset != null)) {
                throw new AssertionError("step " + step + ": " + entry + " armed, model says " + offset);
            }
            if (offset != null) {
                if (entry.timerDeadlineNs != originNs + offset) {
                    throw new AssertionError("step " + step + ": " + entry + " deadline, model says " + offset);
                }
                indexes.add(entry.timerIndex);
            }
        }
        // Every armed entry has its own slot, and the slots are exactly 0..size-1.
        if (indexes.size() != model.size() || indexes.stream().anyMatch(i -> i < 0 || i >= model.size())) {
            throw new AssertionError("step " + step + ": heap slots " + indexes + " for " + model.size() + " entries");
        }
    }
}
