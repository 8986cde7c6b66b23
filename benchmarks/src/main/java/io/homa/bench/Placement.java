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
                        + " (taskset), the same for all systems");
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
}
