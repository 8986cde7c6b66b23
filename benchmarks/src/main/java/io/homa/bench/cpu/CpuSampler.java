package io.homa.bench.cpu;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * CPU use over a measured window, read from Linux's {@code /proc}: {@link #start()} at the window's
 * start, {@link #stop()} at its end. It gives each sampled process's CPU time (user + system, every
 * thread, from {@code /proc/<pid>/stat}) and each core's utilisation (from the {@code cpuN} lines of
 * {@code /proc/stat}). Where {@code /proc/stat} cannot be read (not Linux) {@link #stop()} gives
 * null. A process that exited during the window (or whose pid was reused) is reported as missing.
 *
 * <p>Units: a process's CPU use as CPU-seconds and as a fraction of one core over the window's wall
 * time (above 1 for a process busy on several cores at once); a core's as the fraction of its time
 * it was busy (user, nice, system, irq, softirq, steal) rather than idle or waiting for I/O.
 */
public final class CpuSampler {
    /** A window is CPU-bound when some core was busy more than this fraction of it. */
    public static final double CPU_BOUND_CORE_FRACTION = 0.80;
    /** Clock ticks per second of {@code /proc}'s CPU times when {@code getconf CLK_TCK} cannot tell. */
    static final long DEFAULT_TICKS_PER_SECOND = 100;

    private static final Path PROC = Path.of("/proc");

    /**
     * A process to sample.
     *
     * @param role what it is in the run, e.g. {@code client}, {@code server} or {@code agent}
     * @param pid its process id
     */
    public record Target(String role, long pid) {}

    /**
     * A process's CPU use over the window.
     *
     * @param missing true when the process was not there at the start or the end of the window
     *     (exited, or its pid belongs to another process by then); the figures are then 0
     * @param cpuSeconds CPU time, user + system, seconds
     * @param cpuFraction {@code cpuSeconds} over the window's wall time: a fraction of one core
     */
    public record ProcessUsage(String role, long pid, boolean missing, double cpuSeconds, double cpuFraction) {}

    /**
     * A core's utilisation over the window.
     *
     * @param cpu the core's number ({@code cpuN} in {@code /proc/stat})
     * @param busyFraction its busy time over its total time, 0..1
     */
    public record CoreUsage(int cpu, double busyFraction) {}

    /**
     * CPU use over one window.
     *
     * @param windowSeconds wall time between the two readings, seconds
     * @param processes the sampled processes, in the order given
     * @param cores every core, by number
     */
    public record Usage(double windowSeconds, List<ProcessUsage> processes, List<CoreUsage> cores) {
        /** True when a core was busy more than {@link #CPU_BOUND_CORE_FRACTION} of the window. */
        public boolean cpuBound() {
            return cores.stream().anyMatch(core -> core.busyFraction() > CPU_BOUND_CORE_FRACTION);
        }

        /**
         * The report's form: {@code window_s}, {@code processes} (each {@code role}, {@code pid},
         * {@code cpu_fraction}, {@code cpu_s}, or {@code missing: true}), {@code cores} (busy
         * fractions, core 0 first) and {@code cpu_bound}.
         */
        public Map<String, Object> toMetrics() {
            Map<String, Object> metrics = new LinkedHashMap<>();
            metrics.put("window_s", round3(windowSeconds));
            List<Map<String, Object>> processList = new ArrayList<>();
            for (ProcessUsage process : processes) {
                Map<String, Object> entry = new LinkedHashMap<>();
                entry.put("role", process.role());
                entry.put("pid", process.pid());
                if (process.missing()) {
                    entry.put("missing", true);
                } else {
                    entry.put("cpu_fraction", round3(process.cpuFraction()));
                    entry.put("cpu_s", round3(process.cpuSeconds()));
                }
                processList.add(entry);
            }
            metrics.put("processes", processList);
            metrics.put("cores", cores.stream().map(core -> round3(core.busyFraction())).toList());
            metrics.put("cpu_bound", cpuBound());
            return metrics;
        }
    }

    /** CPU time of a process at one instant, clock ticks; its start time tells a reused pid. */
    record ProcessTicks(long cpuTicks, long startTicks) {}

    /** A core's time at one instant, clock ticks: busy, and busy + idle + I/O wait. */
    record CoreTicks(long busy, long total) {}

    /**
     * The readings of one instant.
     *
     * @param nanoTime {@link System#nanoTime()} when read
     * @param processes by pid; a process that could not be read is absent
     * @param cores by core number
     */
    record Snapshot(long nanoTime, Map<Long, ProcessTicks> processes, Map<Integer, CoreTicks> cores) {}

    private final List<Target> targets;
    private @Nullable Snapshot start;
    private @Nullable Usage usage;

    /** A sampler of {@code targets} (and of every core); reads nothing until {@link #start()}. */
    public CpuSampler(List<Target> targets) {
        this.targets = List.copyOf(targets);
    }

    /** Reads the start of the window. */
    public void start() {
        start = read(targets);
        usage = null;
    }

    /**
     * Reads the end of the window.
     *
     * @return the use over the window, also kept for {@link #usage()}; null if {@link #start()} was
     *     not called or {@code /proc} cannot be read
     */
    public @Nullable Usage stop() {
        Snapshot end = read(targets);
        usage = start == null || end == null ? null : usage(targets, start, end, TicksPerSecond.VALUE);
        return usage;
    }

    /** What the last {@link #stop()} gave; null before it. */
    public @Nullable Usage usage() {
        return usage;
    }

    private static @Nullable Snapshot read(List<Target> targets) {
        long now = System.nanoTime();
        Map<Integer, CoreTicks> cores;
        try {
            cores = parseCores(Files.readString(PROC.resolve("stat"), StandardCharsets.US_ASCII));
        } catch (IOException | IllegalArgumentException e) {
            return null;
        }
        Map<Long, ProcessTicks> processes = new LinkedHashMap<>();
        for (Target target : targets) {
            try {
                String stat = Files.readString(PROC.resolve(Long.toString(target.pid())).resolve("stat"),
                        StandardCharsets.UTF_8);
                processes.put(target.pid(), parseProcessStat(stat));
            } catch (IOException | IllegalArgumentException e) {
                // exited (or unreadable): missing at this instant
            }
        }
        return new Snapshot(now, processes, cores);
    }

    /**
     * Parses {@code /proc/<pid>/stat}: utime + stime (fields 14 and 15) and starttime (field 22),
     * counted after the last {@code ')'}, since the command name (field 2) may hold spaces and
     * parentheses.
     *
     * @throws IllegalArgumentException if the line does not have those fields
     */
    static ProcessTicks parseProcessStat(String stat) {
        int close = stat.lastIndexOf(')');
        if (close < 0) {
            throw new IllegalArgumentException("no command name in /proc/<pid>/stat: " + stat);
        }
        String[] fields = stat.substring(close + 1).trim().split("\\s+");
        // fields[0] is field 3 (state): field n is fields[n - 3]
        if (fields.length < 20) {
            throw new IllegalArgumentException("too few fields in /proc/<pid>/stat: " + stat);
        }
        try {
            return new ProcessTicks(Long.parseLong(fields[11]) + Long.parseLong(fields[12]), Long.parseLong(fields[19]));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a number in /proc/<pid>/stat: " + stat, e);
        }
    }

    /**
     * Parses the per-core lines of {@code /proc/stat}, {@code cpuN user nice system idle iowait irq
     * softirq steal ...} (the total line {@code cpu} is skipped): busy = user + nice + system + irq +
     * softirq + steal; total = busy + idle + iowait. Guest time is already in user and nice.
     */
    static Map<Integer, CoreTicks> parseCores(String procStat) {
        Map<Integer, CoreTicks> cores = new LinkedHashMap<>();
        for (String line : procStat.split("\n")) {
            if (!line.startsWith("cpu") || line.length() < 4 || !Character.isDigit(line.charAt(3))) {
                continue;
            }
            String[] f = line.trim().split("\\s+");
            long[] v = new long[8];
            for (int i = 0; i < v.length && i + 1 < f.length; i++) {
                v[i] = Long.parseLong(f[i + 1]);
            }
            long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
            cores.put(Integer.parseInt(f[0].substring(3)), new CoreTicks(busy, busy + v[3] + v[4]));
        }
        return cores;
    }

    /** The use of {@code targets} and of every core between two readings. */
    static Usage usage(List<Target> targets, Snapshot start, Snapshot end, long ticksPerSecond) {
        double windowSeconds = (end.nanoTime() - start.nanoTime()) / 1e9;
        List<ProcessUsage> processes = new ArrayList<>();
        for (Target target : targets) {
            ProcessTicks before = start.processes().get(target.pid());
            ProcessTicks after = end.processes().get(target.pid());
            if (before == null || after == null || before.startTicks() != after.startTicks()) {
                processes.add(new ProcessUsage(target.role(), target.pid(), true, 0, 0));
                continue;
            }
            double cpuSeconds = (after.cpuTicks() - before.cpuTicks()) / (double) ticksPerSecond;
            processes.add(new ProcessUsage(target.role(), target.pid(), false, cpuSeconds,
                    windowSeconds > 0 ? cpuSeconds / windowSeconds : 0));
        }
        List<CoreUsage> cores = new ArrayList<>();
        end.cores().forEach((cpu, after) -> {
            CoreTicks before = start.cores().get(cpu);
            if (before != null) {
                long total = after.total() - before.total();
                cores.add(new CoreUsage(cpu, total > 0 ? (after.busy() - before.busy()) / (double) total : 0));
            }
        });
        return new Usage(windowSeconds, processes, cores);
    }

    static double round3(double value) {
        return Math.round(value * 1000) / 1000.0;
    }

    /** {@code getconf CLK_TCK}, read once; {@link #DEFAULT_TICKS_PER_SECOND} if it cannot be run. */
    private static final class TicksPerSecond {
        static final long VALUE = read();

        private static long read() {
            try {
                Process getconf = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
                String output = new String(getconf.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
                if (getconf.waitFor(5, TimeUnit.SECONDS) && getconf.exitValue() == 0) {
                    long ticks = Long.parseLong(output);
                    return ticks > 0 ? ticks : DEFAULT_TICKS_PER_SECOND;
                }
                getconf.destroyForcibly();
            } catch (IOException | NumberFormatException e) {
                // the default below
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return DEFAULT_TICKS_PER_SECOND;
        }
    }
}
