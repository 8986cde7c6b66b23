package io.homa.bench.systems;

import java.util.concurrent.CompletableFuture;

/**
 * The client side of one system under test, connected to one or more echo servers ("targets").
 * Thread-safe: calls may be issued from any thread, including completion callbacks.
 */
public interface EchoClient extends AutoCloseable {
    /**
     * Sends one request (an {@link EchoProtocol} template, not modified) to a target.
     *
     * @param target index of the server, 0..targets-1
     * @param request the request bytes
     * @return completes with the response bytes, or exceptionally when the RPC fails
     */
    CompletableFuture<byte[]> call(int target, byte[] request);

    /**
     * As {@link #call(int, byte[])}, with a deadline of {@code timeoutMs} from now given to the
     * system the way an application would give it (S11): Homa's RPC layer and gRPC send it to the
     * server, which does not start a call whose deadline passed; RSocket and Homa's message layer
     * have no deadline on the wire and cancel the call when it passes. The call then fails with the
     * system's own timeout error ({@link FailureKind#TIMEOUT}). By default: no deadline.
     */
    default CompletableFuture<byte[]> call(int target, byte[] request, long timeoutMs) {
        return call(target, request);
    }

    /**
     * Protocol counters of the client side, by name (Homa: the engine's counters; others: none).
     * Scenarios report the change over their run.
     */
    default java.util.Map<String, Long> counters() {
        return java.util.Map.of();
    }

    /**
     * The system's streaming calls to the same servers (S10), or {@code null} for a system without
     * streams: the Homa message layer (one message each way per call) and the floors.
     */
    default @org.jspecify.annotations.Nullable EchoStreams streams() {
        return null;
    }

    /** Number of servers this client talks to. */
    int targets();

    /** Releases connections and threads; waits a bounded time. */
    @Override
    void close();
}
