package io.homa.bench.cpu;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * CPU time of a system's client side and server side over one or more measured windows (a
 * scenario's slices, one figure's windows), read with {@link CpuSampler} at each window's start
 * and end, and what it comes to per call or per MiB carried.
 *
 * <p>The client side is the sampled process of role {@code client} (the load generator's JVM), or,
 * in a window whose load came from the testbed's load agents (role {@code agent}), those agents
 * (the load generator only waits then); the server side every process of role {@code server}. When a window could not be read ({@code /proc} missing) or a sampled process was
 * missing at one of its ends, the cost is not {@linkplain #measured() measured} and gives no
 * figures: a sum that lacks a window or a process would understate it.
 */
public final class CpuCost {
    /** Bytes per MiB. */
    public static final double MIB = 1024.0 * 1024.0;
    /** Role of the client-side processes besides {@code client}. */
    static final String AGENT = "agent";
    static final String CLIENT = "client";
    static final String SERVER = "server";

    private final List<CpuSampler.Target> targets;
    private @Nullable CpuSampler sampler;
    private double clientSeconds;
    private double serverSeconds;
    private double windowSeconds;
    private int windows;
    private boolean incomplete;

    /**
     * A cost sampled from {@code targets} at each {@link #start()} and {@link #stop()}; with no
     * targets nothing is read and nothing is {@linkplain #measured() measured}.
     */
    public CpuCost(List<CpuSampler.Target> targets) {
        this.targets = List.copyOf(targets);
    }

    /** The processes sampled. */
    public List<CpuSampler.Target> targets() {
        return targets;
    }

    /** Reads the start of a window (nothing without targets). */
    public void start() {
        if (targets.isEmpty()) {
            return;
        }
        sampler = new CpuSampler(targets);
        sampler.start();
    }

    /**
     * Reads the end of the window {@link #start()} began and adds it; nothing without a started
     * window.
     *
     * @return the window's use (null when none was started or it could not be read)
     */
    public CpuSampler.@Nullable Usage stop() {
        CpuSampler started = sampler;
        sampler = null;
        if (started == null) {
            return null;
        }
        CpuSampler.Usage usage = started.stop();
        add(usage);
        return usage;
    }

    /**
     * Adds one window's use; a null one (not read) or one with a missing process makes the cost
     * incomplete.
     */
    public void add(CpuSampler.@Nullable Usage usage) {
        windows++;
        if (usage == null) {
            incomplete = true;
            return;
        }
        windowSeconds += usage.windowSeconds();
        boolean agents = usage.processes().stream().anyMatch(process -> AGENT.equals(process.role()));
        String clientRole = agents ? AGENT : CLIENT;
        for (CpuSampler.ProcessUsage process : usage.processes()) {
            boolean counted = SERVER.equals(process.role()) || clientRole.equals(process.role());
            if (counted && process.missing()) {
                incomplete = true;
            } else if (SERVER.equals(process.role())) {
                serverSeconds += process.cpuSeconds();
            } else if (clientRole.equals(process.role())) {
                clientSeconds += process.cpuSeconds();
            }
        }
    }

    /** Whether at least one window was read and every window read every process. */
    public boolean measured() {
        return windows > 0 && !incomplete;
    }

    /** CPU seconds of the client side over every window. */
    public double clientSeconds() {
        return clientSeconds;
    }

    /** CPU seconds of the server side over every window. */
    public double serverSeconds() {
        return serverSeconds;
    }

    /** Wall time of every window together, seconds. */
    public double windowSeconds() {
        return windowSeconds;
    }

    /**
     * The report's figures per call: {@code cpu_us_per_call_client}, {@code cpu_us_per_call_server}
     * (µs of CPU per call completed in the windows), and the totals they come from
     * ({@link #totals()}); empty when not {@linkplain #measured() measured}, only the totals when
     * no call completed.
     */
    public Map<String, Object> perCall(long calls) {
        return per("call", calls);
    }

    /**
     * The report's figures per MiB carried: {@code cpu_us_per_mib_client} and
     * {@code cpu_us_per_mib_server} (µs of CPU per 2^20 bytes of {@code bytes}), with the totals;
     * empty when not measured.
     */
    public Map<String, Object> perMib(double bytes) {
        return per("mib", bytes / MIB);
    }

    private Map<String, Object> per(String unit, double units) {
        Map<String, Object> metrics = new LinkedHashMap<>();
        if (!measured()) {
            return metrics;
        }
        if (units > 0) {
            metrics.put("cpu_us_per_" + unit + "_client", microsPer(clientSeconds, units));
            metrics.put("cpu_us_per_" + unit + "_server", microsPer(serverSeconds, units));
        }
        metrics.putAll(totals());
        return metrics;
    }

    /**
     * What the figures per call or MiB come from: {@code cpu_s_client}, {@code cpu_s_server} (CPU
     * seconds) and {@code cpu_window_s} (wall seconds of the windows); empty when not measured.
     */
    public Map<String, Object> totals() {
        Map<String, Object> metrics = new LinkedHashMap<>();
        if (measured()) {
            metrics.put("cpu_s_client", CpuSampler.round3(clientSeconds));
            metrics.put("cpu_s_server", CpuSampler.round3(serverSeconds));
            metrics.put("cpu_window_s", CpuSampler.round3(windowSeconds));
        }
        return metrics;
    }

    /** {@code seconds} of CPU per {@code units}, in µs, to 0.01 µs; NaN for no units. */
    public static double microsPer(double seconds, double units) {
        if (!(units > 0)) {
            return Double.NaN;
        }
        return Math.round(seconds * 1e6 / units * 100) / 100.0;
    }
}
