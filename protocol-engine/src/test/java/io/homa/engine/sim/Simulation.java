package io.homa.engine.sim;

import io.homa.engine.EngineConfig;
import io.homa.engine.HomaEngine;
import io.homa.engine.HomaEvent;
import io.homa.engine.SendOptions;
import io.homa.engine.SharedIdentity;
import io.homa.engine.internal.wire.GrantHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import io.homa.engine.internal.wire.ResendHeader;
import io.homa.engine.trace.Timetrace;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Random;

/**
 * One seeded run: several client and server engines on a {@link SimNetwork}, a workload of RPCs
 * with mixed sizes, and faults chosen by the seed (loss, duplication, reordering, delays of up to
 * seconds, partitions that heal, a server crash and restart with empty state). Time is virtual:
 * the run jumps to the next delivery, timer or scheduled action. Invariants are checked at every
 * step and at the end; a violation throws {@link InvariantViolation} naming the seed.
 *
 * <p>Invariants (issue "Loss recovery and at-most-once"): (a) no handler runs twice for one
 * (client, rpcid) in one server incarnation; (b) without crashes or partitions, every RPC
 * completes exactly once with the right bytes; (c) every RPC ends, by response or failure,
 * none hangs; (d) after quiescence and acks, servers hold no RPC state and no inbound buffers;
 * (e) no RESEND asks for bytes its sender had not granted (unscheduled bytes count as granted).
 */
final class Simulation {

    /** A broken rule found by the run. */
    static final class InvariantViolation extends AssertionError {
        InvariantViolation(long seed, String invariant, String detail) {
            super("seed " + seed + ": invariant (" + invariant + ") violated: " + detail
                    + "\n  replay: ./mvnw -pl protocol-engine test -Dtest=SimulationTest#replay -Dhoma.sim.seed=" + seed);
        }
    }

    /** What a run did, for reporting. */
    record Result(long seed, String faults, int rpcs, int completed, int failed, int executions,
            int reexecutionsAfterCrash, long packets, long resends, long virtualNs) {}

    private static final long MAX_VIRTUAL_NS = 600_000_000_000L; // 10 virtual minutes

    private final long seed;
    private final Random random;
    private final EngineConfig config;
    private final SimNetwork network;
    private final List<Node> clients = new ArrayList<>();
    private final List<Node> servers = new ArrayList<>();
    private final Map<InetSocketAddress, Node> nodes = new HashMap<>();
    private final PriorityQueue<Action> actions = new PriorityQueue<>();
    private long actionSequence;
    private long nowNs = 1_000_000_000L;

    private final boolean crashes;
    private final boolean partitions;
    private long partitionEndNs;
    private final int unscheduledBytes;

    /** Per client endpoint: its RPCs by rpcid. */
    private final Map<InetSocketAddress, Map<Long, Call>> calls = new HashMap<>();
    /** Executions per (server incarnation, client, rpcid). */
    private final Map<String, Integer> executions = new HashMap<>();
    /** (client, rpcid) executed by any earlier incarnation of a crashed server. */
    private final Map<String, Integer> executedBeforeCrash = new HashMap<>();
    private int reexecutionsAfterCrash;
    private int executionCount;
    /** Highest offset each receiver authorised per message: key "receiver|client|rpcid|dir". */
    private final Map<String, Integer> authorised = new HashMap<>();

    private int rpcCount;
    private int completed;
    private int failed;

    /**
     * One endpoint; servers get new engines (an incarnation) when they restart. A server may run
     * several engines behind its one address, as an endpoint on several event loops does (sockets
     * sharing a port with SO_REUSEPORT): each datagram goes to the engine its sender's address
     * hashes to, and the engines share one {@link SharedIdentity} (epoch, token key).
     */
    private final class Node {
        final InetSocketAddress address;
        final boolean server;
        final int engineCount;
        HomaEngine[] engines;
        int incarnation;

        Node(InetSocketAddress address, boolean server, int engineCount) {
            this.address = address;
            this.server = server;
            this.engineCount = engineCount;
            this.engines = newEngines();
        }

