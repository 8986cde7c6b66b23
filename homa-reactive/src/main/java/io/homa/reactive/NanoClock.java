package io.homa.reactive;

/**
 * The one clock of a transport and of the RPC layer above it: monotonic nanoseconds, of an
 * arbitrary origin (compare times as {@code a - b < 0}). The transport reads it once per pass of
 * its event loop and hands that time to the engine (Aeron's {@code NanoClock} in
 * {@code Sender.doWork}); deadlines of calls are measured on it. Tests inject a clock they move by
 * hand.
 */
@FunctionalInterface
public interface NanoClock {

    /** The current time in nanoseconds, monotonic, of an arbitrary origin. */
    long nanoTime();

    /** The JVM's monotonic clock ({@link System#nanoTime()}): the only place the project reads it. */
    static NanoClock system() {
        return System::nanoTime;
    }
}
