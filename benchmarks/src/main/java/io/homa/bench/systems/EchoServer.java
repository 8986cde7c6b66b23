package io.homa.bench.systems;

/** One running echo server of one system, in the server process. */
public interface EchoServer extends AutoCloseable {
    /** The loopback port it listens on (UDP for Homa and the UDP floor, TCP otherwise). */
    int port();

    /** Stops serving; waits a bounded time. */
    @Override
    void close();
}
