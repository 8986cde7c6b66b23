package io.homa.engine.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Deterministic simulation of the engine under loss, duplication, reordering, long delays,
 * partitions and server crashes (see {@link Simulation}). {@code -Dhoma.sim.seeds=N} sets how many
 * seeds run (default 10,000; the {@code sim-long} profile runs more), {@code -Dhoma.sim.firstSeed}
 * where they start; {@code -Dhoma.sim.seed=S} with {@link #replay()} runs one seed again.
 */
class SimulationTest {
    private static final int RPCS_PER_CLIENT = 20;

    @Test
    void shouldKeepEveryInvariantAcrossManySeeds() throws Exception {
        int seeds = Integer.getInteger("homa.sim.seeds", 10_000);
        long firstSeed = Long.getLong("homa.sim.firstSeed", 1L);
        int threads = Math.max(1, Runtime.getRuntime().availableProcessors());
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        AtomicLong rpcs = new AtomicLong();
        AtomicLong completed = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        AtomicLong executions = new AtomicLong();
        AtomicLong reexecutions = new AtomicLong();
        AtomicLong packets = new AtomicLong();
        AtomicLong resends = new AtomicLong();
        List<String> violations = java.util.Collections.synchronizedList(new ArrayList<>());
        long startNs = System.nanoTime();
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int slice = t;
                futures.add(pool.submit(() -> {
                    for (long seed = firstSeed + slice; seed < firstSeed + seeds; seed += threads) {
                        if (violations.size() >= 5) {
                            return;
                        }
                        try {
                            Simulation.Result result = new Simulation(seed, RPCS_PER_CLIENT).run();
                            rpcs.addAndGet(result.rpcs());
                            completed.addAndGet(result.completed());
                            failed.addAndGet(result.failed());
                            executions.addAndGet(result.executions());
                            reexecutions.addAndGet(result.reexecutionsAfterCrash());
                            packets.addAndGet(result.packets());
                            resends.addAndGet(result.resends());
                        } catch (AssertionError | RuntimeException e) {
                            violations.add(e instanceof Simulation.InvariantViolation ? e.getMessage()
                                    : "seed " + seed + ": " + e + "\n  replay: -Dtest=SimulationTest#replay -Dhoma.sim.seed=" + seed);
                        }
                    }
                }));
            }
            for (Future<?> future : futures) {
                future.get(30, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
        double seconds = (System.nanoTime() - startNs) / 1e9;
        System.out.printf("Simulation: %,d seeds in %.1f s (%,.0f seeds/s on %d threads): %,d RPCs, %,d completed,"
                        + " %,d failed (crash or partition), %,d executions, %,d re-executions after a server restart,"
                        + " %,d packets, %,d RESENDs%n",
                seeds, seconds, seeds / seconds, threads, rpcs.get(), completed.get(), failed.get(), executions.get(),
                reexecutions.get(), packets.get(), resends.get());
        assertThat(violations).as("invariant violations (first 5)").isEmpty();
        assertThat(completed.get() + failed.get()).isEqualTo(rpcs.get());
        // Server epochs and first contact (issue 14): every request a server runs names its
        // incarnation, so no copy of it, however late, runs on a later one (2,138 re-executions in
        // 10,000 seeds before epochs; 9 with epochs but without first contact).
        assertThat(reexecutions.get()).as("re-executions after a server restart").isZero();
    }

    /**
     * RTT probes lost, duplicated, delayed past their answer's usefulness and sent to crashed or
     * partitioned peers: every RPC still ends, and no invariant breaks.
     */
    @Test
    void shouldKeepEveryInvariantWithRttCongestionControl() {
        int seeds = Integer.getInteger("homa.sim.ccSeeds", 500);
        long packets = 0;
        for (long seed = 1; seed <= seeds; seed++) {
            Simulation.Result result = new Simulation(seed, RPCS_PER_CLIENT, io.homa.engine.CongestionControl.RTT).run();
            assertThat(result.completed() + result.failed()).as("seed %d", seed).isEqualTo(result.rpcs());
            assertThat(result.reexecutionsAfterCrash()).as("seed %d", seed).isZero();
            packets += result.packets();
        }
        System.out.printf("Simulation with congestion control rtt: %,d seeds, %,d packets%n", seeds, packets);
    }

    @Test
    void shouldCarryThousandsOfRpcsInOneRun() {
        for (long seed : new long[] {424242L, 777L}) {
            Simulation.Result result = new Simulation(seed, 1500).run();
            System.out.println("Simulation, one run: " + result);
            assertThat(result.rpcs()).isGreaterThanOrEqualTo(1500);
            assertThat(result.completed() + result.failed()).isEqualTo(result.rpcs());
        }
    }

    /** Runs one seed ({@code -Dhoma.sim.seed=S}, else 1) twice: the same run, keeping every invariant. */
    @Test
    void replay() {
        long seed = Long.getLong("homa.sim.seed", 1L);
        Simulation.Result result = new Simulation(seed, RPCS_PER_CLIENT).run();
        System.out.println("Replayed: " + result);
        assertThat(new Simulation(seed, RPCS_PER_CLIENT).run()).as("the same seed again").isEqualTo(result);
        assertThat(result.completed() + result.failed()).isEqualTo(result.rpcs());
        assertThat(result.reexecutionsAfterCrash()).as("re-executions after a server restart").isZero();
    }
}
