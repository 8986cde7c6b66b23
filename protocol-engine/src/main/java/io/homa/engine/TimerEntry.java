package io.homa.engine;

/**
 * Something that owns one deadline in a {@link TimerQueue}: an RPC (RESEND, timeout, NEED_ACK,
 * reclaim) or a peer (ACK flush, idle expiry). The queue keeps its own copy of the deadline and the
 * entry's position in the heap here, so that re-arming or cancelling needs no search.
 */
abstract class TimerEntry {
    /** The deadline the queue holds for this entry (valid while {@link #timerIndex} >= 0). */
    long timerDeadlineNs;
    /** Position in the queue's heap, or -1 when not armed. */
    int timerIndex = -1;

    /** Whether the entry is armed in a queue. */
    final boolean timerArmed() {
        return timerIndex >= 0;
    }
}
