package io.homa.bench.cpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Reading /proc: parsing and arithmetic on fixed text, then one window of this JVM from the real /proc. */
class CpuSamplerTest {
    /** /proc/<pid>/stat of a process whose name holds spaces and parentheses; utime 1200, stime 300, starttime 5000. */
    private static String processStat(long utime, long stime, long startTime) {
        return "4242 (java (main) x) S 1 4242 4242 0 -1 4194560 9000 0 0 0 " + utime + " " + stime
                + " 0 0 20 0 31 0 " + startTime + " 3000000000 50000 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
    }

    /** /proc/stat with two cores: user nice system idle iowait irq softirq steal guest guest_nice. */
    private static String procStat(long[] core0, long[] core1) {
        return "cpu  1 2 3 4 5 6 7 8 0 0\n"
                + "cpu0 " + join(core0) + " 0 0\n"
                + "cpu1 " + join(core1) + " 0 0\n"
                + "intr 123 4 5\nctxt 999\nbtime 1700000000\nprocesses 100\n";
    }

    private static String join(long[] values) {
        StringBuilder text = new StringBuilder();
        for (long value : values) {
            text.append(text.isEmpty() ? "" : " ").append(value);
        }
        return text.toString();
    }

    @Test
    void shouldReadUserAndSystemTimeAfterTheLastParenthesis() {
        CpuSampler.ProcessTicks ticks = CpuSampler.parseProcessStat(processStat(1_200, 300, 5_000));

        assertThat(ticks.cpuTicks()).isEqualTo(1_500);
        assertThat(ticks.startTicks()).isEqualTo(5_000);
        assertThat(CpuSampler.parseProcessStat("7 (a) b) c) R 1 2 3 4 5 6 7 8 9 10 40 2 0 0 20 0 1 0 77 0 0\n").cpuTicks())
                .isEqualTo(42);
        assertThatThrownBy(() -> CpuSampler.parseProcessStat("7 (short) R 1 2"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldCountIrqSoftirqAndStealAsBusyAndIdleAndIowaitAsNot() {
        Map<Integer, CpuSampler.CoreTicks> cores = CpuSampler.parseCores(
                procStat(new long[] {100, 10, 50, 800, 20, 5, 15, 0}, new long[] {1, 0, 1, 10, 0, 0, 0, 3}));

        assertThat(cores).containsOnlyKeys(0, 1); // not the total line "cpu"
        assertThat(cores.get(0)).isEqualTo(new CpuSampler.CoreTicks(180, 1_000));
        assertThat(cores.get(1)).isEqualTo(new CpuSampler.CoreTicks(5, 15));
    }

    @Test
    void shouldGiveEachProcessItsShareOfOneCoreAndEachCoreItsBusyFraction() {
        List<CpuSampler.Target> targets = List.of(new CpuSampler.Target("client", 4242),
                new CpuSampler.Target("server", 4243), new CpuSampler.Target("agent", 4244),
                new CpuSampler.Target("agent", 4245));
        CpuSampler.Snapshot start = new CpuSampler.Snapshot(1_000_000_000L,
                Map.of(4242L, CpuSampler.parseProcessStat(processStat(1_000, 200, 5_000)),
                        4243L, new CpuSampler.ProcessTicks(50, 6_000),
                        4244L, new CpuSampler.ProcessTicks(10, 7_000),
                        4245L, new CpuSampler.ProcessTicks(10, 8_000)),
                CpuSampler.parseCores(procStat(new long[] {0, 0, 0, 0, 0, 0, 0, 0}, new long[] {0, 0, 0, 0, 0, 0, 0, 0})));
        // 2 s later: the client used 1.5 s of CPU, the server 0.5 s; agent 4244 exited, and 4245's pid is another process's
        CpuSampler.Snapshot end = new CpuSampler.Snapshot(3_000_000_000L,
                Map.of(4242L, CpuSampler.parseProcessStat(processStat(1_100, 250, 5_000)),
                        4243L, new CpuSampler.ProcessTicks(100, 6_000),
                        4245L, new CpuSampler.ProcessTicks(3, 9_000)),
                CpuSampler.parseCores(procStat(new long[] {150, 0, 20, 10, 10, 5, 5, 0}, new long[] {40, 0, 10, 150, 0, 0, 0, 0})));

        CpuSampler.Usage usage = CpuSampler.usage(targets, start, end, 100);

        assertThat(usage.windowSeconds()).isEqualTo(2.0);
        CpuSampler.ProcessUsage client = usage.processes().get(0);
        assertThat(client.missing()).isFalse();
        assertThat(client.cpuSeconds()).isEqualTo(1.5);
        assertThat(client.cpuFraction()).isEqualTo(0.75);
        assertThat(usage.processes().get(1).cpuFraction()).isEqualTo(0.25);
        assertThat(usage.processes().get(2).missing()).as("exited during the window").isTrue();
        assertThat(usage.processes().get(3).missing()).as("its pid reused by another process").isTrue();
        assertThat(usage.cores()).extracting(CpuSampler.CoreUsage::cpu).containsExactly(0, 1);
        assertThat(usage.cores().get(0).busyFraction()).isCloseTo(0.9, within(1e-9)); // 180 of 200
        assertThat(usage.cores().get(1).busyFraction()).isCloseTo(0.25, within(1e-9)); // 50 of 200
        assertThat(usage.cpuBound()).isTrue();

        Map<String, Object> metrics = usage.toMetrics();
        assertThat(metrics).containsEntry("cores", List.of(0.9, 0.25)).containsEntry("cpu_bound", true)
                .containsEntry("window_s", 2.0);
        List<?> processes = (List<?>) metrics.get("processes");
        assertThat(processes.get(0)).isEqualTo(Map.of("role", "client", "pid", 4242L, "cpu_fraction", 0.75, "cpu_s", 1.5));
        assertThat(processes.get(2)).isEqualTo(Map.of("role", "agent", "pid", 4244L, "missing", true));
    }

    @Test
    void shouldNotBeCpuBoundAtEightyPercentOrLess() {
        CpuSampler.Usage usage = new CpuSampler.Usage(1, List.of(),
                List.of(new CpuSampler.CoreUsage(0, 0.80), new CpuSampler.CoreUsage(1, 0.2)));

        assertThat(usage.cpuBound()).isFalse();
    }

    @Test
    void shouldSampleThisProcessFromTheRealProc() {
        assumeThat(Files.exists(Path.of("/proc/self/stat"))).as("a Linux /proc").isTrue();
        long pid = ProcessHandle.current().pid();
        CpuSampler sampler = new CpuSampler(List.of(new CpuSampler.Target("test", pid),
                new CpuSampler.Target("gone", Long.MAX_VALUE)));

        sampler.start();
        long until = System.nanoTime() + 300_000_000L;
        double sink = 0;
        while (System.nanoTime() < until) {
            sink += Math.sqrt(sink + 1); // keep a core busy
        }
        CpuSampler.Usage usage = sampler.stop();

        assertThat(sink).isPositive();
        assertThat(usage).isNotNull().isSameAs(sampler.usage());
        assertThat(usage.windowSeconds()).isGreaterThanOrEqualTo(0.3);
        CpuSampler.ProcessUsage self = usage.processes().get(0);
        assertThat(self.missing()).isFalse();
        assertThat(self.cpuSeconds()).isPositive();
        assertThat(self.cpuFraction()).isPositive();
        assertThat(usage.processes().get(1).missing()).isTrue();
        assertThat(usage.cores()).isNotEmpty()
                .allSatisfy(core -> assertThat(core.busyFraction()).isBetween(0.0, 1.0));
    }
}
