package io.homa.reactive.internal.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class PollBudgetTest {
    private static final long MAX_NS = 50_000;

    /** One idle spell from {@code startNs} that ends with work {@code gapNs} later; returns the poll it got. */
    private static long spell(PollBudget budget, long startNs, long gapNs) {
        long pollNs = budget.idle(startNs);
        budget.work(startNs + gapNs);
        return pollNs;
    }

    @Test
    void shouldPollWhileSpellsAreShorterThanTheWindow() {
        PollBudget budget = new PollBudget(MAX_NS);
        long nowNs = 0;
        for (int i = 0; i < 1_000; i++, nowNs += 100_000) {
            assertThat(spell(budget, nowNs, 15_000)).as("a round trip's spells").isEqualTo(MAX_NS);
        }
        assertThat(budget.shortFraction()).isEqualTo(1.0);
    }

    @Test
    void shouldStopPollingWhenMostSpellsOutlastTheWindowAndResumeWhenTrafficQuickens() {
        PollBudget budget = new PollBudget(MAX_NS);
        long nowNs = 0;
        int polled = 0;
        for (int i = 0; i < 100; i++, nowNs += 1_000_000) {
            polled += spell(budget, nowNs, 500_000) > 0 ? 1 : 0;
        }
        assertThat(polled).as("polls until the average drops below nine in ten").isEqualTo(2);
        assertThat(spell(budget, nowNs, 10_000)).isZero();

        int quick = 0;
        while (spell(budget, nowNs += 1_000_000, 10_000) == 0) {
            quick++;
        }
        assertThat(quick).as("short spells measured while sleeping bring polling back").isBetween(20, 40);
    }

    @Test
    void shouldResumePollingWhenSpellsSleptThroughFitTheWindowOnceTheWakeUpsAreAllowedFor() {
        PollBudget budget = new PollBudget(MAX_NS);
        long nowNs = 0;
        for (int i = 0; i < 100; i++, nowNs += 1_000_000) {
            spell(budget, nowNs, 500_000); // a warm-up's slow passes: polling stops
        }
        assertThat(spell(budget, nowNs += 1_000_000, 500_000)).isZero();

        // a round trip that polling makes 16 µs takes 80 µs with both ends asleep: longer than the
        // window, but within the allowance for the wake-ups, so polling comes back
        int slept = 0;
        while (budget.idle(nowNs += 100_000) == 0 && slept < 100) {
            budget.work(nowNs + 80_000);
            slept++;
        }
        assertThat(slept).isBetween(20, 40);
        // polling, the round trip is short again and polling stays
        budget.work(nowNs + 16_000);
        for (int i = 0; i < 100; i++) {
            assertThat(spell(budget, nowNs += 100_000, 16_000)).isEqualTo(MAX_NS);
        }
        // while it polls, the window alone is the measure: spells of 80 µs then stop it
        int polled = 0;
        while (spell(budget, nowNs += 100_000, 80_000) > 0) {
            polled++;
        }
        assertThat(polled).isBetween(1, 3);
    }

    @Test
    void shouldKeepPollingThroughALongSpell() {
        PollBudget budget = new PollBudget(MAX_NS);
        long nowNs = 0;
        for (int i = 0; i < 100; i++, nowNs += 100_000) {
            spell(budget, nowNs, 15_000);
        }
        spell(budget, nowNs, 5_000_000); // a pause: a collection, a slow peer
        nowNs += 10_000_000;
        assertThat(spell(budget, nowNs, 15_000)).isEqualTo(MAX_NS);
    }

    @Test
    void shouldSleepThroughPoissonArrivalsWhoseGapsOftenOutlastTheWindow() {
        // arrivals at 16,000/s (a client's requests and responses at 8,000 calls/s): a mean gap of
        // 62.5 µs, so about half the gaps are shorter than the window; polling would waste a whole
        // window on each of the others
        PollBudget budget = new PollBudget(MAX_NS);
        java.util.Random random = new java.util.Random(42);
        long nowNs = 0;
        int polled = 0;
        for (int i = 0; i < 10_000; i++) {
            long gapNs = (long) (-Math.log(1 - random.nextDouble()) * 62_500);
            polled += spell(budget, nowNs, gapNs) > 0 ? 1 : 0;
            nowNs += gapNs + 1_000;
        }
        assertThat(polled).as("spells polled of 10,000").isLessThan(500);
    }

    @Test
    void shouldPollWhileMostSpellsAreShortWhenTheWindowIsAlmostAWakeUp() {
        PollBudget shortWindow = new PollBudget(PollBudget.WAKE_UP_NS);
        assertThat(shortWindow.pollThreshold()).isEqualTo(PollBudget.MIN_THRESHOLD);
        assertThat(new PollBudget(MAX_NS).pollThreshold()).isEqualTo(0.9);
        assertThat(new PollBudget(1_000_000).pollThreshold()).isEqualTo(PollBudget.MAX_THRESHOLD);
    }

    @Test
    void shouldMeasureASpellFromItsFirstIdlePass() {
        PollBudget budget = new PollBudget(MAX_NS);
        budget.idle(0);
        budget.idle(40_000); // a pass after a spurious wake-up: the same spell
        budget.work(MAX_NS + 1);
        assertThat(budget.shortFraction()).isEqualTo(1.0 - 1.0 / PollBudget.WEIGHT);
    }

    @Test
    void shouldRejectANonPositiveMaximum() {
        assertThatThrownBy(() -> new PollBudget(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxNs must be at least 1, was 0");
    }
}
