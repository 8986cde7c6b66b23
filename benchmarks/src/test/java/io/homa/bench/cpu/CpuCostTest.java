package io.homa.bench.cpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** CPU per call and per MiB from the windows' samples: which process counts where, and the arithmetic. */
class CpuCostTest {
    private static CpuSampler.ProcessUsage process(String role, long pid, double seconds) {
        return new CpuSampler.ProcessUsage(role, pid, false, seconds, seconds / 2);
    }

    private static CpuSampler.Usage window(double seconds, CpuSampler.ProcessUsage... processes) {
        return new CpuSampler.Usage(seconds, List.of(processes), List.of(new CpuSampler.CoreUsage(0, 0.5)));
    }

    @Test
    void shouldAddTheWindowsAndDivideByTheCallsInThem() {
        CpuCost cost = new CpuCost(List.of());
        cost.add(window(2.0, process("client", 1, 0.8), process("server", 2, 0.5)));
        cost.add(window(2.0, process("client", 1, 0.7), process("server", 2, 0.7)));

        Map<String, Object> perCall = cost.perCall(30_000);

        // 1.5 s of client CPU over 30,000 calls: 50 µs each; 1.2 s of server CPU: 40 µs.
        assertThat(perCall).containsEntry("cpu_us_per_call_client", 50.0)
                .containsEntry("cpu_us_per_call_server", 40.0)
                .containsEntry("cpu_s_client", 1.5)
                .containsEntry("cpu_s_server", 1.2)
                .containsEntry("cpu_window_s", 4.0);
        assertThat(cost.windowSeconds()).isEqualTo(4.0);
    }

    @Test
    void shouldCountPerMibOfTheBytesCarried() {
        CpuCost cost = new CpuCost(List.of());
        cost.add(window(1.0, process("client", 1, 0.3), process("server", 2, 0.45)));

        // 600 MiB carried: 0.3 s / 600 = 500 µs per MiB, 0.45 s / 600 = 750 µs.
        Map<String, Object> perMib = cost.perMib(600 * CpuCost.MIB);

        assertThat(perMib).containsEntry("cpu_us_per_mib_client", 500.0).containsEntry("cpu_us_per_mib_server", 750.0)
                .doesNotContainKey("cpu_us_per_call_client");
        assertThat(CpuCost.microsPer(0.001, 3)).isEqualTo(333.33);
        assertThat(CpuCost.microsPer(1, 0)).isNaN();
    }

    @Test
    void shouldSumEveryServerAndCountTheAgentsAsTheClientWhereTheyMadeTheLoad() {
        CpuCost fanOut = new CpuCost(List.of());
        fanOut.add(window(1.0, process("client", 1, 0.1), process("server", 2, 0.2), process("server", 3, 0.3)));
        assertThat(fanOut.perCall(1_000)).containsEntry("cpu_us_per_call_server", 500.0)
                .containsEntry("cpu_us_per_call_client", 100.0);

        CpuCost agents = new CpuCost(List.of());
        agents.add(window(1.0, process("client", 1, 0.05), process("server", 2, 0.4), process("agent", 3, 0.3),
                process("agent", 4, 0.2)));
        // The load generator only waited: the agents are the client side.
        assertThat(agents.perCall(1_000)).containsEntry("cpu_us_per_call_client", 500.0)
                .containsEntry("cpu_us_per_call_server", 400.0);
    }

    @Test
    void shouldGiveNoFiguresForAWindowNotReadOrAProcessMissing() {
        CpuCost unread = new CpuCost(List.of());
        unread.add(window(1.0, process("client", 1, 0.5), process("server", 2, 0.5)));
        unread.add(null);
        assertThat(unread.measured()).isFalse();
        assertThat(unread.perCall(100)).isEmpty();

        CpuCost exited = new CpuCost(List.of());
        exited.add(window(1.0, process("client", 1, 0.5), new CpuSampler.ProcessUsage("server", 2, true, 0, 0)));
        assertThat(exited.perMib(CpuCost.MIB)).isEmpty();

        CpuCost none = new CpuCost(List.of());
        assertThat(none.measured()).as("no window").isFalse();
        none.start();
        assertThat(none.stop()).as("nothing to sample").isNull();
        assertThat(none.perCall(10)).isEmpty();

        CpuCost noCalls = new CpuCost(List.of());
        noCalls.add(window(1.0, process("client", 1, 0.5), process("server", 2, 0.5)));
        assertThat(noCalls.perCall(0)).as("only the totals").containsOnlyKeys("cpu_s_client", "cpu_s_server",
                "cpu_window_s");
    }

    @Test
    void shouldSampleThisProcessOverAWindow() {
        assumeThat(Files.exists(Path.of("/proc/self/stat"))).as("a Linux /proc").isTrue();
        long self = ProcessHandle.current().pid();
        CpuCost cost = new CpuCost(List.of(new CpuSampler.Target("client", self), new CpuSampler.Target("server", self)));

        cost.start();
        long end = System.nanoTime() + 300_000_000L;
        long spins = 0;
        while (System.nanoTime() < end) {
            spins++; // busy: about 0.3 s of CPU
        }
        assertThat(cost.stop()).isNotNull();

        assertThat(spins).isPositive();
        assertThat(cost.measured()).isTrue();
        assertThat(cost.windowSeconds()).isBetween(0.29, 2.0);
        assertThat(cost.clientSeconds()).isBetween(0.1, 2.0).isEqualTo(cost.serverSeconds());
    }
}
