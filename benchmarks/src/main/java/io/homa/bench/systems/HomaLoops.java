package io.homa.bench.systems;

import io.homa.reactive.HomaTransportConfig;

/**
 * {@code --homa-loops}: how many event loops every Homa transport of a run has (issue 37, part 1:
 * one socket and engine per loop on the same port). The transport's builder has no such setting
 * yet; {@link #apply} is the one place that will set it.
 */
public final class HomaLoops {
    /** {@code --homa-loops} not given: the transport's default (today one loop). */
    public static final int TRANSPORT_DEFAULT = 0;
    /** Most loops the option accepts. */
    public static final int MAX_LOOPS = 64;

    private HomaLoops() {}

    /**
     * Checks a {@code --homa-loops} value: 0 (the transport's default) or 1..{@value #MAX_LOOPS},
     * and more than one only where the transport can have them.
     *
     * @return {@code loops}
     * @throws IllegalArgumentException otherwise, naming the option
     */
    public static int check(int loops) {
        if (loops < 0 || loops > MAX_LOOPS) {
            throw new IllegalArgumentException("--homa-loops must be between 1 and " + MAX_LOOPS
                    + " (or 0: the transport's default), was " + loops);
        }
        if (loops > 1 && !supported()) {
            throw new IllegalArgumentException("--homa-loops=" + loops + ": this build's Homa transport has one event loop"
                    + " (HomaTransportConfig.Builder.loops, issue 37, is not in it yet)");
        }
        return loops;
    }

    /** Whether this build's transport can run more than one event loop. */
    public static boolean supported() {
        return false; // true once HomaTransportConfig.Builder.loops(int) exists
    }

    /**
     * Sets the transport's loops; 0 leaves its default. Today's transport has one loop, so 1 needs
     * no setting and more is refused by {@link #check}.
     */
    static void apply(HomaTransportConfig.Builder builder, int loops) {
        if (loops == TRANSPORT_DEFAULT || loops == 1 && !supported()) {
            return;
        }
        check(loops);
        // ISSUE 37: once the builder has it, this is the line: builder.loops(loops);
        throw new IllegalStateException("--homa-loops=" + loops + " is not supported by this build's Homa transport");
    }
}
