package io.homa.reactive.internal.transport;

/**
 * Whether one event loop busy-polls before it sleeps ({@link BusyPollLoops}), from its recent idle
 * spells: a spell that ends with work within {@code maxNs} of its start is short, one a full poll
 * would have caught. While nearly all recent spells were short (an exponentially weighted average
 * over about {@value #WEIGHT} spells, at least {@link #pollThreshold()}), the loop polls for
 * {@code maxNs}; otherwise it sleeps at once.
 *
 * <p>The threshold is where polling stops costing more CPU than it saves: a poll that catches
 * nothing burns the whole window and the loop sleeps anyway, while one that catches work saves a
 * sleep and its wake-up, about {@value #WAKE_UP_NS} ns of CPU (the futex or epoll wake-up and two
 * context switches). So the share of spells a poll misses may be at most {@code WAKE_UP_NS / maxNs}:
 * one in ten for a 50 µs window. Traffic in quick succession (a round trip, a burst) keeps the loop
 * polling; traffic whose gaps are random and often longer than the window (Poisson arrivals at a
 * moderate rate) puts it to sleep, as DPDK's power-aware loops back off, instead of burning a core
 * on polls that find nothing half the time.
 *
 * <p>A spell's length is measured whether the loop polled or slept. A spell the loop slept
 * through also holds its wake-up and, in a round trip, the peer's, which polling would have
 * saved: such a spell counts as short up to {@value #SLEPT_FACTOR} x {@code maxNs}. Without
 * that allowance a loop that stopped polling (during a JIT warm-up, a GC pause) could stay
 * asleep for good: its round trips, lengthened by the wake-ups, no longer fit the window. One
 * loop's; not thread-safe.
 */
final class PollBudget {
    /**
     * Spells in the average: few enough to follow the traffic within milliseconds, enough that one
     * long spell (a collection, a slow answer) does not stop a round trip's polling.
     */
    static final int WEIGHT = 16;
    /** CPU a sleep and its wake-up cost the loop, ns: what a poll that catches work saves. */
    static final long WAKE_UP_NS = 5_000;
    /** The threshold's bounds: a short window polls while most spells are short, a long one while nearly all are. */
    static final double MIN_THRESHOLD = 0.5;
    static final double MAX_THRESHOLD = 0.99;
    /** How much longer than the window a spell the loop slept through may be and still count as short. */
    static final int SLEPT_FACTOR = 2;

    private final long maxNs;
    private final double pollThreshold;
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
        this.pollThreshold = Math.max(MIN_THRESHOLD, Math.min(MAX_THRESHOLD, 1 - (double) WAKE_UP_NS / maxNs));
    }

    /** The share of recent spells that must have been short for the loop to poll, 0.5..0.99. */
    double pollThreshold() {
        return pollThreshold;
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
            polled = shortFraction >= pollThreshold;
        }
        return polled ? maxNs : 0;
    }

    /** Short spells among the recent ones, 0..1. */
    double shortFraction() {
        return shortFraction;
    }
}
