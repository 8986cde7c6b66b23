package io.homa.demo;

import io.homa.workloads.Workload;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.Set;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.ConstructorBinding;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.convert.DurationUnit;

/**
 * The demo's command-line arguments, bound by Spring Boot from top-level property names (so
 * {@code --duration=5s} on the command line, or {@code DURATION=5s} in the environment). Bare
 * numbers in durations are seconds. Validated on binding: a bad value stops start-up with a
 * message naming the argument and its allowed values, and the process exits with status 1.
 *
 * @param mode {@code local} (server and client in this JVM on loopback, the default),
 *     {@code server} (echo server on {@code --port} until killed), {@code client} (workload
 *     against {@code --peer}), {@code hol} (head-of-line test on loopback: short RPCs alone,
 *     then behind long ones; see {@link io.homa.demo.workload.HeadOfLineBenchmark}),
 *     {@code shard} (one key-value shard, {@code --shard}, until killed) or {@code watch} (the
 *     aggregator in front of remote shards, called for a key of every shard every
 *     {@value io.homa.demo.aggregator.ShardWatch#INTERVAL_MS} ms for {@code --duration}, with one line a
 *     second per shard; see {@link io.homa.demo.aggregator.ShardWatch})
 * @param duration how long the loaded run issues RPCs, 1 ms..24 h, default 10 s
 * @param concurrency RPCs kept outstanding, 1..{@value #MAX_CONCURRENCY}, default 16 (not used
 *     by {@code hol})
 * @param workload message-length distribution, {@code w1}..{@code w5}, default {@code w3} (not
 *     used by {@code hol})
 * @param port server mode: UDP port of the echo server, 0..65535 (0 picks a free one), default 4000
 * @param peer client mode (required there, rejected otherwise): the echo server, {@code host:port}
 * @param seed seeds request lengths and contents, default 1
 * @param warmup how long to run the workload unmeasured before measuring, so that the JIT has
 *     compiled the paths, 0..1 h, default 1 s
 * @param probeSamples sequential RPCs per probe length when measuring the unloaded RTT (the
 *     median is kept), 1..10,000, default 20
 * @param rpcTimeout an RPC not answered within this is abandoned and counted as failed,
 *     1 ms..1 h, default 10 s
 * @param kvShards key-value shards the aggregator fans out to, 1..{@value #MAX_KV_SHARDS},
 *     default 3; in {@code local} and {@code server} mode each shard without a
 *     {@code homa.client.peers.kv-<i>} entry runs in this JVM (see {@link io.homa.demo.kv.KvShards})
 * @param shard shard mode (required there, rejected otherwise): which shard this JVM is,
 *     0..{@value #MAX_KV_SHARDS}-1; it serves {@code kv} as peer {@code kv-<shard>}, and with the
 *     {@code eureka} profile registers under that name
 */
