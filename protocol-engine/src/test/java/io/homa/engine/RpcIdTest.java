package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** rpcids: even, increasing, clock-derived at start, and hard to guess off-path with random steps (issue 14). */
class RpcIdTest {
    private static final InetSocketAddress SERVER = new InetSocketAddress("10.0.0.2", 4000);

    @Test
    void randomStepsShouldKeepRpcidsEvenAndIncreasingWithEightBitsOfSpread() {
        long first = HomaEngine.clockDerivedFirstRpcId(1_764_000_000_000_000L);
        HomaEngine engine = new HomaEngine(EngineConfig.defaults(), 5000, first, new SplittableRandom(42));
        long previous = engine.sendRequest(0, SERVER, SendOptions.of(new byte[1]));
        assertThat(previous).isEqualTo(first);
        Set<Long> gaps = new HashSet<>();
        long sum = 0;
        int rpcs = 20_000;
        for (int i = 0; i < rpcs; i++) {
            long rpcId = engine.sendRequest(0, SERVER, SendOptions.of(new byte[1]));
            long gap = rpcId - previous;
            assertThat(rpcId & 1).isZero();
            assertThat(gap).isBetween(2L, (long) HomaEngine.MAX_RPC_ID_STEP);
            gaps.add(gap);
            sum += gap;
            previous = rpcId;
        }
        assertThat(gaps).as("every even gap turns up").hasSize(HomaEngine.MAX_RPC_ID_STEP / 2);
        // The bit budget: 2,048 units per microsecond, about 257 per RPC on average.
        assertThat((double) sum / rpcs).isBetween(240.0, 275.0);
    }

    @Test
    void withoutRandomStepsRpcidsShouldBeConsecutive() {
        HomaEngine engine = new HomaEngine(EngineConfig.defaults(), 5000, 100);
        assertThat(engine.sendRequest(0, SERVER, SendOptions.of(new byte[1]))).isEqualTo(100);
        assertThat(engine.sendRequest(0, SERVER, SendOptions.of(new byte[1]))).isEqualTo(102);
    }

    @Test
    void aRestartedClientShouldStartAboveItsPredecessorsRpcids() {
        long startMicros = 1_764_000_000_000_000L;
        // A run of one second at 7 RPCs per microsecond, each taking the average step (257 units).
        long lastOfPreviousRun = HomaEngine.clockDerivedFirstRpcId(startMicros) + 1_000_000L * 7 * 257;
        assertThat(HomaEngine.clockDerivedFirstRpcId(startMicros + 1_000_000L)).isGreaterThan(lastOfPreviousRun);
        // Also above rpcids of a predecessor built before the shift went from 8 to 11 bits.
        assertThat(HomaEngine.clockDerivedFirstRpcId(startMicros)).isGreaterThan((startMicros + 1_000_000_000L) << 8);
    }
}
