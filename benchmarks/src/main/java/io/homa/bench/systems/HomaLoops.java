package io.homa.bench.systems;

import io.homa.reactive.HomaTransportConfig;

/**
 * {@code --homa-loops}: how many event loops every Homa transport of a run has
 * ({@link HomaTransportConfig#loops()}: one socket and engine per loop, the serving sockets on one
 * port). Not given, the transport's default: one loop per processor the process may use, which is
 * one for the pinned processes of the usual scenarios.
 */
public final class HomaLoops {
    /** {@code --homa-loops} not given: the transport's default. */
    public static final int TRANSPORT_DEFAULT = HomaTransportConfig.AUTO_LOOPS;
    /** Most loops the option accepts. */
    public static final int MAX_LOOPS = HomaTransportConfig.MAX_LOOPS;

    private HomaLoops() {}

    /**
     * Checks a {@code --homa-loops} value: 0 (the transport's default) or 1..{@value #MAX_LOOPS}.
     *
     * @return {@code loops}
     * @throws IllegalArgumentException otherwise, naming the option
     */
    public static int check(int loops) {
        if (loops < 0 || loops > MAX_LOOPS) {
            throw new IllegalArgumentException("--homa-loops must be between 1 and " + MAX_LOOPS
                    + " (or 0: the transport's default), was " + loops);
        }
        return loops;
    }

    /** Sets the transport's loops; 0 leaves its default. */
    static void apply(HomaTransportConfig.Builder builder, int loops) {
        builder.loops(check(loops));
    }
}