@ConfigurationProperties
public record DemoProperties(
        @DefaultValue("local") Mode mode,
        @DefaultValue("10s") @DurationUnit(ChronoUnit.SECONDS) Duration duration,
        @DefaultValue("16") int concurrency,
        @DefaultValue("w3") String workload,
        @DefaultValue("4000") int port,
        String peer,
        @DefaultValue("1") long seed,
        @DefaultValue("1s") @DurationUnit(ChronoUnit.SECONDS) Duration warmup,
        @DefaultValue("20") int probeSamples,
        @DefaultValue("10s") @DurationUnit(ChronoUnit.SECONDS) Duration rpcTimeout,
        @DefaultValue("3") int kvShards,
        Integer shard) {

    /** Upper bound of {@code --concurrency}: each outstanding RPC may hold a 1 MB request and response. */
    public static final int MAX_CONCURRENCY = 1024;

    /** Upper bound of {@code --kv-shards}: each in-process shard is a small Spring application with its own endpoint. */
    public static final int MAX_KV_SHARDS = 16;

    /** Argument names this class binds (in their canonical, dashed form). */
    public static final Set<String> ARGUMENT_NAMES = Set.of(
            "mode", "duration", "concurrency", "workload", "port", "peer", "seed", "warmup", "probe-samples",
            "rpc-timeout", "kv-shards", "shard");

    /** Where the demo runs. */
    public enum Mode {
        /** Echo server and workload client in one JVM, on loopback. */
        LOCAL,
        /** Echo server only, until killed. */
        SERVER,
        /** Workload client only, against {@code --peer}. */
        CLIENT,
        /**
         * Head-of-line test in this JVM, on loopback: 100-byte echo RPCs alone, then while 1 MiB
         * echo RPCs stream between the same client and server.
         */
        HOL,
        /**
         * One key-value shard ({@code --shard}): this application's endpoint serves {@code kv}
         * until killed; with the {@code eureka} profile it registers as {@code kv-<shard>} with
         * its Homa port in the registration's metadata.
         */
        SHARD,
        /**
         * The aggregator in this JVM in front of remote shards (peers {@code kv-<i>}, or found
         * through Spring Cloud discovery with the {@code eureka} profile), called for a key of
         * every shard in a loop for {@code --duration}, printing each shard's answers.
         */
        WATCH
    }

    /** The arguments as bound (see the class comment); validates them. */
    @ConstructorBinding
    public DemoProperties {
        if (mode == null) {
            throw new IllegalArgumentException("--mode must be one of local, server, client, hol, shard, watch");
        }
        checkDuration("--duration", duration, Duration.ofMillis(1), Duration.ofHours(24));
        if (concurrency < 1 || concurrency > MAX_CONCURRENCY) {
            throw new IllegalArgumentException(
                    "--concurrency must be between 1 and " + MAX_CONCURRENCY + ", was " + concurrency);
        }
        try {
            workload = Workload.checkName(workload);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--" + e.getMessage()); // the option as the user wrote it
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("--port must be between 0 and 65535, was " + port);
        }
        if (peer != null && peer.isBlank()) {
            peer = null;
        }
        if (mode == Mode.CLIENT) {
            if (peer == null) {
                throw new IllegalArgumentException("--peer=host:port is required with --mode=client");
            }
            parsePeer(peer);
        } else if (peer != null) {
            throw new IllegalArgumentException("--peer is only used with --mode=client, but --mode was "
                    + mode.name().toLowerCase(Locale.ROOT));
        }
        checkDuration("--warmup", warmup, Duration.ZERO, Duration.ofHours(1));
        if (probeSamples < 1 || probeSamples > 10_000) {
            throw new IllegalArgumentException("--probe-samples must be between 1 and 10000, was " + probeSamples);
        }
        checkDuration("--rpc-timeout", rpcTimeout, Duration.ofMillis(1), Duration.ofHours(1));
        if (kvShards < 1 || kvShards > MAX_KV_SHARDS) {
            throw new IllegalArgumentException(
                    "--kv-shards must be between 1 and " + MAX_KV_SHARDS + ", was " + kvShards);
        }
        if (mode == Mode.SHARD) {
            if (shard == null) {
                throw new IllegalArgumentException("--shard=0.." + (MAX_KV_SHARDS - 1) + " is required with --mode=shard");
            }
            if (shard < 0 || shard >= MAX_KV_SHARDS) {
                throw new IllegalArgumentException(
                        "--shard must be between 0 and " + (MAX_KV_SHARDS - 1) + ", was " + shard);
            }
        } else if (shard != null) {
            throw new IllegalArgumentException("--shard is only used with --mode=shard, but --mode was "
                    + mode.name().toLowerCase(Locale.ROOT));
        }
    }

    /** Without {@code --shard} (every mode but {@code shard}). */
    public DemoProperties(Mode mode, Duration duration, int concurrency, String workload, int port, String peer,
            long seed, Duration warmup, int probeSamples, Duration rpcTimeout, int kvShards) {
        this(mode, duration, concurrency, workload, port, peer, seed, warmup, probeSamples, rpcTimeout, kvShards,
                null);
    }

    /** The defaults (local mode, w3, 16 outstanding RPCs for 10 s, 3 key-value shards). */
    public static DemoProperties defaults() {
        return new DemoProperties(Mode.LOCAL, Duration.ofSeconds(10), 16, "w3", 4000, null, 1,
                Duration.ofSeconds(1), 20, Duration.ofSeconds(10), 3);
    }

    /** {@code --peer} as an unresolved address (resolve it with {@code new InetSocketAddress(host, port)}). */
    public InetSocketAddress peerAddress() {
        return peer == null ? null : parsePeer(peer);
    }

    private static void checkDuration(String name, Duration value, Duration min, Duration max) {
        if (value == null || value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new IllegalArgumentException(name + " must be between " + min + " and " + max + ", was " + value);
        }
    }

    /**
     * Parses {@code host:port} (IPv6 as {@code [addr]:port}).
     *
     * @throws IllegalArgumentException naming {@code --peer} when the text is not of that form
     */
    static InetSocketAddress parsePeer(String peer) {
        String text = peer.trim();
        int colon = text.lastIndexOf(':');
        String host = colon > 0 ? text.substring(0, colon) : "";
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port = -1;
        if (colon > 0) {
            try {
                port = Integer.parseInt(text.substring(colon + 1));
            } catch (NumberFormatException e) {
                port = -1;
            }
        }
        if (host.isEmpty() || port < 1 || port > 65535) {
            throw new IllegalArgumentException("--peer must be host:port with port 1..65535, was '" + peer + "'");
        }
        return InetSocketAddress.createUnresolved(host, port);
    }

    /**
     * Rejects command-line options that look like a misspelt argument: names without a dot
     * (property paths like {@code --homa.server.port} pass) that are neither an argument of this
     * class nor Spring Boot's {@code --debug} / {@code --trace}. Spring itself ignores unknown
     * options, which would silently run with defaults.
     *
     * @param optionNames names of the {@code --name[=value]} options
     * @throws IllegalArgumentException naming the unknown option and listing the known ones
     */
    public static void checkOptionNames(Iterable<String> optionNames) {
        for (String name : optionNames) {
            if (name.contains(".") || name.equals("debug") || name.equals("trace")) {
                continue;
            }
            String canonical = name.replace("_", "").replace("-", "").toLowerCase(Locale.ROOT);
            boolean known = ARGUMENT_NAMES.stream().anyMatch(argument -> argument.replace("-", "").equals(canonical));
            if (!known) {
                throw new IllegalArgumentException("unknown option --" + name + "; the options are --"
                        + String.join(", --", ARGUMENT_NAMES.stream().sorted().toList())
                        + " (and Spring Boot properties such as --homa.server.port)");
            }
        }
    }
}
