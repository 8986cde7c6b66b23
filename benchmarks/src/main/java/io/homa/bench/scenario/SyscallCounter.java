package io.homa.bench.scenario;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * Counts the system calls of some processes over a window with {@code perf stat} on the syscall
 * tracepoints (Linux, root or {@code perf_event_paranoid} low enough): all of them, and those
 * that send and receive (sendmmsg, sendmsg, sendto, write, writev; recvmmsg, recvmsg, recvfrom,
 * read, readv). Where perf is missing or refuses, {@link #start} returns null and the report says
 * n/a.
 */
public final class SyscallCounter {
    private static final List<String> SEND = List.of("sendmmsg", "sendmsg", "sendto", "write", "writev");
    private static final List<String> RECEIVE = List.of("recvmmsg", "recvmsg", "recvfrom", "read", "readv");

    /** Counts of one window: all system calls, those that send and those that receive. */
    public record Counts(long total, long sends, long receives) {}

    private final Process perf;

    private SyscallCounter(Process perf) {
        this.perf = perf;
    }

    /**
     * Starts counting the system calls of {@code pids} (every thread they have now).
     *
     * @return the running counter, or null where perf cannot count them
     */
    public static @Nullable SyscallCounter start(List<Long> pids) {
        StringBuilder events = new StringBuilder("raw_syscalls:sys_enter");
        for (String call : SEND) {
            events.append(",syscalls:sys_enter_").append(call);
        }
        for (String call : RECEIVE) {
            events.append(",syscalls:sys_enter_").append(call);
        }
        String pidList = pids.stream().map(String::valueOf).collect(Collectors.joining(","));
        try {
            Process perf = new ProcessBuilder("perf", "stat", "-x,", "-e", events.toString(), "-p", pidList)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            if (perf.waitFor(200, TimeUnit.MILLISECONDS)) {
                return null; // exited at once: not allowed or no such events
            }
            return new SyscallCounter(perf);
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /**
     * Stops counting (SIGINT, after which perf prints its counts).
     *
     * @return the counts, or null if perf printed none
     */
    public @Nullable Counts stop() {
        try {
            new ProcessBuilder("kill", "-INT", Long.toString(perf.pid())).start().waitFor(5, TimeUnit.SECONDS);
            if (!perf.waitFor(10, TimeUnit.SECONDS)) {
                perf.destroyForcibly();
                return null;
            }
            String output = new String(perf.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            return parse(output);
        } catch (IOException e) {
            perf.destroyForcibly();
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            perf.destroyForcibly();
            return null;
        }
    }

    /** Parses {@code perf stat -x,} output: {@code count,unit,event,...} per line. */
    static @Nullable Counts parse(String output) {
        Map<String, Long> counts = new LinkedHashMap<>();
        for (String line : output.split("\n")) {
            String[] fields = line.split(",");
            if (fields.length < 3) {
                continue;
            }
            String event = fields[2].trim();
            String value = fields[0].trim();
            counts.put(event, value.startsWith("<") ? 0L : parseLong(value));
        }
        Long total = counts.get("raw_syscalls:sys_enter");
        if (total == null) {
            return null;
        }
        long sends = SEND.stream().mapToLong(c -> counts.getOrDefault("syscalls:sys_enter_" + c, 0L)).sum();
        long receives = RECEIVE.stream().mapToLong(c -> counts.getOrDefault("syscalls:sys_enter_" + c, 0L)).sum();
        return new Counts(total, sends, receives);
    }

    private static long parseLong(String value) {
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            return 0L;
        }
    }
}