        HomaEngine[] newEngines() {
            HomaEngine[] made = new HomaEngine[engineCount];
            long first = firstRpcId();
            SharedIdentity shared = SharedIdentity.of(first, null);
            for (int i = 0; i < engineCount; i++) {
                made[i] = new HomaEngine(config, address.getPort(), i == 0 ? first : firstRpcId(), null,
                        Timetrace.off(), shared);
            }
            return made;
        }

        private long firstRpcId() {
            return 2 + 2L * random.nextInt(1_000_000) * 1_000_000;
        }

        /** The client side's engine (clients run one). */
        HomaEngine engine() {
            return engines[0];
        }

        /** The engine a datagram from {@code from} reaches: a fixed hash of the sender, as the kernel's. */
        HomaEngine engineFor(InetSocketAddress from) {
            return engines[Math.floorMod(from.hashCode() * 0x9E3779B9, engineCount)];
        }
    }

    /** A client's record of one RPC. */
    private static final class Call {
        final InetSocketAddress server;
        final long responseSeed;
        final int responseLength;
        boolean ended;

        Call(InetSocketAddress server, long responseSeed, int responseLength) {
            this.server = server;
            this.responseSeed = responseSeed;
            this.responseLength = responseLength;
        }
    }

    /** Something scheduled at a virtual time. */
    private record Action(long atNs, long sequence, Runnable run) implements Comparable<Action> {
        @Override
        public int compareTo(Action other) {
            int byTime = Long.compare(atNs, other.atNs);
            return byTime != 0 ? byTime : Long.compare(sequence, other.sequence);
        }
    }

    Simulation(long seed, int rpcsPerClient) {
        this(seed, rpcsPerClient, io.homa.engine.CongestionControl.OFF);
    }

    /** A run whose engines use {@code congestionControl} (the seed draws the same run either way). */
    Simulation(long seed, int rpcsPerClient, io.homa.engine.CongestionControl congestionControl) {
        this.seed = seed;
        this.random = new Random(seed);
        int kind = random.nextInt(10);
        this.crashes = kind == 0;
        this.partitions = kind == 1 || kind == 2;
        SimNetwork.Profile profile = kind == 3 ? SimNetwork.Profile.clean() : SimNetwork.Profile.random(random);
        this.network = new SimNetwork(random, profile);
        EngineConfig.Builder builder = EngineConfig.builder()
                .unscheduledBytes(random.nextBoolean() ? 60_000 : 5_000 + random.nextInt(20_000))
                .maxMessageBytes(1024 * 1024)
                .congestionControl(congestionControl)
                .rttProbeIntervalNs(100_000);
        this.config = builder.build();
        this.unscheduledBytes = roundUpToPackets(config.unscheduledBytes());
        int clientCount = 1 + random.nextInt(3);
        int serverCount = 1 + random.nextInt(3);
        // A third of the runs put several engines behind each server's address.
        int enginesPerServer = random.nextInt(3) == 0 ? 2 + random.nextInt(3) : 1;
        for (int i = 0; i < serverCount; i++) {
            addNode(new InetSocketAddress("10.0.1." + (i + 1), 4000), true, enginesPerServer);
        }
        for (int i = 0; i < clientCount; i++) {
            addNode(new InetSocketAddress("10.0.2." + (i + 1), 5000 + i), false, 1);
        }
        for (Node client : clients) {
            calls.put(client.address, new HashMap<>());
            long atNs = nowNs;
            for (int i = 0; i < rpcsPerClient; i++) {
                atNs += (long) (random.nextDouble() * 200_000);
                Node server = servers.get(random.nextInt(servers.size()));
                int requestLength = messageLength();
                int responseLength = messageLength();
                long responseSeed = random.nextLong();
                at(atNs, () -> startRpc(client, server, requestLength, responseLength, responseSeed));
            }
        }
        if (crashes) {
            Node victim = servers.get(random.nextInt(servers.size()));
            at(nowNs + (long) (random.nextDouble() * 20_000_000), () -> crash(victim));
        }
        if (partitions) {
            Node cutOff = random.nextBoolean() ? servers.get(random.nextInt(servers.size()))
                    : clients.get(random.nextInt(clients.size()));
            long startNs = nowNs + (long) (random.nextDouble() * 10_000_000);
            long lengthNs = random.nextBoolean() ? 1_000_000 + random.nextInt(50_000_000)
                    : 100_000_000L + (long) (random.nextDouble() * 2_000_000_000L);
            partitionEndNs = startNs + lengthNs;
            at(startNs, () -> network.partitioned = java.util.Set.of(cutOff.address));
            at(startNs + lengthNs, () -> network.partitioned = java.util.Set.of());
        }
    }

