package io.homa.bench;

import io.homa.bench.systems.SystemKind;
import io.homa.bench.systems.SystemSettings;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * One spawned server JVM ({@link ServerMain}): same {@code java} and class path as this process,
 * started with a host's prefix ({@code ip netns exec homa-h2} on the testbed) and the placement's
 * ({@code taskset -c 1}), bound to the host's address, its standard error in a log file.
 */
public final class ServerProcess implements AutoCloseable {
    /** JVM options of every server and load-agent process besides the heap's size. */
    private static final List<String> COMMON_JVM_OPTIONS = List.of("-XX:+UseG1GC", "-XX:G1HeapRegionSize=4m",
            "-XX:+AlwaysPreTouch", "-Dio.netty.leakDetection.level=disabled",
            "-Dio.grpc.netty.shaded.io.netty.leakDetection.level=disabled", "-Djava.awt.headless=true",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");

    /**
     * JVM options of every load-agent process: the whole heap from the start; a young generation of
     * half of it (G1 left alone kept a load agent's at 50-70 MB, a young collection every 3-4 s, each
     * pausing the agent 2-28 ms on its shared core: a pause every second among three agents, which
     * set the short calls' p99); and no sampled leak records in any system's Netty (each records a
     * stack trace, one per 128 buffers by default; gRPC's Netty is shaded under its own property
     * prefix).
     */
    public static final List<String> JVM_OPTIONS = concat(List.of("-Xms1g", "-Xmx1g", "-Xmn512m"), COMMON_JVM_OPTIONS);

    /**
     * JVM options of every server process: those of {@link #JVM_OPTIONS} with the same young
     * generation (512 MB: as many young collections as before), but an old generation of 256 MB
     * instead of 512 MB. Each system has a server process of its own now (plus the shared ones of
     * S6), so the run holds up to ten of them; with pre-touched 1 GB heaps that came to 14 GB. A
     * server's heap after a young collection held at most 51 MB in a quick run of S2, S4, S5, S6
     * and S10 with four systems in one process.
     */
    public static final List<String> SERVER_JVM_OPTIONS = concat(List.of("-Xms768m", "-Xmx768m", "-Xmn512m"),
            COMMON_JVM_OPTIONS);

    private static List<String> concat(List<String> first, List<String> second) {
        List<String> all = new ArrayList<>(first);
        all.addAll(second);
        return List.copyOf(all);
    }

    private final Process process;
    private final Map<SystemKind, Integer> ports;
    private final SystemSettings settings;

    private ServerProcess(Process process, Map<SystemKind, Integer> ports, SystemSettings settings) {
        this.process = process;
        this.ports = ports;
        this.settings = settings;
    }

    /**
     * Starts a server process and waits until it printed its ports.
     *
     * @param settings the server's settings, bound to its host's address
     * @param hostPrefix the command that runs a process on the server's host (empty on loopback)
     * @param extraJvmOptions added after {@link #SERVER_JVM_OPTIONS}
     * @throws IOException if the process cannot start, exits, or does not report within 60 s
     */
    public static ServerProcess start(List<SystemKind> systems, SystemSettings settings, List<String> hostPrefix,
            Placement placement, List<String> extraJvmOptions, Path log) throws IOException {
        List<String> command = new ArrayList<>(hostPrefix);
        command.addAll(placement.serverStartPrefix());
        command.add(javaCommand());
        command.addAll(SERVER_JVM_OPTIONS);
        command.addAll(placement.serverStartJvmOptions());
        command.addAll(extraJvmOptions);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(ServerMain.class.getName());
        command.addAll(arguments(systems, settings));
        File logFile = log.toFile();
        Process process = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.appendTo(logFile))
                .start();
        CompletableFuture<String> line = new CompletableFuture<>();
        Thread reader = new Thread(() -> line.complete(portsLine(process)), "server-output");
        reader.setDaemon(true);
        reader.start();
        String ports;
        try {
            ports = line.get(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IOException("interrupted while starting a server process");
        } catch (ExecutionException | TimeoutException e) {
            process.destroyForcibly();
            throw new IOException("server process did not report its ports within 60 s; see " + logFile);
        }
        if (ports == null) {
            process.destroyForcibly();
            throw new IOException("server process exited before reporting its ports; see " + logFile);
        }
        pin(process, placement, logFile);
        Map<SystemKind, Integer> parsed = new EnumMap<>(SystemKind.class);
        for (String pair : ports.substring(ServerMain.PORTS_PREFIX.length()).trim().split(" ")) {
            String[] parts = pair.split("=");
            parsed.put(SystemKind.fromId(parts[0]), Integer.parseInt(parts[1]));
        }
        return new ServerProcess(process, parsed, settings);
    }

    /** The line {@link ServerMain} prints with its ports, or null if its output ends first. */
    private static String portsLine(Process process) {
        try {
            BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            for (String next = reader.readLine(); next != null; next = reader.readLine()) {
                if (next.startsWith(ServerMain.PORTS_PREFIX)) {
                    return next;
                }
            }
            return null;
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * Pins every thread of a process that started on the client's CPUs too to the servers' CPUs
     * ({@link Placement#serverStartPrefix()}); the threads it starts later inherit that.
     *
     * @throws IOException (the process stopped) if taskset fails
     */
    private static void pin(Process process, Placement placement, File logFile) throws IOException {
        List<String> command = placement.pinServerCommand(process.pid());
        if (command.isEmpty()) {
            return;
        }
        try {
            Process taskset = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (taskset.waitFor(10, TimeUnit.SECONDS) && taskset.exitValue() == 0) {
                return;
            }
            taskset.destroyForcibly();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        process.destroyForcibly();
        throw new IOException("could not pin server process " + process.pid() + " (" + String.join(" ", command)
                + "); see " + logFile);
    }

    /** The {@code java} of this process's JDK, for the processes it spawns. */
    static String javaCommand() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** The arguments of {@link ServerMain} that serve {@code systems} with {@code settings}. */
    static List<String> arguments(List<SystemKind> systems, SystemSettings settings) {
        List<String> arguments = new ArrayList<>();
        arguments.add("--systems=" + systems.stream().map(SystemKind::id).collect(Collectors.joining(",")));
        arguments.addAll(settingsArguments(settings));
        return arguments;
    }

    /** The options of {@link SettingsOptions} that give {@code settings}. */
    static List<String> settingsArguments(SystemSettings settings) {
        return List.of(
                "--homa-link-mbps=" + settings.homaLinkMbps(),
                "--homa-mtu-bytes=" + settings.homaMtuBytes(),
                settings.homaSegmentationOffload() ? "--homa-gso" : "--no-homa-gso",
                settings.grpcDirectExecutor() ? "--grpc-direct-executor" : "--no-grpc-direct-executor",
                "--homa-security=" + settings.homaSecurity().propertyValue(),
                "--homa-priority-tos=" + settings.homaPriorityTos().name(),
                "--homa-congestion-control=" + settings.homaCongestionControl().name(),
                settings.homaIncastMarking() ? "--homa-incast-marking" : "--no-homa-incast-marking",
                "--bind-host=" + settings.bindHost(),
                "--homa-incast-buffer-bytes=" + settings.homaIncastBufferBytes(),
                "--homa-busy-poll-ns=" + settings.homaBusyPollNs(),
                "--homa-timetrace-dir=" + settings.homaTimetraceDir(),
                "--homa-loops=" + settings.homaLoops());
    }

    /** The address of a system's server in this process. */
    public InetSocketAddress address(SystemKind system) {
        Integer port = ports.get(system);
        if (port == null) {
            throw new IllegalArgumentException("this server process does not serve " + system.id());
        }
        return settings.bindSocket(port);
    }

    /** The process id. */
    public long pid() {
        return process.pid();
    }

    /** Closes the server's standard input (it stops), then waits up to 10 s before killing it. */
    @Override
    public void close() {
        try {
            process.getOutputStream().close();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroy();
                if (!process.waitFor(5, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            }
        } catch (IOException e) {
            process.destroyForcibly();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
