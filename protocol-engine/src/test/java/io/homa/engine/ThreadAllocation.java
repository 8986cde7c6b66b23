package io.homa.engine;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.management.ManagementFactory;

/** HotSpot's exact per-thread allocation counter, for the tests that show a path allocates nothing. */
final class ThreadAllocation {
    private ThreadAllocation() {}

    /** The counter's bean; the calling test is skipped (not failed) on a JVM without one. */
    static com.sun.management.ThreadMXBean threadBean() {
        java.lang.management.ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        assumeTrue(bean instanceof com.sun.management.ThreadMXBean, "needs com.sun.management.ThreadMXBean");
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) bean;
        assumeTrue(threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled(),
                "needs per-thread allocation accounting");
        return threads;
    }
}
