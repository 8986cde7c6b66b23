package io.homa.bench.scenario;

/**
 * The length of an S5 workload's measured (Poisson) window: the plan's, or with
 * {@code --s5-min-calls=N} long enough for N recorded calls at the offered rate. It is computed
 * before the window starts, from the rate all load processes offer together, so that every one of
 * them (the load generator's own open loop, or each load agent's) measures the same window.
 */
public final class S5Window {
    /** The largest {@code --s5-min-calls}. */
    public static final int MAX_MIN_CALLS = 10_000_000;
    /** The least margin beyond N / rate, ms. */
    static final long MIN_MARGIN_MS = 1_000;

    private S5Window() {}

    /**
     * Checks {@code --s5-min-calls}.
     *
     * @return {@code minCalls}
     * @throws IllegalArgumentException outside 0..{@link #MAX_MIN_CALLS}, naming the option
     */
    public static int checkMinCalls(int minCalls) {
        if (minCalls < 0 || minCalls > MAX_MIN_CALLS) {
            throw new IllegalArgumentException("--s5-min-calls must be between 0 (off) and " + MAX_MIN_CALLS
                    + ", was " + minCalls);
        }
        return minCalls;
    }

    /**
     * The window, ms: {@code planMs}, or when longer, {@code ceil(minCalls / offeredPerSecond)}
     * seconds plus a margin of a tenth of that (at least {@link #MIN_MARGIN_MS}): the number of
     * Poisson arrivals in a window varies by about the square root of its mean, and calls that fail
     * or are skipped are not recorded. A system that achieves less than the offered rate
     * can still record fewer than {@code minCalls}; the report says so.
     *
     * @param planMs the plan's window ({@link RunPlan#s5LoadMs()}), ms
     * @param minCalls {@code --s5-min-calls}, 0 for off
     * @param offeredPerSecond calls per second every load process offers together, &gt; 0
     * @throws IllegalArgumentException for a {@code minCalls} outside 0..{@link #MAX_MIN_CALLS} or a
     *     rate that is not positive and finite
     */
    public static long measureMs(long planMs, int minCalls, double offeredPerSecond) {
        checkMinCalls(minCalls);
        if (!(offeredPerSecond > 0 && offeredPerSecond < Double.POSITIVE_INFINITY)) {
            throw new IllegalArgumentException("offered rate must be positive and finite, was " + offeredPerSecond);
        }
        if (minCalls == 0) {
            return planMs;
        }
        long neededMs = (long) Math.ceil(minCalls / offeredPerSecond) * 1_000;
        return Math.max(planMs, neededMs + Math.max(MIN_MARGIN_MS, neededMs / 10));
    }
}
