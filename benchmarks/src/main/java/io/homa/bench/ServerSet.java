package io.homa.bench;

import io.homa.bench.cpu.CpuSampler;
import io.homa.bench.systems.SystemKind;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;

/**
 * The server processes of a run. Server index 0, the server S1-S5, S10 and S11 call (and S6's
 * first), is a process of each system's own, so that its CPU time is that system's alone. The
 * further indices, the servers S6 fans out to (and the ones {@code --s5-all-to-all} adds on the
 * other testbed hosts), are shared: one process per index serves every system, as every server
 * did before. Processes start in parallel.
 */
final class ServerSet implements AutoCloseable {
    /** Starts one server process; {@code name} is unique in the run (its log and {@code {index}}). */
    @FunctionalInterface
    interface Launcher {
        ServerProcess start(List<SystemKind> systems, int index, String name) throws IOException;
    }

    private final Map<SystemKind, ServerProcess> first;
    private final List<ServerProcess> shared;

    private ServerSet(Map<SystemKind, ServerProcess> first, List<ServerProcess> shared) {
        this.first = first;
        this.shared = shared;
    }

    /** The name of a system's own server process: {@code 0-<system>}. */
    static String firstName(SystemKind system) {
        return "0-" + system.id();
    }

    /**
     * Starts every system's first server and {@code count - 1} shared ones (indices 1..count-1).
     *
     * @throws IOException if one did not start; the others are stopped then
     */
    static ServerSet start(List<SystemKind> systems, int count, Launcher launcher) throws IOException {
        Map<SystemKind, CompletableFuture<ServerProcess>> firsts = new LinkedHashMap<>();
        List<CompletableFuture<ServerProcess>> others = new ArrayList<>();
        for (SystemKind system : systems) {
            firsts.put(system, launch(launcher, List.of(system), 0, firstName(system)));
        }
        for (int index = 1; index < count; index++) {
            others.add(launch(launcher, systems, index, Integer.toString(index)));
        }
        List<CompletableFuture<ServerProcess>> all = new ArrayList<>(firsts.values());
        all.addAll(others);
        IOException failure = null;
        for (CompletableFuture<ServerProcess> future : all) {
            try {
                future.join();
            } catch (CompletionException e) {
                if (failure == null) {
                    failure = e.getCause() instanceof UncheckedIOException io ? io.getCause()
                            : new IOException(String.valueOf(e.getCause()), e.getCause());
                }
            }
        }
        if (failure != null) {
            for (CompletableFuture<ServerProcess> future : all) {
                if (!future.isCompletedExceptionally()) {
                    future.join().close();
                }
            }
            throw failure;
        }
        Map<SystemKind, ServerProcess> first = new EnumMap<>(SystemKind.class);
        firsts.forEach((system, future) -> first.put(system, future.join()));
        return new ServerSet(first, new ArrayList<>(others.stream().map(CompletableFuture::join).toList()));
    }

    private static CompletableFuture<ServerProcess> launch(Launcher launcher, List<SystemKind> systems, int index,
            String name) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return launcher.start(systems, index, name);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, THREAD_PER_START);
    }

    /** Each start on a thread of its own (the common pool of a process pinned to one core has one thread). */
    private static final Executor THREAD_PER_START = task -> {
        Thread thread = new Thread(task, "server-start");
        thread.setDaemon(true);
        thread.start();
    };

    /** Adds a shared server at the next index (all-to-all's servers on the hosts that had none). */
    void addShared(ServerProcess server) {
        shared.add(server);
    }

    /** Server indices: 1 (the first) + the shared ones. */
    int count() {
        return 1 + shared.size();
    }

    /** The process serving {@code system} at {@code index}. */
    ServerProcess process(SystemKind system, int index) {
        if (index == 0) {
            ServerProcess own = first.get(system);
            if (own == null) {
                throw new IllegalArgumentException("no server process of " + system.id());
            }
            return own;
        }
        return shared.get(index - 1);
    }

    /** The address of {@code system}'s server at {@code index}. */
    InetSocketAddress address(SystemKind system, int index) {
        return process(system, index).address(system);
    }

    /** The addresses of {@code system}'s servers at indices 0..count-1. */
    List<InetSocketAddress> addresses(SystemKind system, int count) {
        List<InetSocketAddress> addresses = new ArrayList<>();
        for (int index = 0; index < count; index++) {
            addresses.add(address(system, index));
        }
        return addresses;
    }

    /** {@code system}'s servers at indices 0..count-1 as CPU sampling targets of role {@code server}. */
    List<CpuSampler.Target> cpuTargets(SystemKind system, int count) {
        List<CpuSampler.Target> targets = new ArrayList<>();
        for (int index = 0; index < count; index++) {
            targets.add(new CpuSampler.Target("server", process(system, index).pid()));
        }
        return targets;
    }

    /** Every process: the systems' own first servers, then the shared ones by index. */
    List<ServerProcess> all() {
        List<ServerProcess> all = new ArrayList<>(first.values());
        all.addAll(shared);
        return all;
    }

    /** Each process's pid by its name ({@code 0-homa}, ..., {@code 1}, {@code 2}). */
    Map<String, Long> pids() {
        Map<String, Long> pids = new LinkedHashMap<>();
        first.forEach((system, process) -> pids.put(firstName(system), process.pid()));
        for (int i = 0; i < shared.size(); i++) {
            pids.put(Integer.toString(i + 1), shared.get(i).pid());
        }
        return pids;
    }

    /** Stops every process. */
    @Override
    public void close() {
        all().forEach(ServerProcess::close);
    }
}