    private int roundUpToPackets(int bytes) {
        int payload = config.maxDataPayloadBytes();
        return (bytes + payload - 1) / payload * payload;
    }

    /** Mostly short, sometimes a few packets, rarely long (with scheduled bytes). */
    private int messageLength() {
        int pick = random.nextInt(100);
        if (pick < 70) {
            return 16 + random.nextInt(1_000);
        }
        if (pick < 95) {
            return 1_000 + random.nextInt(20_000);
        }
        return 20_000 + random.nextInt(300_000);
    }

    private void addNode(InetSocketAddress address, boolean server, int engineCount) {
        Node node = new Node(address, server, engineCount);
        nodes.put(address, node);
        (server ? servers : clients).add(node);
    }

    private void at(long atNs, Runnable run) {
        actions.add(new Action(atNs, actionSequence++, run));
    }

    /** Runs to quiescence and checks every invariant. */
    Result run() {
        while (true) {
            long next = Math.min(network.nextDeliveryNs(), actions.isEmpty() ? Long.MAX_VALUE : actions.peek().atNs());
            for (Node node : nodes.values()) {
                for (HomaEngine engine : node.engines) {
                    next = Math.min(next, engine.nextTimeoutNs());
                }
            }
            if (next == Long.MAX_VALUE) {
                break;
            }
            if (next - 1_000_000_000L > MAX_VIRTUAL_NS) {
                throw violation("c", "still busy after " + MAX_VIRTUAL_NS / 1_000_000_000L + " virtual seconds: "
                        + describeOpen());
            }
            nowNs = Math.max(nowNs, next);
            step();
        }
        checkQuiescent();
        long packets = 0;
        long resends = 0;
        for (Node node : nodes.values()) {
            for (HomaEngine engine : node.engines) {
                packets += engine.counters().packetsSent(PacketType.DATA);
                resends += engine.counters().resendsSent();
            }
        }
        return new Result(seed, faults(), rpcCount, completed, failed, executionCount, reexecutionsAfterCrash,
                network.sent, resends, nowNs - 1_000_000_000L);
    }

    private void step() {
        Action action;
        while ((action = actions.peek()) != null && action.atNs() <= nowNs) {
            actions.poll().run().run();
        }
        SimNetwork.Delivery delivery;
        while ((delivery = network.pollDue(nowNs)) != null) {
            Node to = nodes.get(delivery.to());
            if (to != null) {
                to.engineFor(delivery.from()).onPacket(nowNs, delivery.from(), ByteBuffer.wrap(delivery.bytes()));
            }
        }
        for (Node node : nodes.values()) {
            for (HomaEngine engine : node.engines) {
                engine.onTimeout(nowNs);
            }
        }
        for (Node node : nodes.values()) {
            drain(node);
        }
    }

    /** Hands the node's events to the application and its packets to the network. */
    private void drain(Node node) {
        for (HomaEngine engine : node.engines) {
            drain(node, engine);
        }
    }

    private void drain(Node node, HomaEngine engine) {
        HomaEvent event;
        while ((event = engine.pollEvent()) != null) {
            if (event instanceof HomaEvent.RequestReceived request) {
                onRequest(node, engine, request);
            } else if (event instanceof HomaEvent.ResponseReceived response) {
                onResponse(node, response);
            } else if (event instanceof HomaEvent.RpcFailed rpcFailed) {
                onFailed(node, rpcFailed);
            }
        }
        while (engine.pollTransmit(nowNs, (peer, packet, priority) -> {
            byte[] bytes = new byte[packet.remaining()];
            packet.get(packet.position(), bytes);
            checkResend(node.address, peer, bytes);
            network.send(nowNs, node.address, peer, bytes);
        }, 64) > 0) {
            // until empty
        }
    }

