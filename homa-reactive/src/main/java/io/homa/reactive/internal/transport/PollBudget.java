package io.homa.reactive.internal.transport;

/**
 * Whether one event loop busy-polls before it sleeps ({@link BusyPollLoops}), from its recent idle
 * spells: a spell that ends with work within {@code maxNs} of its start is short, one a full poll
 * would have caught. While at least half of the recent spells were short (an exponentially
 * weighted average over about {@value #WEIGHT} spells), the loop polls for {@code maxNs};
 * otherwise it sleeps at once. A poll costs the core up to {@code maxNs} and saves a wake-up only
 * when the spell is short, so polling pays while packets come in quick succession (a round trip,
 * a burst) and not while they come further apart than the window, as DPDK's power-aware loops
 * back off. A spell's length is measured whether the loop polled or slept. A spell the loop slept
 * through also holds its wake-up and, in a round trip, the peer's, which polling would have
 * saved: such a spell counts as short up to {@value #SLEPT_FACTOR} x {@code maxNs}. Without
 * that allowance a loop that stopped polling (during a JIT warm-up, a GC pause) could stay
 * asleep for good: its round trips, lengthened by the wake-ups, no longer fit the window. One
 * loop's; not thread-safe.
 */
final class PollBudget {
    /** Spells in the average: few enough to follow the traffic within milliseconds. */
    static final int WEIGHT = 8;
    /** How much longer than the window a spell the loop slept through may be and still count as short. */
    static final int SLEPT_FACTOR = 2;

    private final long maxNs;
    /** Short spells among the recent ones, 0..1; starts at 1: a new loop polls. */
    private double shortFraction = 1;
    /** When the current idle spell began, or -1 while the loop has work. */
    private long idleSinceNs = -1;
    /** Whether the loop polled in the current idle spell. */
    private boolean polled;

    /** @param maxNs the configured busy poll, at least 1 ns */
    PollBudget(long maxNs) {
        if (maxNs < 1) {
            throw new IllegalArgumentException("maxNs must be at least 1, was " + maxNs);
        }
        this.maxNs = maxNs;
    }

    /** The loop found work (or was woken) at {@code nowNs}: the idle spell, if any, ends. */
    void work(long nowNs) {
        if (idleSinceNs >= 0) {
            long shortNs = polled ? maxNs : SLEPT_FACTOR * maxNs;
            double sample = nowNs - idleSinceNs <= shortNs ? 1 : 0;
            shortFraction += (sample - shortFraction) / WEIGHT;
            idleSinceNs = -1;
        }
    }

    /**
     * The loop found nothing to do at {@code nowNs} (a spell begins, or goes on).
     *
     * @return how long to poll now, ns: {@code maxNs}, or 0 to sleep at once
     */
    long idle(long nowNs) {
        if (idleSinceNs < 0) {
            idleSinceNs = nowNs;
            polled = shortFraction >= 0.5;
        }
        return polled ? maxNs : 0;
    }

    /** Short spells among the recent ones, 0..1. */
    double shortFraction() {
        return shortFraction;
    }
}
