package io.homa.bench.cpu;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Lowers the JIT compiler threads of the processes of a measured window to nice 19 while it runs,
 * and gives them back nice 0 after it.
 *
 * <p>Why: on the rack, several JVMs share each core. A C2 compilation still running a minute into
 * a run (a method recompiled after the window's traffic took a branch the warm-up had not) held
 * its core for 3-5 ms at a time, and an event loop woken meanwhile waited behind it; that wait set
 * the short calls' p99. On a host of its own a server's compiler would have a core to spare. The
 * compiler threads keep normal priority during warm-up, when they must finish (at nice 19 from the
 * start they starved behind the warm-up's load, and the window ran half-compiled code).
 *
 * <p>Linux only, and renicing another user's threads needs root: where {@code /proc} or
 * {@code renice} is missing or refuses, nothing changes and {@link #lower} returns 0.
 */
public final class JitPriority {
    /** Nice value of the compiler threads during a window. */
    static final int WINDOW_NICE = 19;

    private JitPriority() {}

    /**
     * Renices the compiler threads ({@code C1 CompilerThre*}, {@code C2 CompilerThre*}) of {@code pids}.
     *
     * @return how many threads now have nice {@code WINDOW_NICE}
     */
    public static int lower(List<Long> pids) {
        return renice(pids, WINDOW_NICE);
    }

    /** Gives the compiler threads of {@code pids} nice 0 again; processes gone meanwhile are skipped. */
    public static void restore(List<Long> pids) {
        renice(pids, 0);
    }

    private static int renice(List<Long> pids, int nice) {
        List<String> threads = new ArrayList<>();
        for (long pid : pids) {
            threads.addAll(compilerThreads(Path.of("/proc", Long.toString(pid), "task")));
        }
        if (threads.isEmpty()) {
            return 0;
        }
        List<String> command = new ArrayList<>(List.of("renice", "-n", Integer.toString(nice), "-p"));
        command.addAll(threads);
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return 0;
            }
            return process.exitValue() == 0 ? threads.size() : 0;
        } catch (IOException e) {
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        }
    }

    /** The thread ids under {@code taskDir} whose name marks a HotSpot compiler thread. */
    static List<String> compilerThreads(Path taskDir) {
        List<String> out = new ArrayList<>();
        try (Stream<Path> tasks = Files.list(taskDir)) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    String name = Files.readString(task.resolve("comm")).strip();
                    if (name.startsWith("C1 CompilerThre") || name.startsWith("C2 CompilerThre")) {
                        out.add(task.getFileName().toString());
                    }
                } catch (IOException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException e) {
            // not Linux, or the process ended
        }
        return out;
    }
}
