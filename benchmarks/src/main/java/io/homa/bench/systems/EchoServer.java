package io.homa.bench.systems;

/** One running echo server of one system, in the server process. */
public interface EchoServer extends AutoCloseable {
    /** The loopback port it listens on (UDP for Homa and the UDP floor, TCP otherwise). */
    int port();

    /** The server's transport counters that matter for a report, by name (none for most systems). */
    default java.util.Map<String, Long> counters() {
        return java.util.Map.of();
    }

    /** Stops serving; waits a bounded time. */
    @Override
    void close();
}
