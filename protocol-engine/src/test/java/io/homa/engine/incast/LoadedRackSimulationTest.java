package io.homa.engine.incast;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.EngineConfig;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The loaded rack ({@link LoadedRackExperiment}): W4 echo RPCs from 3 clients to 1 server at 80 %
 * of the server's 100 Mbit/s link, switch ports with 8 strict-priority classes of 37,500 B each,
 * the real engines configured as the benchmark's ({@code linkMbps(100)}, other defaults).
 *
 * <p>On this ideal network (no CPU, no kernel queues, nothing lost but what the switch drops)
 * a correct Homa completes every RPC: the test asserts that, and prints (does not assert) the
 * latency per decile of length, the drops per port and class, and the engine counters.
 *
 * <p>Run alone (about 3 s; the output is in
 * {@code target/surefire-reports/io.homa.engine.incast.LoadedRackSimulationTest-output.txt}):
 * {@code ./mvnw -B -q -pl protocol-engine test -Dtest='LoadedRack*' -Dsurefire.failIfNoSpecifiedTests=false}.
 * The baseline and every variation of {@link #setups}, each as a table and all in a one-line-per-run
 * summary at the end: {@code ./mvnw -B -pl protocol-engine test -Dtest='LoadedRackSimulationTest#experiment'
 * -Dhoma.rack.seconds=30}, optionally {@code -Dhoma.rack.only=baseline,rx20us} (names in
 * {@link #setups}), {@code -Dhoma.rack.seeds=3} (seeds 1, 2, 3; {@code -Dhoma.rack.seed} moves the
 * first) and {@code -Dhoma.rack.traces=true} (the slowest short RPC and the RPC of the longest
 * decile with the highest slowdown, packet by packet and in 20 time slices, and what filled the
 * port to the server at some of its drops). {@link LoadedRackExperiment#main} runs the same from
 * the test class path.
 */
@Tag("rack")
class LoadedRackSimulationTest {

    /** The baseline and the variations, named; {@code only}: comma-separated names, or null for all. */
    static List<LoadedRackExperiment.Setup> setups(long seconds, String only) {
        LoadedRackExperiment.Setup base = LoadedRackExperiment.Setup.rack(seconds * 1_000_000_000L)
                .withSeed(Long.getLong("homa.rack.seed", 1));
        EngineConfig config = base.clientConfig();
        StarNetwork.Fabric fabric = base.fabric();
        List<LoadedRackExperiment.Setup> all = new ArrayList<>(List.of(
                base,
                base.withFabric(fabric.withPerClassBuffers(false)).named("sharedBuffer"),
                base.withFabric(fabric.withPriorityQueues(false)).named("fifoSwitch"),
                base.withFabric(fabric.withRxDelayNs(20_000)).named("rx20us"),
                base.withFabric(fabric.withRxDelayNs(50_000)).named("rx50us"),
                // Closest to the rack: the benchmark's rate and 20 µs of software per received packet.
                base.withLoad(0.8 * 157.1 / 152.8).withFabric(fabric.withRxDelayNs(20_000)).named("rackLike"),
                base.withLoad(0.5).named("load50"),
                base.withLoad(0.9).named("load90"),
                // The benchmark's rate formula (LoadGenerator.linkRate: 157.1 RPC/s at 80 %) is 2.8 % above ours.
                base.withLoad(0.8 * 157.1 / 152.8).named("benchmarkRate"),
                base.withConfig(config.toBuilder().priorityLevels(1).build()).named("onePriority"),
                base.withConfig(config.toBuilder().fifoGrantFraction(0).build()).named("fifo0"),
                base.withConfig(config.toBuilder().fifoGrantFraction(0.1).build()).named("fifo0.1"),
                base.withConfig(config.toBuilder().maxOvercommit(1).build()).named("overcommit1"),
                base.withConfig(config.toBuilder().maxOvercommit(2).build()).named("overcommit2"),
                base.withConfig(config.toBuilder().maxGrantsPerPeer(1).build()).named("grantsPerPeer1"),
                base.withConfig(config.toBuilder().resendIntervalNs(50_000_000L).build()).named("resend50ms"),
                base.withConfig(config.toBuilder().maxIncomingBytes(37_500).build()).named("maxIncoming37500"),
                base.withConfig(config.toBuilder().linkMbps(0).build()).named("unpaced"),
                base.withConfig(config.toBuilder().congestionControl(io.homa.engine.CongestionControl.RTT).build())
                        .named("rttCongestion"),
                base.withConfig(config.toBuilder().congestionControl(io.homa.engine.CongestionControl.RTT).build())
                        .withFabric(fabric.withRxDelayNs(20_000)).named("rttCongestionRx20us")));
        if (only == null || only.isBlank()) {
            return all;
        }
        List<String> names = Arrays.asList(only.split(","));
        return all.stream().filter(setup -> names.contains(setup.name())).toList();
    }

    @Test
    void shouldCompleteEveryRpcOfTheLoadedRack() {
        LoadedRackExperiment.Result result = new LoadedRackExperiment(
                LoadedRackExperiment.Setup.rack(30_000_000_000L).named("test")).run();
        System.out.print(result.table());
        System.out.println(LoadedRackExperiment.Result.summaryHeader());
        System.out.println(result.summaryLine());

        assertThat(result.measured()).as("RPCs measured").isGreaterThan(4_000);
        assertThat(result.failures()).as(result.table()).isEmpty();
        assertThat(result.failed()).as(result.table()).isZero();
        assertThat(result.unfinished()).as(result.table()).isZero();
    }

    /** The long experiment: enabled by {@code -Dhoma.rack.seconds=N}. */
    @Test
    @EnabledIfSystemProperty(named = "homa.rack.seconds", matches = "\\d+")
    void experiment() {
        LoadedRackExperiment.main(new String[0]);
    }
}
