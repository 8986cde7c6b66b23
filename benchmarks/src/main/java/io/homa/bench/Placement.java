package io.homa.bench;

import java.io.File;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Where the client and server processes run. On a machine with at least two cores and
 * {@code taskset}, servers are pinned to {@code serverCpus} and the client process (all its
 * threads) to {@code clientCpus}, the same for every system; otherwise nothing is pinned.
 *
 * @param pinned whether pinning is in effect
 * @param clientCpus the client's CPU list for {@code taskset -c}, or {@code "any"}
 * @param serverCpus the servers' CPU list, or {@code "any"}
 * @param description one line for the report
 */
public record Placement(boolean pinned, String clientCpus, String serverCpus, String description) {

    /**
     * Decides the placement and, when pinning, pins this process.
     *
     * @param wantPin false to run unpinned ({@code --no-pin})
     * @param cores the machine's core count as seen before pinning
     */
    public static Placement decide(boolean wantPin, int cores) {
        if (!wantPin) {
            return unpinned("unpinned (--no-pin)");
        }
        if (cores < 2) {
            return unpinned("unpinned (only " + cores + " core visible)");
        }
        String taskset = findTaskset();
        if (taskset == null) {
            return unpinned("unpinned (taskset not found on PATH)");
        }
        String client = "0";
        String server = "1";
        long pid = ProcessHandle.current().pid();
        try {
            Process process = new ProcessBuilder(taskset, "-a", "-c", "-p", client, Long.toString(pid))
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            if (!process.waitFor(10, TimeUnit.SECONDS) || process.exitValue() != 0) {
                return unpinned("unpinned (taskset -a -c -p " + client + " " + pid + " failed)");
            }
        } catch (IOException e) {
            return unpinned("unpinned (taskset failed: " + e.getMessage() + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return unpinned("unpinned (interrupted)");
        }
        return new Placement(true, client, server,
                "client process pinned to CPU " + client + ", every server process to CPU " + server
                        + " (taskset; a server starts on both and is pinned once up, sized for one CPU with"
                        + " -XX:ActiveProcessorCount), the same for all systems");
    }

    private static Placement unpinned(String why) {
        return new Placement(false, "any", "any", why);
    }

    private static String findTaskset() {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String dir : path.split(File.pathSeparator)) {
            File candidate = new File(dir, "taskset");
            if (candidate.canExecute()) {
                return candidate.getAbsolutePath();
            }
        }
        return null;
    }

    /** The command prefix that starts another client process (a load agent) with this placement. */
    public List<String> clientPrefix() {
        return pinned ? List.of("taskset", "-c", clientCpus) : List.of();
    }

    /** The command prefix that starts a server process with this placement (empty when unpinned). */
    public List<String> serverPrefix() {
        return pinned ? List.of("taskset", "-c", serverCpus) : List.of();
    }

    /**
     * The command prefix and JVM option that start a server process on the client's and the
     * servers' CPUs together, sized for the servers' ({@code -XX:ActiveProcessorCount}: thread
     * pools, GC and JIT threads, event loops as if pinned already), to be pinned to the servers' CPUs
     * by {@link #pinServerCommand} once it is up. Several JVMs starting at once on one core took
     * three times as long as on two (26 s against 8 s for eight of them), and the client's core is
     * idle then. Empty when unpinned.
     */
    public List<String> serverStartPrefix() {
        if (!pinned) {
            return List.of();
        }
        return List.of("taskset", "-c", clientCpus + "," + serverCpus);
    }

    /** The JVM option of {@link #serverStartPrefix()}: the servers' CPU count; empty when unpinned. */
    public List<String> serverStartJvmOptions() {
        return pinned ? List.of("-XX:ActiveProcessorCount=" + cpuCount(serverCpus)) : List.of();
    }

    /** The command that pins every thread of a started server process to the servers' CPUs; empty when unpinned. */
    public List<String> pinServerCommand(long pid) {
        return pinned ? List.of("taskset", "-a", "-p", "-c", serverCpus, Long.toString(pid)) : List.of();
    }

    /** The CPUs in a {@code taskset -c} list such as {@code 1}, {@code 0-3} or {@code 0,2-3}. */
    static int cpuCount(String list) {
        java.util.BitSet cpus = new java.util.BitSet();
        for (String part : list.split(",")) {
            String[] range = part.trim().split("-");
            int from = Integer.parseInt(range[0].trim());
            int to = range.length > 1 ? Integer.parseInt(range[1].trim()) : from;
            cpus.set(from, to + 1);
        }
        return cpus.cardinality();
    }
}
