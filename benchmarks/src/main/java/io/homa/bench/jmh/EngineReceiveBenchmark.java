package io.homa.bench.jmh;

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
 * The engine's cost per received DATA packet at steady state: one full packet (1416 payload
 * bytes) of a long message in, what the engine answers out (see {@link SteadyStateReceiver}).
 *
 * <ul>
 *   <li>{@code side}: {@code REQUEST} = the engine is the server receiving a long request;
 *       {@code RESPONSE} = the engine is the client receiving a long response.
 *   <li>{@code unscheduledBytes}: 14160 (10 packets) makes the grant increment one packet, so each
 *       operation is exactly one DATA in and one GRANT out; 60000 is the default configuration,
 *       one GRANT per 5 DATA.
 * </ul>
 *
 * <p>Allocation per operation includes the payload itself: the engine copies each packet's 1416
 * bytes into the message's 16 KiB chunks (the memory the message is delivered in), about
 * 1417.4 B/op including the arrays' headers. Anything above that is engine overhead.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class EngineReceiveBenchmark {
    @Param({"REQUEST", "RESPONSE"})
    public String side;

    @Param({"14160", "60000"})
    public int unscheduledBytes;

    private SteadyStateReceiver receiver;

    @Setup(Level.Trial)
    public void start() {
        receiver = new SteadyStateReceiver(SteadyStateReceiver.Side.valueOf(side), unscheduledBytes);
        // Past the unscheduled bytes, into the steady state; and once through a message change.
        for (int i = 0; i < receiver.packetsPerMessage() + 1_000; i++) {
            receiver.step();
        }
        receiver.verify(minGrantsPerPacket() * 0.99);
    }

    private double minGrantsPerPacket() {
        return unscheduledBytes <= 14160 ? 1.0 : 0.15;
    }

    @TearDown(Level.Trial)
    public void check() {
        receiver.verify(minGrantsPerPacket() * 0.99);
    }

    @Benchmark
    public int dataInGrantOut() {
        return receiver.step();
    }
}
