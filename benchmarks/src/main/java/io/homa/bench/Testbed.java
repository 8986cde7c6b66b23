package io.homa.bench;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The emulated rack that {@code benchmarks/testbed.sh up} built ({@code --net=testbed}): host i is
 * namespace {@code <prefix>-h<i>} at {@code <subnet>.<i>}; the load generator runs on host 1 and
 * server process k on host {@code 2 + k mod (hosts - 1)}. Read from the state file the script
 * writes, {@code /run/<prefix>-testbed.env}.
 *
 * @param prefix namespace prefix ({@code HOMA_TESTBED_PREFIX}, default {@code homa})
 * @param subnet the first three octets of every host's address
 * @param hosts number of hosts, 2..8
 * @param mtuBytes every link's MTU
 * @param linkMbps every link's rate, Mbit/s
 * @param portBufferBytes bytes a switch port (and a host's NIC queue) buffers across its 8 classes
 */
public record Testbed(String prefix, String subnet, int hosts, int mtuBytes, int linkMbps, int portBufferBytes) {
    private static final Pattern QDISC = Pattern.compile("^qdisc bfifo 1([0-7]): parent");
    private static final Pattern SENT = Pattern.compile("Sent (\\d+) bytes (\\d+) pkt \\(dropped (\\d+)");

    /**
     * Reads the state of the testbed with namespace prefix {@code prefix}.
     *
     * @throws IllegalArgumentException if it is not up, naming the command that brings it up
     */
    public static Testbed load(String prefix) {
        Path state = Path.of("/run", prefix + "-testbed.env");
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(state)) {
            p.load(in);
        } catch (IOException e) {
            throw new IllegalArgumentException("--net=testbed: the testbed is not up (no " + state
                    + "); run: sudo benchmarks/testbed.sh up");
        }
        try {
            return new Testbed(prefix, p.getProperty("SUBNET", "198.18.0"), Integer.parseInt(p.getProperty("HOSTS")),
                    Integer.parseInt(p.getProperty("MTU")), Integer.parseInt(p.getProperty("LINK_MBPS")),
                    Integer.parseInt(p.getProperty("PORT_BUFFER_BYTES")));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("--net=testbed: " + state + " is damaged (" + e
                    + "); run: sudo benchmarks/testbed.sh up");
        }
    }

    /** The address of host {@code host} (1-based). */
    public String address(int host) {
        return subnet + "." + host;
    }

    /** The command prefix that runs a process on host {@code host}. */
    public List<String> hostPrefix(int host) {
        return List.of("ip", "netns", "exec", prefix + "-h" + host);
    }

    /** The host of server process {@code index} (0-based): hosts 2..H in turn. */
    public int serverHost(int index) {
        return 2 + index % (hosts - 1);
    }

    /**
     * Checks that this process runs on host 1 (its address is local here).
     *
     * @throws IllegalArgumentException if it does not
     */
    public void checkOnHostOne() {
        if (isLocal(address(1))) {
            return;
        }
        throw new IllegalArgumentException("--net=testbed: this process must run on host 1 (" + address(1)
                + " is not a local address); benchmarks/run.sh runs it there with ip netns exec " + prefix + "-h1");
    }

    /** Bytes each of a switch port's 8 priority classes buffers (its bfifo). */
    public int classBufferBytes() {
        return portBufferBytes / 8;
    }

    /** One line for the report: hosts, MTU, link rate, buffers, queues. */
    public String description() {
        return hosts + " hosts (" + prefix + "-h1.." + prefix + "-h" + hosts + ", " + address(1) + ".." + address(hosts)
                + ") on one switch (a bridge), MTU " + mtuBytes + " B, every link " + linkMbps
                + " Mbit/s each way (HTB) with 8 strict-priority classes on the IP TOS bits, each a bfifo of "
                + classBufferBytes() + " B (" + portBufferBytes + " B per port); client on host 1, server process k"
                + " on host 2 + k mod " + (hosts - 1);
    }

    /**
     * Packets sent and dropped by priority class, summed over every switch port and every host's
     * NIC queue ({@code tc -s qdisc}); an empty map if {@code tc} cannot be read.
     *
     * @return per class 0..7: {sent packets, dropped packets}
     */
    public Map<Integer, long[]> classCounters() {
        Map<Integer, long[]> totals = new LinkedHashMap<>();
        for (int priority = 0; priority < 8; priority++) {
            totals.put(priority, new long[2]);
        }
        List<List<String>> commands = new ArrayList<>();
        for (int host = 1; host <= hosts; host++) {
            commands.add(List.of("ip", "netns", "exec", prefix + "-sw", "tc", "-s", "qdisc", "show", "dev", "sw" + host));
            commands.add(List.of("ip", "netns", "exec", prefix + "-h" + host, "tc", "-s", "qdisc", "show", "dev", "eth0"));
        }
        for (List<String> command : commands) {
            String output = run(command);
            if (output == null) {
                return Map.of();
            }
            addQdiscCounters(output, totals);
        }
        return totals;
    }

    /**
     * Adds the packets sent and dropped by each priority class's bfifo (handles 10: to 17:) in the
     * output of {@code tc -s qdisc show dev DEV} to {@code totals}.
     */
    static void addQdiscCounters(String tcOutput, Map<Integer, long[]> totals) {
        int priority = -1;
        for (String line : tcOutput.split("\n")) {
            Matcher qdisc = QDISC.matcher(line.trim());
            if (qdisc.find()) {
                priority = Integer.parseInt(qdisc.group(1));
                continue;
            }
            Matcher sent = SENT.matcher(line);
            if (priority >= 0 && sent.find()) {
                long[] counts = totals.computeIfAbsent(priority, p -> new long[2]);
                counts[0] += Long.parseLong(sent.group(2));
                counts[1] += Long.parseLong(sent.group(3));
                priority = -1;
            }
        }
    }

    private static String run(List<String> command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(10, TimeUnit.SECONDS) || process.exitValue() != 0) {
                return null;
            }
            return output;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** Whether a network interface of this process has {@code address}. */
    static boolean isLocal(String address) {
        try {
            return NetworkInterface.getByInetAddress(InetAddress.getByName(address)) != null;
        } catch (SocketException | java.net.UnknownHostException e) {
            return false;
        }
    }
}