    private void startRpc(Node client, Node server, int requestLength, int responseLength, long responseSeed) {
        byte[] request = requestBytes(requestLength, responseLength, responseSeed);
        long rpcId = client.engine().sendRequest(nowNs, server.address, SendOptions.of(request));
        calls.get(client.address).put(rpcId, new Call(server.address, responseSeed, responseLength));
        rpcCount++;
        drain(client);
    }

    /** A request says how to build its response: 8 bytes of seed, 4 of length, then filler. */
    private static byte[] requestBytes(int length, int responseLength, long responseSeed) {
        byte[] request = new byte[Math.max(12, length)];
        ByteBuffer.wrap(request).putLong(responseSeed).putInt(responseLength);
        for (int i = 12; i < request.length; i++) {
            request[i] = (byte) (i * 31 + length);
        }
        return request;
    }

    static byte[] responseBytes(long responseSeed, int length) {
        byte[] response = new byte[length];
        new Random(responseSeed).nextBytes(response);
        return response;
    }

    private void onRequest(Node server, HomaEvent.RequestReceived request) {
        onRequest(server, server.engine(), request);
    }

    /** {@code engine}: the server's engine that received the request, which must send its response. */
    private void onRequest(Node server, HomaEngine engine, HomaEvent.RequestReceived request) {
        String key = request.client() + "|" + request.rpcId();
        String incarnationKey = server.address + "#" + server.incarnation + "|" + key;
        int count = executions.merge(incarnationKey, 1, Integer::sum);
        executionCount++;
        if (count > 1) {
            throw violation("a", "handler ran " + count + " times for client " + request.client() + " rpcid "
                    + request.rpcId() + " on " + server.address + " (incarnation " + server.incarnation + ")");
        }
        if (executedBeforeCrash.containsKey(server.address + "|" + key)) {
            reexecutionsAfterCrash++;
        }
        ByteBuffer header = ByteBuffer.wrap(request.message());
        long responseSeed = header.getLong();
        int responseLength = header.getInt();
        byte[] response = responseBytes(responseSeed, responseLength);
        int incarnation = server.incarnation;
        // Most handlers answer at once; some run for up to seconds (the client hears BUSY meanwhile).
        long delayNs = random.nextInt(50) == 0 ? (long) (random.nextDouble() * 2_000_000_000L)
                : (long) (random.nextDouble() * 20_000);
        at(nowNs + delayNs, () -> {
            if (server.incarnation == incarnation) {
                engine.sendResponse(nowNs, request.client(), request.rpcId(), SendOptions.of(response));
                drain(server, engine);
            }
        });
    }

    private void onResponse(Node client, HomaEvent.ResponseReceived response) {
        Call call = calls.get(client.address).get(response.rpcId());
        if (call == null) {
            throw violation("b", "response for unknown rpcid " + response.rpcId() + " at " + client.address);
        }
        if (call.ended) {
            throw violation("b", "rpcid " + response.rpcId() + " at " + client.address + " completed twice");
        }
        call.ended = true;
        completed++;
        byte[] expected = responseBytes(call.responseSeed, call.responseLength);
        if (!java.util.Arrays.equals(expected, response.message())) {
            throw violation("b", "wrong response bytes for rpcid " + response.rpcId() + " at " + client.address);
        }
    }

    private void onFailed(Node client, HomaEvent.RpcFailed rpcFailed) {
        Call call = calls.get(client.address).get(rpcFailed.rpcId());
        if (call == null || call.ended) {
            throw violation("b", "failure for an RPC that had ended or never started: " + rpcFailed);
        }
        call.ended = true;
        failed++;
        if (!crashes && !partitions) {
            throw violation("b", "RPC failed without a crash or partition: " + rpcFailed + " " + network);
        }
    }

