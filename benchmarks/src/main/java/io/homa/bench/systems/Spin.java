package io.homa.bench.systems;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * A fixed amount of CPU work: S11's handler. Measured in the thread's own CPU time, not wall time,
 * so that a call costs the server the same CPU whether or not its thread is preempted: with ten
 * handler threads sharing one core, a wall-clock spin would be cut short by the others' turns and
 * the server's capacity would grow with its thread count.
 */
public final class Spin {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    /** Whether the JVM measures thread CPU time; without it, wall time stands in. */
    private static final boolean THREAD_CPU_TIME = THREADS.isCurrentThreadCpuTimeSupported()
            && THREADS.isThreadCpuTimeEnabled();

    private Spin() {}

    /** Busy-spins the calling thread until it has used {@code us} µs of CPU time (wall time if the JVM cannot tell). */
    public static void cpuMicros(int us) {
        if (us <= 0) {
            return;
        }
        long spinNs = us * 1_000L;
        if (THREAD_CPU_TIME) {
            long endNs = THREADS.getCurrentThreadCpuTime() + spinNs;
            while (THREADS.getCurrentThreadCpuTime() < endNs) {
                Thread.onSpinWait();
            }
        } else {
            long endNs = System.nanoTime() + spinNs;
            while (System.nanoTime() < endNs) {
                Thread.onSpinWait();
            }
        }
    }

    /** Whether {@link #cpuMicros} measures thread CPU time (true on HotSpot/Linux). */
    public static boolean measuresThreadCpuTime() {
        return THREAD_CPU_TIME;
    }
}
