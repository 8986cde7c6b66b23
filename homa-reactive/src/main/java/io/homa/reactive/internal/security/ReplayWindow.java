package io.homa.reactive.internal.security;

/**
 * Anti-replay window over 64-bit packet counters (RFC 6479, as WireGuard and IPsec use it): a ring
 * of {@value #BITMAP_LONGS} 64-bit words remembers which of the last {@value #WINDOW} counters below
 * the highest one seen have been accepted. A counter above the highest is new; one inside the window
 * is new if its bit is clear; one below the window is refused (it may be a replay we can no longer
 * tell). Counters must be non-negative. {@link #check} does not change the state, so a datagram is
 * checked, authenticated, and only then {@link #update marked}. Not thread-safe.
 */
final class ReplayWindow {
    /** Words in the ring (a power of two). */
    static final int BITMAP_LONGS = 32;
    /** Counters below the highest one that are still judged by their bit (the ring less one word): 1,984. */
    static final int WINDOW = (BITMAP_LONGS - 1) * Long.SIZE;

    private final long[] bitmap = new long[BITMAP_LONGS];
    /** Highest counter accepted, -1 before the first. */
    private long top = -1;

    /** Whether {@code counter} would be accepted now (not seen, not below the window). */
    boolean check(long counter) {
        if (counter < 0) {
            return false;
        }
        if (counter > top) {
            return true;
        }
        if (top - counter >= WINDOW) {
            return false;
        }
        return (bitmap[index(counter)] & bit(counter)) == 0;
    }

    /** Marks {@code counter} as seen, sliding the window up if it is the highest; call after {@link #check}. */
    void update(long counter) {
        if (counter > top) {
            long currentWord = top >> 6;
            long newWord = counter >> 6;
            long clear = Math.min(newWord - currentWord, BITMAP_LONGS);
            for (long i = 1; i <= clear; i++) {
                bitmap[(int) ((currentWord + i) & (BITMAP_LONGS - 1))] = 0;
            }
            top = counter;
        }
        bitmap[index(counter)] |= bit(counter);
    }

    /** The highest counter accepted, -1 before the first. */
    long highest() {
        return top;
    }

    private static int index(long counter) {
        return (int) ((counter >> 6) & (BITMAP_LONGS - 1));
    }

    private static long bit(long counter) {
        return 1L << (counter & 63);
    }
}
