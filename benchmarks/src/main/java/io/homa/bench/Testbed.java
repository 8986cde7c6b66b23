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
    private static final Pattern QDISC = Pattern.compile("^qdisc bfifo 1([0-7]): (dev \\S+ )?parent");
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

    /**
     * Packets of each protocol the hosts' kernels sent and received, summed over every host of the
     * rack (each host's network namespace keeps its own {@code /proc/net/snmp}). S9 counts the
     * rack's losses per protocol with them while Homa and TCP share one FIFO class: the rack loses
     * a packet only in a queue (a host's NIC queue or a switch port), and
     * <ul>
     *   <li>UDP (Homa: no other UDP crosses the rack during S9): {@code OutDatagrams} counts a
     *       datagram its host's NIC queue accepted (one its queue dropped counts as
     *       {@code SndbufErrors} instead: the qdisc's drop reaches the socket as ENOBUFS), and a
     *       receiver counts every datagram that reached it as {@code InDatagrams} (read by the
     *       application), {@code InErrors} (its socket's buffer was full) or {@code NoPorts} (no
     *       socket). So UDP sent minus received is the switch's drops of Homa packets. One datagram
     *       is one packet only without UDP segmentation offload, which S9 turns off.</li>
     *   <li>TCP: {@code OutSegs + RetransSegs} (OutSegs leaves retransmissions out) minus
     *       {@code InSegs}: the drops of the
     *       switch and of the hosts' NIC queues, where TCP small queues keep a socket to a couple of
     *       packets.</li>
     * </ul>
     * Exact for packets sent and received between two readings; packets in flight at a reading
     * (queued in a NIC or a switch port, or in a socket's buffer not yet read) move the figure by
     * at most their number. Null if a host's counters cannot be read.
     */
    public @org.jspecify.annotations.Nullable ProtocolCounts protocolCounts() {
        // Every host's counters as close to one instant as can be: a reading that took each host in
        // turn through ip netns exec (tens of ms each on a busy core) counted the packets sent
        // between two hosts' readings as lost (1,000 of them at 10,000 packets/s). So first one
        // process of each host's namespace, then every /proc/<pid>/net/snmp read back to back.
        Map<Integer, Long> pids = new LinkedHashMap<>();
        for (int host = 1; host <= hosts; host++) {
            String listed = run(List.of("ip", "netns", "pids", prefix + "-h" + host));
            String pid = listed == null ? null
                    : listed.lines().map(String::trim).filter(line -> line.matches("\\d+")).findFirst().orElse(null);
            if (pid != null) {
                pids.put(host, Long.parseLong(pid));
            }
        }
        Map<Integer, String> snmp = new LinkedHashMap<>();
        pids.forEach((host, pid) -> {
            try {
                snmp.put(host, Files.readString(Path.of("/proc", Long.toString(pid), "net", "snmp")));
            } catch (IOException | RuntimeException e) {
                // the process ended: read through ip netns exec below
            }
        });
        ProtocolCounts total = new ProtocolCounts(0, 0, 0, 0);
        for (int host = 1; host <= hosts; host++) {
            String output = snmp.containsKey(host) ? snmp.get(host)
                    : run(List.of("ip", "netns", "exec", prefix + "-h" + host, "cat", "/proc/net/snmp"));
            ProtocolCounts counts = output == null ? null : ProtocolCounts.parseSnmp(output);
            if (counts == null) {
                return null;
            }
            total = total.plus(counts);
        }
        return total;
    }

    /**
     * Packets of the rack's two protocols, summed over hosts (see {@link #protocolCounts()}).
     *
     * @param udpSent UDP datagrams the senders' NIC queues accepted ({@code Udp: OutDatagrams})
     * @param udpReceived UDP datagrams that reached a host ({@code InDatagrams + InErrors + NoPorts})
     * @param tcpSent TCP segments sent, retransmissions included ({@code Tcp: OutSegs + RetransSegs})
     * @param tcpReceived TCP segments received ({@code Tcp: InSegs})
     */
    public record ProtocolCounts(long udpSent, long udpReceived, long tcpSent, long tcpReceived) {
        ProtocolCounts plus(ProtocolCounts other) {
            return new ProtocolCounts(udpSent + other.udpSent, udpReceived + other.udpReceived, tcpSent + other.tcpSent,
                    tcpReceived + other.tcpReceived);
        }

        /** What was counted from {@code earlier} to this reading. */
        public ProtocolCounts minus(ProtocolCounts earlier) {
            return new ProtocolCounts(udpSent - earlier.udpSent, udpReceived - earlier.udpReceived,
                    tcpSent - earlier.tcpSent, tcpReceived - earlier.tcpReceived);
        }

        /** UDP datagrams sent and not received: the switch's drops of Homa packets. */
        public long udpLost() {
            return udpSent - udpReceived;
        }

        /** TCP segments sent and not received: the switch's and the NIC queues' drops. */
        public long tcpLost() {
            return tcpSent - tcpReceived;
        }

        /**
         * The counters of one host's {@code /proc/net/snmp} (a header line and a value line for
         * each of {@code Udp:} and {@code Tcp:}), or null if either is missing.
         */
        public static @org.jspecify.annotations.Nullable ProtocolCounts parseSnmp(String snmp) {
            Map<String, Long> udp = snmpSection(snmp, "Udp:");
            Map<String, Long> tcp = snmpSection(snmp, "Tcp:");
            if (udp == null || tcp == null) {
                return null;
            }
            Long out = udp.get("OutDatagrams");
            Long in = udp.get("InDatagrams");
            Long errors = udp.get("InErrors");
            Long noPorts = udp.get("NoPorts");
            Long outSegs = tcp.get("OutSegs");
            Long retransSegs = tcp.get("RetransSegs");
            Long inSegs = tcp.get("InSegs");
            if (out == null || in == null || errors == null || noPorts == null || outSegs == null || retransSegs == null
                    || inSegs == null) {
                return null;
            }
            // OutSegs leaves out retransmissions (RFC 1213's "excluding those containing only
            // retransmitted octets"): without RetransSegs a dropped segment, sent again, nets to 0.
            return new ProtocolCounts(out, in + errors + noPorts, outSegs + retransSegs, inSegs);
        }

        private static @org.jspecify.annotations.Nullable Map<String, Long> snmpSection(String snmp, String name) {
            String[] lines = snmp.split("\n");
            for (int i = 0; i + 1 < lines.length; i++) {
                String[] names = lines[i].trim().split("\\s+");
                String[] values = lines[i + 1].trim().split("\\s+");
                if (names[0].equals(name) && values[0].equals(name) && names.length == values.length
                        && names.length > 1 && !names[1].matches("-?\\d+")) {
                    Map<String, Long> section = new LinkedHashMap<>();
                    try {
                        for (int k = 1; k < names.length; k++) {
                            section.put(names[k], Long.parseLong(values[k]));
                        }
                    } catch (NumberFormatException e) {
                        return null;
                    }
                    return section;
                }
            }
            return null;
        }
    }

    /**
     * Packets the switch's ports dropped, every priority class, summed over every port ({@code tc
     * -s qdisc}, each class's bfifo); -1 if {@code tc} cannot be read. S9's check of its per-protocol
     * counts: Homa's and TCP's losses add up to about this.
     */
    public long switchDrops() {
        // One tc for every port of the switch (the bridge has no qdisc of its own): one instant.
        String output = run(List.of("ip", "netns", "exec", prefix + "-sw", "tc", "-s", "qdisc", "show"));
        if (output == null) {
            return -1;
        }
        Map<Integer, long[]> totals = new LinkedHashMap<>();
        addQdiscCounters(output, totals);
        return totals.values().stream().mapToLong(counts -> counts[1]).sum();
    }

    private static final Pattern BACKLOG = Pattern.compile("backlog \\S+ (\\d+)p");

    /**
     * Packets queued in the rack at this instant: every class's bfifo of every switch port and of
     * every host's NIC ({@code tc -s qdisc}, the {@code backlog} lines), or -1 if {@code tc} cannot be
     * read. At S9's start reading they bound what its per-protocol counts can miss: a packet queued
     * then was counted as sent before the window and received in it.
     */
    public long queuedPackets() {
        List<List<String>> commands = new ArrayList<>();
        commands.add(List.of("ip", "netns", "exec", prefix + "-sw", "tc", "-s", "qdisc", "show"));
        for (int host = 1; host <= hosts; host++) {
            commands.add(List.of("ip", "netns", "exec", prefix + "-h" + host, "tc", "-s", "qdisc", "show", "dev", "eth0"));
        }
        long queued = 0;
        for (List<String> command : commands) {
            String output = run(command);
            if (output == null) {
                return -1;
            }
            queued += backlogPackets(output);
        }
        return queued;
    }

    /** The packets queued in the bfifo of each class in the output of {@code tc -s qdisc show}. */
    static long backlogPackets(String tcOutput) {
        long queued = 0;
        boolean inBfifo = false;
        for (String line : tcOutput.split("\n")) {
            if (line.startsWith("qdisc ")) {
                inBfifo = QDISC.matcher(line.trim()).find();
                continue;
            }
            Matcher backlog = BACKLOG.matcher(line);
            if (inBfifo && backlog.find()) {
                queued += Long.parseLong(backlog.group(1));
                inBfifo = false;
            }
        }
        return queued;
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
