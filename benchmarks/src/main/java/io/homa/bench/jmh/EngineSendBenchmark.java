package io.homa.bench.jmh;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The engine's cost per sent DATA packet at steady state: one full packet (1416 payload bytes) of
 * a long request out through the pacer, a GRANT in every fifth (see {@link SteadyStateSender}).
 * The engine reads the payload from the caller's array into its packet buffer, so nothing is
 * allocated per packet: B/op is the engine's own allocation, about 0 once warm (per request, 47,393
 * packets, the RPC's state).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class EngineSendBenchmark {
    private SteadyStateSender sender;

    @Setup(Level.Trial)
    public void start() {
        sender = new SteadyStateSender();
        for (int i = 0; i < sender.packetsPerMessage() + 1_000; i++) {
            sender.step();
        }
        sender.verify();
    }

    @TearDown(Level.Trial)
    public void check() {
        sender.verify();
    }

    @Benchmark
    public int dataOut() {
        return sender.step();
    }
}
