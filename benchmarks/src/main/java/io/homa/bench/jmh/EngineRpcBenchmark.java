package io.homa.bench.jmh;

import io.homa.engine.EngineConfig;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The cost of one complete RPC between two engines on an in-memory link
 * ({@link InMemoryEnginePair}): request and response of {@code messageBytes} each, default
 * configuration. Both engines' work is counted (client send, server receive and respond, client
 * receive, ACK). Allocation per operation includes the messages: the engine delivers each as a
 * new {@code byte[]} (100 B: 2 x 120 B of arrays) and the per-RPC state of both engines.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class EngineRpcBenchmark {
    @Param({"100", "100000"})
    public int messageBytes;

    private InMemoryEnginePair pair;

    @Setup(Level.Trial)
    public void start() {
        pair = new InMemoryEnginePair(EngineConfig.defaults(), messageBytes, messageBytes);
        for (int i = 0; i < 1_000; i++) {
            pair.call();
        }
        pair.verify();
    }

    @TearDown(Level.Trial)
    public void check() {
        pair.verify();
    }

    @Benchmark
    public int echoRpc() {
        return pair.call();
    }
}
