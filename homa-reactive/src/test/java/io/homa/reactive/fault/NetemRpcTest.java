package io.homa.reactive.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The lossy RPC run of {@link LossyRelayRpcTest} across a kernel-emulated lossy link instead of
 * the relay: a veth pair with Linux netem on both ends. Needs root and a kernel with
 * {@code sch_netem}; otherwise the test is skipped, its reason naming what failed (e.g. the
 * {@code tc} error). On a kernel without netem it never runs.
 *
 * <p>What the available branch does: creates a network namespace and a veth pair
 * ({@value #HOST_IP} in this namespace, {@value #NAMESPACE_IP} inside the new one), puts
 * {@value #NETEM} on both ends, starts {@link NetemEchoServer} as a second JVM inside the namespace
 * ({@code ip netns exec}, same class path), and runs the clients in this JVM against
 * {@value #NAMESPACE_IP}, so that every packet crosses the veth in both directions. The server
 * JVM reports its execution counts when told to stop. Everything is deleted afterwards (deleting
 * the namespace deletes the veth pair).
 */
class NetemRpcTest {
    private static final String NETEM = "netem delay 1ms 1ms loss 5% duplicate 1% reorder 1%";
    private static final String HOST_IP = "10.213.77.1";
    private static final String NAMESPACE_IP = "10.213.77.2";
    private static final int RPCS = 3_000;
    private static final long WORKLOAD_SEED = 20_240_601L;
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    /** Exit status and merged output of a command. */
    private record Outcome(int exitCode, String output) {
        boolean ok() {
            return exitCode == 0;
        }
    }

    private static Outcome exec(String... command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return new Outcome(-1, "timed out after 10 s");
            }
            return new Outcome(process.exitValue(),
                    new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim());
        } catch (IOException e) {
            return new Outcome(-1, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Outcome(-1, "interrupted");
        }
    }

    /** Null when a fresh network namespace accepts a netem qdisc, else why not. */
    static @Nullable String netemUnavailableReason() {
        if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
            return "not Linux (" + System.getProperty("os.name") + ")";
        }
        String namespace = "homa-probe-" + ProcessHandle.current().pid();
        Outcome add = exec("ip", "netns", "add", namespace);
        if (!add.ok()) {
            return "cannot create a network namespace (needs root and iproute2): `ip netns add` exited "
                    + add.exitCode() + ": " + add.output();
        }
        try {
            Outcome netem = exec("ip", "netns", "exec", namespace, "tc", "qdisc", "add", "dev", "lo", "root",
                    "netem", "delay", "1ms");
            if (!netem.ok()) {
                return "`tc qdisc add dev lo root netem delay 1ms` in a fresh network namespace exited "
                        + netem.exitCode() + ": " + netem.output() + " (kernel without sch_netem?)";
            }
            return null;
        } finally {
            exec("ip", "netns", "del", namespace);
        }
    }

    @Test
    @Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void shouldCompleteEveryRpcExactlyOnceAcrossANetemLink() throws Exception {
        String unavailable = netemUnavailableReason();
        assumeTrue(unavailable == null, () -> "netem is unavailable, test skipped: " + unavailable);

        long id = ProcessHandle.current().pid() % 100_000;
        String namespace = "homa-netem-" + id;
        String hostVeth = "hnh" + id;
        String namespaceVeth = "hnn" + id;
        Process server = null;
        List<HomaTransport> clients = new ArrayList<>();
        try {
            for (String command : List.of(
                    "ip netns add " + namespace,
                    "ip link add " + hostVeth + " type veth peer name " + namespaceVeth,
                    "ip link set " + namespaceVeth + " netns " + namespace,
                    "ip addr add " + HOST_IP + "/30 dev " + hostVeth,
                    "ip link set " + hostVeth + " up",
                    "ip netns exec " + namespace + " ip addr add " + NAMESPACE_IP + "/30 dev " + namespaceVeth,
                    "ip netns exec " + namespace + " ip link set " + namespaceVeth + " up",
                    "ip netns exec " + namespace + " ip link set lo up",
                    "tc qdisc add dev " + hostVeth + " root " + NETEM,
                    "ip netns exec " + namespace + " tc qdisc add dev " + namespaceVeth + " root " + NETEM)) {
                Outcome outcome = exec(command.split(" "));
                assertThat(outcome.ok()).as("`%s`: %s", command, outcome.output()).isTrue();
            }
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            server = new ProcessBuilder("ip", "netns", "exec", namespace, java, "-Xmx1g",
                    "-cp", System.getProperty("java.class.path"), NetemEchoServer.class.getName(), NAMESPACE_IP)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            BufferedReader serverOut = new BufferedReader(
                    new InputStreamReader(server.getInputStream(), StandardCharsets.US_ASCII));
            int port = Integer.parseInt(awaitLine(serverOut, "PORT ").substring("PORT ".length()).trim());

            HomaTransportConfig config = HomaTransportConfig.builder().bindAddress(HOST_IP).build();
            clients.add(HomaTransport.bindNow(config, null, TIMEOUT));
            clients.add(HomaTransport.bindNow(config, null, TIMEOUT));
            InetSocketAddress serverAddress = new InetSocketAddress(NAMESPACE_IP, port);
            Writer serverIn = new OutputStreamWriter(server.getOutputStream(), StandardCharsets.US_ASCII);
            // The server JVM has just started: its first requests take longer than the 100 ms of
            // silence after which a client gives up. Warm it up, then reset its counts.
            int[] small = new int[200];
            Arrays.fill(small, 100);
            EchoWorkload.Result warmUp = EchoWorkload.run(clients, serverAddress, small, 1, 4,
                    Duration.ofSeconds(20), Duration.ofSeconds(50));
            assertThat(warmUp.correct()).as("warm-up RPCs that succeeded").isPositive();
            serverIn.write("RESET\n");
            serverIn.flush();
            awaitLine(serverOut, "RESET");

            int[] lengths = EchoWorkload.sampleLengths("w3", RPCS, WORKLOAD_SEED, 1_000_000);
            EchoWorkload.Result result = EchoWorkload.run(clients, serverAddress, lengths, WORKLOAD_SEED, 32,
                    Duration.ofSeconds(20), Duration.ofSeconds(50));

            serverIn.write("STOP\n");
            serverIn.flush();
            String[] executions = awaitLine(serverOut, "EXECUTIONS ").split(" ");
            System.out.printf("netem (%s): %,d RPCs, %d correct, %d failed %s; RTT p50=%,d us p99=%,d us;"
                            + " server executions=%s distinct=%s repeated=%s%nclients %s%n",
                    NETEM, RPCS, result.correct(), result.failures().size(), result.failures().stream().limit(3).toList(),
                    result.rttPercentileMicros(0.5), result.rttPercentileMicros(0.99),
                    executions[1], executions[2], executions[3],
                    clients.stream().map(c -> c.counters().block(TIMEOUT)).toList());

            assertThat(result.failures()).isEmpty();
            assertThat(result.correct()).isEqualTo(RPCS);
            assertThat(Long.parseLong(executions[1])).as("executions").isEqualTo(RPCS);
            assertThat(Long.parseLong(executions[2])).as("distinct RPCs executed").isEqualTo(RPCS);
            assertThat(Long.parseLong(executions[3])).as("RPCs executed more than once").isZero();
        } finally {
            clients.forEach(c -> c.disposeNow(TIMEOUT));
            if (server != null) {
                server.destroy();
                if (!server.waitFor(5, TimeUnit.SECONDS)) {
                    server.destroyForcibly();
                }
            }
            exec("ip", "netns", "del", namespace);
        }
    }

    /** Reads lines until one starts with {@code prefix}; fails at the end of the stream. */
    private static String awaitLine(BufferedReader reader, String prefix) throws IOException {
        for (String line = reader.readLine(); line != null; line = reader.readLine()) {
            if (line.startsWith(prefix)) {
                return line;
            }
        }
        throw new IllegalStateException("the server JVM ended without printing " + prefix.trim());
    }
}