    private void crash(Node server) {
        // Remember what this incarnation executed, to tell re-executions after the restart apart.
        for (String key : executions.keySet()) {
            String prefix = server.address + "#" + server.incarnation + "|";
            if (key.startsWith(prefix)) {
                executedBeforeCrash.put(server.address + "|" + key.substring(prefix.length()), 1);
            }
        }
        server.incarnation++;
        server.engines = server.newEngines();
    }

    /**
     * (e): a RESEND may only cover bytes its sender authorised: the message's unscheduled bytes,
     * or up to a GRANT it sent before.
     */
    private void checkResend(InetSocketAddress from, InetSocketAddress to, byte[] bytes) {
        int type = Byte.toUnsignedInt(bytes[HomaHeader.TYPE_OFFSET]);
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        if (type == PacketType.GRANT.code()) {
            GrantHeader grant = new GrantHeader();
            grant.wrap(buffer, 0);
            authorised.merge(messageKey(from, to, grant.rpcId()), grant.grantOffset(), Math::max);
        } else if (type == PacketType.RESEND.code()) {
            ResendHeader resend = new ResendHeader();
            resend.wrap(buffer, 0);
            long end = (long) resend.resendOffset() + resend.length();
            int granted = Math.max(unscheduledBytes, authorised.getOrDefault(messageKey(from, to, resend.rpcId()), 0));
            if (end > granted) {
                throw violation("e", from + " sent RESEND [" + resend.resendOffset() + ", " + end + ") to " + to
                        + " for rpcid " + resend.rpcId() + " but had authorised only " + granted + " bytes");
            }
        }
    }

    /** Identifies the message a receiver's GRANT or RESEND is about (its rpcid carries the S bit). */
    private static String messageKey(InetSocketAddress receiver, InetSocketAddress sender, long wireRpcId) {
        return receiver + "|" + sender + "|" + wireRpcId;
    }

    /** (c) and (d): after quiescence every RPC has ended and servers hold nothing. */
    private void checkQuiescent() {
        if (!crashes && !partitions && failed > 0) {
            throw violation("b", failed + " RPCs failed without a crash or partition");
        }
        StringBuilder open = new StringBuilder();
        calls.forEach((client, byId) -> byId.forEach((rpcId, call) -> {
            if (!call.ended) {
                open.append(' ').append(client).append('/').append(rpcId);
            }
        }));
        if (open.length() > 0) {
            throw violation("c", "RPCs never ended:" + open);
        }
        for (Node node : nodes.values()) {
            for (HomaEngine engine : node.engines) {
                checkQuiescent(node, engine);
            }
        }
    }

    private void checkQuiescent(Node node, HomaEngine engine) {
        if (engine.activeServerRpcs() != 0 || engine.activeClientRpcs() != 0 || engine.inboundBufferedBytes() != 0
                || engine.incomingBytes() != 0) {
            throw violation("d", node.address + " holds " + engine.activeServerRpcs() + " server RPCs, "
                    + engine.activeClientRpcs() + " client RPCs, " + engine.inboundBufferedBytes()
                    + " inbound bytes, " + engine.incomingBytes() + " incoming bytes after quiescence");
        }
    }

    private String describeOpen() {
        StringBuilder text = new StringBuilder();
        for (Node node : nodes.values()) {
            for (HomaEngine engine : node.engines) {
                text.append(node.address).append(": client RPCs ").append(engine.activeClientRpcs())
                        .append(", server RPCs ").append(engine.activeServerRpcs()).append("; ");
            }
        }
        return text.append(network).toString();
    }

    private String faults() {
        return (crashes ? "crash " : "") + (partitions ? "partition " : "") + network;
    }

    private InvariantViolation violation(String invariant, String detail) {
        return new InvariantViolation(seed, invariant, detail + " [t=" + (nowNs - 1_000_000_000L) / 1_000 + " µs, "
                + (crashes ? "crash, " : "") + (partitions ? "partition until " + (partitionEndNs - 1_000_000_000L) / 1_000
                + " µs, " : "") + network + "]");
    }
}
