package io.homa.engine.incast;

import io.homa.engine.EngineConfig;
import io.homa.engine.EngineCounters;
import io.homa.engine.HomaEngine;
import io.homa.engine.HomaEvent;
import io.homa.engine.SendOptions;
import io.homa.engine.internal.wire.ControlHeader;
import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.GrantHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.internal.wire.ResendHeader;
import io.homa.engine.wire.PacketType;
import io.homa.workloads.Workload;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The loaded-rack benchmark as a deterministic packet-level simulation with the real engines, on a
 * {@link StarNetwork}: {@code clients} hosts (3) each issue Poisson arrivals of echo RPCs to one
 * server, lengths drawn from a Homa workload (W4: heavy tailed, capped at 1,000,000 B), request
 * and response of the same length, at a rate that loads {@code load} (80 %) of the server's link.
 * The server echoes each request at once. The fabric is the emulated rack's: 100 Mbit/s links,
 * MTU 1,500, 2 µs propagation, 8 strict-priority classes per switch port with 37,500 B each
 * (300,000 B per port), optionally a fixed per-packet software time at each receiving host.
 *
 * <p>Load: a message of {@code L} bytes is {@code n = ceil(L / 1,416)} DATA packets, each costing
 * 122 bytes on the wire besides its data (56 DATA header, 28 IPv4 + UDP, 18 Ethernet header and
 * FCS, 20 preamble and inter-frame gap). With {@code loadCountsHeaders} (the default) the total
 * arrival rate is {@code load x 12.5 MB/s / E[L + 122 n]} (W4: E = 65,432 B, 152.8 RPC/s at
 * 80 %); without it {@code load x 12.5 MB/s / E[L]} (60,175 B, 166.2 RPC/s). GRANTs, RESENDs and
 * ACKs come on top. Each client gets a third of that rate.
 *
 * <p>Measured: RPCs started in {@code [warmup, warmup + measure)} of virtual time; arrivals stop
 * at the end of that window, and the run goes on until every RPC has ended or {@code drainNs}
 * more have passed. Per RPC: its round trip (from {@code sendRequest} to {@code ResponseReceived}
 * on the client's virtual clock) and, per message (request, response), where its time went:
 * <ul>
 *   <li>backlog: its sender had bytes it was allowed to send (unscheduled or granted) not yet sent
 *       (the sender's engine queue, SRPT behind others, its own serialization, the pacer);
 *   <li>grant wait: it had sent every byte granted and waited for a GRANT (the receiver's
 *       scheduler: SRPT, overcommitment, max-incoming, the grant round trip);
 *   <li>tail: every byte had left its sender once and the message was not yet complete (in the
 *       network: switch queues, the receiving host's software time, and loss recovery).
 * </ul>
 * The slowdown of an RPC is its latency over the unloaded latency of its length in the same
 * simulator (measured once per length on an idle fabric, after one warm-up RPC).
 */
final class LoadedRackExperiment {

    /** Inputs of one run. */
    record Setup(
            String name,
            String workload,
            double load,
            boolean loadCountsHeaders,
            int clients,
            long warmupNs,
            long measureNs,
            long drainNs,
            long seed,
            EngineConfig clientConfig,
            EngineConfig serverConfig,
            StarNetwork.Fabric fabric,
            long applicationTimeoutNs) {

        /** The rack: W4 at 80 %, 3 clients, 100 Mbit/s, 8 classes of 37,500 B, engines paced at the link. */
        static Setup rack(long measureNs) {
            EngineConfig config = EngineConfig.builder().linkMbps(LINK_MBPS).build();
            return new Setup("baseline", "w4", 0.8, true, 3, 2_000_000_000L, measureNs, 60_000_000_000L, 1, config,
                    config, new StarNetwork.Fabric(LINK_MBPS, 2_000, 300_000, true, true, 0), 10_000_000_000L);
        }

        Setup named(String value) {
            return new Setup(value, workload, load, loadCountsHeaders, clients, warmupNs, measureNs, drainNs, seed,
                    clientConfig, serverConfig, fabric, applicationTimeoutNs);
        }

        Setup withLoad(double value) {
            return new Setup(name, workload, value, loadCountsHeaders, clients, warmupNs, measureNs, drainNs, seed,
                    clientConfig, serverConfig, fabric, applicationTimeoutNs);
        }

        Setup withSeed(long value) {
            return new Setup(name, workload, load, loadCountsHeaders, clients, warmupNs, measureNs, drainNs, value,
                    clientConfig, serverConfig, fabric, applicationTimeoutNs);
        }

        Setup withFabric(StarNetwork.Fabric value) {
            return new Setup(name, workload, load, loadCountsHeaders, clients, warmupNs, measureNs, drainNs, seed,
                    clientConfig, serverConfig, value, applicationTimeoutNs);
        }

        /** The same engine configuration at every host. */
        Setup withConfig(EngineConfig value) {
            return new Setup(name, workload, load, loadCountsHeaders, clients, warmupNs, measureNs, drainNs, seed,
                    value, value, fabric, applicationTimeoutNs);
        }

        String describe() {
            StarNetwork.Fabric f = fabric;
            EngineConfig c = clientConfig;
            return String.format(Locale.ROOT, "%s: %s at %.0f %% (%s), %d clients, %d Mbit/s, prop %.1f µs, port %,d B %s%s,"
                            + " rx delay %.0f µs; engine linkMbps %d, maxOvercommit %d, fifo %.2f, maxIncoming %,d,"
                            + " rttBytes %s, unscheduled %,d, priorityLevels %d; warm-up %.0f s, measured %.0f s, seed %d",
                    name, workload, load * 100, loadCountsHeaders ? "headers counted" : "message bytes only", clients,
                    f.linkMbps(), f.propagationNs() / 1e3, f.bufferBytes(),
                    f.priorityQueues() ? "8 strict-priority queues" : "one FIFO",
                    f.perClassBuffers() ? ", each class its own " + f.classBufferBytes() + " B" : " shared",
                    f.rxDelayNs() / 1e3, c.linkMbps(), c.maxOvercommit(), c.fifoGrantFraction(), c.maxIncomingBytes(),
                    c.rttBytes() == 0 ? "auto" : String.valueOf(c.rttBytes()), c.unscheduledBytes(), c.priorityLevels(),
                    warmupNs / 1e9, measureNs / 1e9, seed);
        }
    }

    /** What happened to one RPC. */
    static final class Call {
        final int index;
        final int client;
        final int lengthBytes;
        final long startNs;
        final boolean measured;
        long rpcId;
        long endNs = -1;
        String failure;
        final Message request = new Message();
        final Message response = new Message();
        /** Packets of the RPC, while it is traced (see {@link LoadedRackExperiment#traced}). */
        List<TraceEntry> trace;

        Call(int index, int client, int lengthBytes, long startNs, boolean measured) {
            this.index = index;
            this.client = client;
            this.lengthBytes = lengthBytes;
            this.startNs = startNs;
            this.measured = measured;
        }

        long latencyNs() {
            return endNs - startNs;
        }
    }

    /** Where one message's time went, seen from its sender (see the class comment). */
    static final class Message {
        long queuedNs = -1;
        long completeNs = -1;
        /** Bytes sent once (new bytes), and the granted offset its sender knows. */
        int sentEnd;
        int granted;
        long lastNs;
        long backlogNs;
        long grantWaitNs;
        long tailNs;
        long firstDataNs = -1;
        long maxPortWaitNs;
        long sumPortWaitNs;
        int dataPackets;
        int retransmitted;
        int drops;

        void start(long nowNs) {
            queuedNs = nowNs;
            lastNs = nowNs;
        }

        /** Attributes the time since the last change to the state the message was in. */
        void advance(long nowNs, int lengthBytes) {
            if (queuedNs < 0 || completeNs >= 0) {
                return;
            }
            long spent = nowNs - lastNs;
            lastNs = nowNs;
            if (sentEnd >= lengthBytes) {
                tailNs += spent;
            } else if (firstDataNs < 0 || sentEnd < granted) {
                backlogNs += spent;
            } else {
                grantWaitNs += spent;
            }
        }

        void complete(long nowNs, int lengthBytes) {
            advance(nowNs, lengthBytes);
            completeNs = nowNs;
        }
    }

    /** One packet of a traced RPC. */
    record TraceEntry(boolean fromClient, PacketType type, int offset, int length, int priority, boolean retransmit,
            long sentNs, long portArrivedNs, long queuedAheadBytes, long portStartNs, long arrivedNs, boolean dropped,
            String note) {}

    /** Per decile of length: latency and slowdown percentiles and where the time went. */
    record DecileRow(int decile, int fromBytes, int toBytes, int rpcs, long p50Ns, long p99Ns, long maxNs,
            double slowdownP50, double slowdownP99, double unloadedMedianNs, int overTimeout, int failed,
            int unfinished, double[] meanPartsNs, long p99MaxPortWaitNs) {}

    /** What one run did. */
    record Result(Setup setup, double ratePerSecond, int started, int measured, int completed, int failed,
            int unfinished, int unfinishedMeasured, Map<String, Integer> failures, List<DecileRow> deciles,
            Map<String, long[]> dropsByPort, Map<String, long[]> arrivalsByPort, Map<String, long[]> maxQueueByPort,
            Map<String, Long> counters, Map<String, Long> serverCounters, String slowShortTrace, String slowLongTrace,
            List<String> dropSnapshots, String unloadedLine,
            long eventsRun, long wallMs, double serverDownlinkUtilisation, double serverUplinkUtilisation,
            int maxReceiveQueue) {

        int measuredFailed() {
            return deciles.stream().mapToInt(DecileRow::failed).sum();
        }

        int measuredUnfinished() {
            return deciles.stream().mapToInt(DecileRow::unfinished).sum();
        }

        /** Header of {@link #summaryLine()}. */
        static String summaryHeader() {
            return String.format(Locale.ROOT, "%-16s %4s %5s %4s | %6s %6s | %7s %8s %8s %6s %5s | %6s %6s | %6s %6s %6s",
                    "setup", "seed", "rpcs", "fail", "d1 p50", "d1 p99", "d10 p50", "d10 p99", "d10 max", "d10 sl", ">10s",
                    "drops", "drop0", "retx", "resend", "busy");
        }

        /**
         * One line: RPCs measured, failed or unfinished; shortest decile p50/p99 (ms); longest decile
         * p50/p99/max (ms), p99 slowdown, RPCs over the application timeout; drops at the port to
         * the server (all, priority 0); DATA retransmitted, RESENDs and BUSYs sent (all hosts).
         */
        String summaryLine() {
            DecileRow first = deciles.get(0);
            DecileRow last = deciles.get(9);
            long[] drops = dropsByPort.get("server");
            long allDrops = Arrays.stream(drops).sum();
            long overTimeout = deciles.stream().mapToLong(DecileRow::overTimeout).sum();
            return String.format(Locale.ROOT,
                    "%-16s %4d %5d %4d | %6.2f %6.2f | %7.1f %8.1f %8.1f %6.1f %5d | %6d %6d | %6d %6d %6d",
                    setup.name(), setup.seed(), measured, measuredFailed() + measuredUnfinished(), first.p50Ns() / 1e6,
                    first.p99Ns() / 1e6, last.p50Ns() / 1e6, last.p99Ns() / 1e6, last.maxNs() / 1e6, last.slowdownP99(),
                    overTimeout, allDrops, drops[0],
                    counters.get("retransmittedData") + serverCounters.get("retransmittedData"),
                    counters.get("resendsSent") + serverCounters.get("resendsSent"),
                    counters.get("busySent") + serverCounters.get("busySent"));
        }

        /** The summary tables, as text. */
        String table() {
            StringBuilder out = new StringBuilder();
            out.append("== ").append(setup.describe()).append('\n');
            out.append(String.format(Locale.ROOT,
                    "   %.1f RPC/s offered; %d RPCs started, %d measured; %d completed, %d failed, %d never finished"
                            + " (%d measured); server downlink busy %.1f %%, uplink %.1f %%; %,d events, %.1f s wall;"
                            + " max rx queue %d packets%n",
                    ratePerSecond, started, measured, completed, failed, unfinished, unfinishedMeasured,
                    serverDownlinkUtilisation * 100, serverUplinkUtilisation * 100, eventsRun, wallMs / 1e3,
                    maxReceiveQueue));
            out.append(String.format(Locale.ROOT,
                    "   %-3s %-17s %5s %9s %9s %9s %8s %8s %8s %5s %4s | mean ms: %7s %7s %7s %7s %7s %7s | %8s%n",
                    "dec", "length B", "rpcs", "p50 ms", "p99 ms", "max ms", "unl ms", "slow50", "slow99",
                    ">10s", "fail", "rq.blg", "rq.gnt", "rq.tail", "rs.blg", "rs.gnt", "rs.tail", "p99 portW"));
            for (DecileRow row : deciles) {
                double[] parts = row.meanPartsNs();
                out.append(String.format(Locale.ROOT,
                        "   %-3d %7d-%-9d %5d %9.3f %9.3f %9.1f %8.3f %8.1f %8.1f %5d %4d | %16.2f %7.2f %7.2f %7.2f %7.2f %7.2f | %8.2f%n",
                        row.decile() + 1, row.fromBytes(), row.toBytes(), row.rpcs(), row.p50Ns() / 1e6,
                        row.p99Ns() / 1e6, row.maxNs() / 1e6, row.unloadedMedianNs() / 1e6, row.slowdownP50(),
                        row.slowdownP99(), row.overTimeout(), row.failed() + row.unfinished(), parts[0] / 1e6,
                        parts[1] / 1e6, parts[2] / 1e6, parts[3] / 1e6, parts[4] / 1e6, parts[5] / 1e6,
                        row.p99MaxPortWaitNs() / 1e6));
            }
            out.append("   ").append(unloadedLine).append('\n');
            out.append("   failures: ").append(failures.isEmpty() ? "none" : failures).append('\n');
            for (Map.Entry<String, long[]> port : dropsByPort.entrySet()) {
                out.append(String.format(Locale.ROOT, "   port->%-8s drops by prio 0..7 %s of arrivals %s; max queue B %s%n",
                        port.getKey(), Arrays.toString(port.getValue()), Arrays.toString(arrivalsByPort.get(port.getKey())),
                        Arrays.toString(maxQueueByPort.get(port.getKey()))));
            }
            out.append("   clients: ").append(counters).append('\n');
            out.append("   server:  ").append(serverCounters).append('\n');
            return out.toString();
        }
    }

    static final int LINK_MBPS = 100;
    /** Wire bytes of a DATA packet besides its message bytes: DATA header, IPv4 + UDP, Ethernet. */
    static final int DATA_OVERHEAD_WIRE_BYTES = DataHeader.HEADER_LENGTH + StarNetwork.IP_UDP_HEADER_BYTES
            + StarNetwork.ETHERNET_HEADER_FCS_BYTES + StarNetwork.ETHERNET_PREAMBLE_GAP_BYTES;
    private static final long START_NS = 1_000_000_000L;
    private static final int CLIENT_PORT = 5000;
    private static final int SERVER_PORT = 4000;
    /** Unloaded latencies by (fabric, configs, length), measured once per JVM. */
    private static final Map<String, Long> UNLOADED = new ConcurrentHashMap<>();

    private final Setup setup;
    private final Workload workload;
    private final StarNetwork network;
    private final StarNetwork.Host server;
    private final StarNetwork.Host[] clients;
    private final List<Call> calls = new ArrayList<>();
    private final List<Map<Long, Call>> callsByRpcId = new ArrayList<>();
    private final Map<String, Integer> failures = new TreeMap<>();
    private final ControlHeader commonView = new ControlHeader();
    private final DataHeader dataView = new DataHeader();
    private final GrantHeader grantView = new GrantHeader();
    private final ResendHeader resendView = new ResendHeader();
    private final int[] decileUpperBytes = new int[10];
    /** The slowest RPC so far (latency) of the shortest decile and (slowdown) of the longest, with its trace. */
    private final List<String> dropSnapshots = new ArrayList<>();
    private long serverDrops;
    private Call slowestShort;
    private Call slowestLong;
    private double slowestLongSlowdown;
    private int completed;
    private int failed;

    LoadedRackExperiment(Setup setup) {
        this.setup = setup;
        this.workload = Workload.load(setup.workload());
        for (int d = 0; d < 10; d++) {
            decileUpperBytes[d] = d == 9 ? workload.maxLengthBytes() : workload.quantileBytes((d + 1) / 10.0);
        }
        this.network = new StarNetwork(setup.fabric(), START_NS);
        this.server = network.addHost("server", new InetSocketAddress("10.0.0.1", SERVER_PORT),
                new HomaEngine(setup.serverConfig(), SERVER_PORT, 2), this::onServerEvent);
        this.clients = new StarNetwork.Host[setup.clients()];
        for (int i = 0; i < clients.length; i++) {
            int client = i;
            clients[i] = network.addHost("client" + i, new InetSocketAddress("10.0.1." + (i + 1), CLIENT_PORT),
                    new HomaEngine(setup.clientConfig(), CLIENT_PORT, 2 + 1_000_000L * (i + 1)),
                    (host, event) -> onClientEvent(client, event));
            callsByRpcId.add(new HashMap<>());
        }
        network.observer = new StarNetwork.Observer() {
            @Override
            public void sent(StarNetwork.Packet packet) {
                onSent(packet);
            }

            @Override
            public void dropped(StarNetwork.EgressPort port, StarNetwork.Packet packet) {
                onDropped(packet);
            }

            @Override
            public void arrived(StarNetwork.Packet packet) {
                onArrived(packet);
            }
        };
    }

    /** Total RPC arrival rate, per second, over all clients. */
    static double ratePerSecond(Workload workload, double load, boolean countHeaders, int linkMbps) {
        double mean = 0;
        double previous = 0;
        for (int i = 0; i < workload.pointCount(); i++) {
            int length = workload.lengthBytes(i);
            double bytes = length;
            if (countHeaders) {
                bytes += (double) DATA_OVERHEAD_WIRE_BYTES * packets(length);
            }
            mean += (workload.cumulativeFraction(i) - previous) * bytes;
            previous = workload.cumulativeFraction(i);
        }
        return load * linkMbps * 1e6 / 8 / mean;
    }

    static int packets(int lengthBytes) {
        int payload = EngineConfig.DEFAULT_MTU_BYTES - EngineConfig.IP_UDP_HEADER_BYTES - DataHeader.HEADER_LENGTH;
        return Math.max(1, (lengthBytes + payload - 1) / payload);
    }

    /** Runs the experiment: arrivals for warm-up plus measurement, then the drain. */
    Result run() {
        long wallStart = System.nanoTime();
        double rate = ratePerSecond(workload, setup.load(), setup.loadCountsHeaders(), setup.fabric().linkMbps());
        double perClientMeanGapNs = 1e9 * clients.length / rate;
        long arrivalsEndNs = START_NS + setup.warmupNs() + setup.measureNs();
        for (int i = 0; i < clients.length; i++) {
            SplittableRandom random = new SplittableRandom(setup.seed() * 1_000_003L + i);
            scheduleArrival(i, random, START_NS, perClientMeanGapNs, arrivalsEndNs);
        }
        long endNs = arrivalsEndNs + setup.drainNs();
        network.runUntil(() -> network.nowNs() >= arrivalsEndNs && completed + failed == calls.size(), endNs);
        return result(rate, System.nanoTime() - wallStart);
    }

    private void scheduleArrival(int client, SplittableRandom random, long afterNs, double meanGapNs, long untilNs) {
        long atNs = afterNs + (long) (-Math.log(1 - random.nextDouble()) * meanGapNs);
        if (atNs >= untilNs) {
            return;
        }
        network.at(atNs, () -> {
            start(client, workload.sample(random));
            scheduleArrival(client, random, atNs, meanGapNs, untilNs);
        });
    }

    private void start(int client, int lengthBytes) {
        long nowNs = network.nowNs();
        boolean measured = nowNs >= START_NS + setup.warmupNs();
        Call call = new Call(calls.size(), client, lengthBytes, nowNs, measured);
        calls.add(call);
        call.trace = new ArrayList<>();
        byte[] request = new byte[lengthBytes];
        ByteBuffer.wrap(request).putInt(call.index);
        StarNetwork.Host host = clients[client];
        call.request.start(nowNs);
        call.rpcId = host.engine.sendRequest(nowNs, server.address, SendOptions.of(request));
        callsByRpcId.get(client).put(call.rpcId, call);
        host.settle();
    }

    private void onServerEvent(StarNetwork.Host host, HomaEvent event) {
        if (!(event instanceof HomaEvent.RequestReceived request)) {
            throw new AssertionError("the server got a client event: " + event);
        }
        byte[] message = request.message();
        Call call = calls.get(ByteBuffer.wrap(message).getInt());
        long nowNs = network.nowNs();
        call.request.complete(nowNs, call.lengthBytes);
        call.response.start(nowNs);
        note(call, "request delivered to the server; response queued");
        if (!server.engine.sendResponse(nowNs, request.client(), request.rpcId(), SendOptions.of(message))) {
            throw new AssertionError("the server could not answer rpcid " + request.rpcId());
        }
    }

    private void onClientEvent(int client, HomaEvent event) {
        long nowNs = network.nowNs();
        if (event instanceof HomaEvent.ResponseReceived response) {
            Call call = callsByRpcId.get(client).remove(response.rpcId());
            if (call == null) {
                throw new AssertionError("response for an unknown RPC " + response.rpcId());
            }
            byte[] message = response.message();
            if (message.length != call.lengthBytes || ByteBuffer.wrap(message).getInt() != call.index) {
                throw new AssertionError("wrong response for RPC " + call.index);
            }
            call.response.complete(nowNs, call.lengthBytes);
            call.endNs = nowNs;
            completed++;
            keepTrace(call);
        } else if (event instanceof HomaEvent.RpcFailed rpcFailed) {
            Call call = callsByRpcId.get(client).remove(rpcFailed.rpcId());
            if (call == null) {
                throw new AssertionError("failure of an unknown RPC " + rpcFailed.rpcId());
            }
            call.failure = rpcFailed.reason() + ": " + rpcFailed.detail().replaceAll("\\d+", "N");
            failures.merge(call.failure, 1, Integer::sum);
            call.endNs = nowNs;
            failed++;
            note(call, "FAILED " + rpcFailed.reason() + ": " + rpcFailed.detail());
            keepTrace(call);
        } else {
            throw new AssertionError("a client got a server event: " + event);
        }
    }

    private int decileOf(int lengthBytes) {
        for (int d = 0; d < 10; d++) {
            if (lengthBytes <= decileUpperBytes[d]) {
                return d;
            }
        }
        return 9;
    }

    /** Keeps the trace of an ended RPC if it is the slowest of its kind so far; drops it otherwise. */
    private void keepTrace(Call call) {
        List<TraceEntry> trace = call.trace;
        call.trace = null;
        if (!call.measured) {
            return;
        }
        int decile = decileOf(call.lengthBytes);
        if (decile == 0 && (slowestShort == null || call.latencyNs() > slowestShort.latencyNs())) {
            call.trace = trace;
            if (slowestShort != null) {
                slowestShort.trace = null;
            }
            slowestShort = call;
        } else if (decile == 9) {
            double slowdown = call.latencyNs() / (double) unloadedNs(call.lengthBytes);
            if (slowestLong == null || slowdown > slowestLongSlowdown) {
                call.trace = trace;
                if (slowestLong != null) {
                    slowestLong.trace = null;
                }
                slowestLong = call;
                slowestLongSlowdown = slowdown;
            }
        }
    }

    private void note(Call call, String text) {
        if (call.trace != null) {
            long nowNs = network.nowNs();
            call.trace.add(new TraceEntry(false, null, 0, 0, 0, false, nowNs, -1, 0, -1, nowNs, false, text));
        }
    }

    // ---- packets

    /** The RPC a packet is about: the client is the packet's source or its destination. */
    private Call callOf(StarNetwork.Packet packet) {
        StarNetwork.Host clientHost = packet.from == server ? packet.to : packet.from;
        int client = Integer.parseInt(clientHost.name.substring("client".length()));
        commonView.wrap(ByteBuffer.wrap(packet.bytes), 0);
        return callsByRpcId.get(client).get(commonView.clientRpcId());
    }

    private void onSent(StarNetwork.Packet packet) {
        PacketType type = IncastExperiment.typeOf(packet.bytes);
        if (type != PacketType.DATA) {
            return;
        }
        Call call = callOf(packet);
        if (call == null) {
            return;
        }
        boolean fromClient = packet.from != server;
        Message message = fromClient ? call.request : call.response;
        dataView.wrap(ByteBuffer.wrap(packet.bytes), 0);
        long nowNs = network.nowNs();
        message.advance(nowNs, call.lengthBytes);
        if (message.firstDataNs < 0) {
            message.firstDataNs = nowNs;
        }
        message.granted = Math.max(message.granted, Math.min(call.lengthBytes, dataView.incoming()));
        int end = dataView.dataOffset() + packet.bytes.length - DataHeader.HEADER_LENGTH;
        if (dataView.retransmitted()) {
            message.retransmitted++;
        } else {
            message.sentEnd = Math.max(message.sentEnd, end);
        }
        message.dataPackets++;
    }

    private void onArrived(StarNetwork.Packet packet) {
        Call call = callOf(packet);
        if (call == null) {
            return;
        }
        PacketType type = IncastExperiment.typeOf(packet.bytes);
        boolean fromClient = packet.from != server;
        long portWaitNs = packet.portStartNs - packet.portArrivedNs;
        if (type == PacketType.DATA) {
            Message message = fromClient ? call.request : call.response;
            message.maxPortWaitNs = Math.max(message.maxPortWaitNs, portWaitNs);
            message.sumPortWaitNs += portWaitNs;
        } else if (type == PacketType.GRANT) {
            // The sender learns of the grant now (give or take the receive delay).
            Message message = fromClient ? call.response : call.request;
            grantView.wrap(ByteBuffer.wrap(packet.bytes), 0);
            message.advance(network.nowNs(), call.lengthBytes);
            message.granted = Math.max(message.granted, Math.min(call.lengthBytes, grantView.grantOffset()));
        }
        if (call.trace != null) {
            call.trace.add(entry(packet, type, fromClient, false));
        }
    }

    private void onDropped(StarNetwork.Packet packet) {
        if (packet.to == server && dropSnapshots.size() < 6 && (serverDrops++ % 400) == 0) {
            dropSnapshots.add(describeQueue(server.downlink, packet));
        }
        Call call = callOf(packet);
        if (call == null) {
            return;
        }
        PacketType type = IncastExperiment.typeOf(packet.bytes);
        boolean fromClient = packet.from != server;
        if (type == PacketType.DATA) {
            (fromClient ? call.request : call.response).drops++;
        }
        if (call.trace != null) {
            call.trace.add(entry(packet, type, fromClient, true));
        }
    }

    private TraceEntry entry(StarNetwork.Packet packet, PacketType type, boolean fromClient, boolean dropped) {
        ByteBuffer buffer = ByteBuffer.wrap(packet.bytes);
        int offset = 0;
        int length = 0;
        boolean retransmit = false;
        if (type == PacketType.DATA) {
            dataView.wrap(buffer, 0);
            offset = dataView.dataOffset();
            length = packet.bytes.length - DataHeader.HEADER_LENGTH;
            retransmit = dataView.retransmitted();
        } else if (type == PacketType.GRANT) {
            grantView.wrap(buffer, 0);
            offset = grantView.grantOffset();
            length = grantView.priority();
        } else if (type == PacketType.RESEND) {
            resendView.wrap(buffer, 0);
            offset = resendView.resendOffset();
            length = resendView.length();
        }
        long nowNs = network.nowNs();
        return new TraceEntry(fromClient, type, offset, length, packet.priority, retransmit, packet.sentNs,
                dropped ? nowNs : packet.portArrivedNs, dropped ? 0 : packet.queuedAheadBytes,
                dropped ? -1 : packet.portStartNs, dropped ? -1 : nowNs, dropped, null);
    }

    /**
     * What the port to the server holds when {@code dropped} is dropped: bytes per priority, and
     * in the dropped packet's class, per message: its packets, offsets, and how far its sender had
     * sent and been granted.
     */
    private String describeQueue(StarNetwork.EgressPort port, StarNetwork.Packet dropped) {
        StringBuilder out = new StringBuilder();
        long nowNs = network.nowNs();
        out.append(String.format(Locale.ROOT, "at %.3f s, a prio %d packet dropped; queue B by prio %s; class %d holds:",
                (nowNs - START_NS) / 1e9, dropped.priority, Arrays.toString(port.queueBytes), dropped.priority));
        Map<String, long[]> byMessage = new TreeMap<>();
        for (StarNetwork.Packet packet : port.queued()) {
            if (packet.priority != dropped.priority) {
                continue;
            }
            Call call = callOf(packet);
            PacketType type = IncastExperiment.typeOf(packet.bytes);
            String key;
            if (call == null) {
                key = "unknown " + type;
            } else {
                Message message = packet.from != server ? call.request : call.response;
                key = String.format(Locale.ROOT, "#%d %s %s of %,d B (age %.1f ms, sent %,d granted %,d)", call.index,
                        type, packet.from != server ? "request" : "response", call.lengthBytes,
                        (nowNs - call.startNs) / 1e6, message.sentEnd, message.granted);
            }
            long[] sum = byMessage.computeIfAbsent(key, k -> new long[] {0, 0, Long.MAX_VALUE});
            sum[0]++;
            sum[1] += packet.frameBytes;
            sum[2] = Math.min(sum[2], packet.portArrivedNs);
        }
        byMessage.forEach((key, sum) -> out.append(String.format(Locale.ROOT, "%n      %d pkts %,d B, oldest queued %.1f ms ago: %s",
                sum[0], sum[1], (nowNs - sum[2]) / 1e6, key)));
        return out.toString();
    }

    // ---- unloaded latency

    /**
     * The round trip of an echo of {@code lengthBytes} on an idle fabric of this setup: one warm-up
     * RPC of 100 B first (first contact), then the measured one.
     */
    long unloadedNs(int lengthBytes) {
        String key = setup.fabric() + "|" + setup.clientConfig() + "|" + setup.serverConfig() + "|" + lengthBytes;
        return UNLOADED.computeIfAbsent(key, k -> measureUnloaded(lengthBytes));
    }

    private long measureUnloaded(int lengthBytes) {
        StarNetwork idle = new StarNetwork(setup.fabric(), START_NS);
        long[] done = {-1};
        StarNetwork.Host[] hosts = new StarNetwork.Host[2];
        hosts[0] = idle.addHost("server", new InetSocketAddress("10.0.0.1", SERVER_PORT),
                new HomaEngine(setup.serverConfig(), SERVER_PORT, 2), (host, event) -> {
                    HomaEvent.RequestReceived request = (HomaEvent.RequestReceived) event;
                    host.engine.sendResponse(idle.nowNs(), request.client(), request.rpcId(),
                            SendOptions.of(request.message()));
                });
        hosts[1] = idle.addHost("client", new InetSocketAddress("10.0.1.1", CLIENT_PORT),
                new HomaEngine(setup.clientConfig(), CLIENT_PORT, 1_000_002), (host, event) -> {
                    if (!(event instanceof HomaEvent.ResponseReceived)) {
                        throw new AssertionError("unloaded RPC failed: " + event);
                    }
                    done[0] = idle.nowNs();
                });
        hosts[1].engine.sendRequest(idle.nowNs(), hosts[0].address, SendOptions.of(new byte[100]));
        hosts[1].settle();
        idle.runUntil(() -> done[0] >= 0, START_NS + 10_000_000_000L);
        long startNs = done[0] + 10_000_000;
        idle.runUntil(() -> false, startNs);
        done[0] = -1;
        idle.at(startNs, () -> {
            hosts[1].engine.sendRequest(idle.nowNs(), hosts[0].address, SendOptions.of(new byte[lengthBytes]));
            hosts[1].settle();
        });
        idle.runUntil(() -> done[0] >= 0, startNs + 60_000_000_000L);
        if (done[0] < 0) {
            throw new AssertionError("unloaded RPC of " + lengthBytes + " B did not complete");
        }
        return done[0] - startNs;
    }

    /**
     * The physics: request and response each serialized at link rate by the sender, the switch
     * port one packet behind it (store and forward: it finishes one first-packet time after the
     * sender), two propagation delays, and the receive delay of the last packet; no queueing and
     * no wait for GRANTs.
     */
    static long physicsNs(int lengthBytes, StarNetwork.Fabric fabric) {
        int n = packets(lengthBytes);
        int payload = EngineConfig.DEFAULT_MTU_BYTES - EngineConfig.IP_UDP_HEADER_BYTES - DataHeader.HEADER_LENGTH;
        int firstPacket = Math.min(lengthBytes, payload) + DATA_OVERHEAD_WIRE_BYTES;
        long oneWay = fabric.transmitNs(lengthBytes + n * DATA_OVERHEAD_WIRE_BYTES) + fabric.transmitNs(firstPacket)
                + 2 * fabric.propagationNs() + fabric.rxDelayNs();
        return 2 * oneWay;
    }

    // ---- results

    /** Unloaded round trips, as simulated and as {@link #physicsNs}, for a few lengths of the workload. */
    private String unloadedLine() {
        StringBuilder out = new StringBuilder("unloaded RTT, simulated / physics:");
        for (int length : new int[] {workload.minLengthBytes(), workload.quantileBytes(0.5), 10_000, 100_000,
                workload.maxLengthBytes()}) {
            out.append(String.format(Locale.ROOT, " %,d B %.3f / %.3f ms;", length, unloadedNs(length) / 1e6,
                    physicsNs(length, setup.fabric()) / 1e6));
        }
        return out.toString();
    }

    private Result result(double rate, long wallNs) {
        int unfinished = 0;
        int unfinishedMeasured = 0;
        List<List<Call>> byDecile = new ArrayList<>();
        for (int d = 0; d < 10; d++) {
            byDecile.add(new ArrayList<>());
        }
        int measured = 0;
        for (Call call : calls) {
            if (call.endNs < 0) {
                unfinished++;
                if (call.measured) {
                    unfinishedMeasured++;
                }
            }
            if (call.measured) {
                measured++;
                byDecile.get(decileOf(call.lengthBytes)).add(call);
            }
        }
        List<DecileRow> rows = new ArrayList<>();
        for (int d = 0; d < 10; d++) {
            rows.add(decileRow(d, byDecile.get(d)));
        }
        Map<String, long[]> drops = new java.util.LinkedHashMap<>();
        Map<String, long[]> arrivals = new java.util.LinkedHashMap<>();
        Map<String, long[]> maxQueue = new java.util.LinkedHashMap<>();
        int maxReceiveQueue = 0;
        for (StarNetwork.Host host : network.hosts()) {
            drops.put(host.name, host.downlink.droppedByPriority.clone());
            arrivals.put(host.name, host.downlink.arrivedByPriority.clone());
            maxQueue.put(host.name, host.downlink.maxQueueBytes.clone());
            maxReceiveQueue = Math.max(maxReceiveQueue, host.maxReceiveQueue);
        }
        Map<String, Long> clientCounters = new java.util.LinkedHashMap<>();
        for (StarNetwork.Host client : clients) {
            counters(client.engine.counters()).forEach((k, v) -> clientCounters.merge(k, v, Long::sum));
        }
        long spanNs = network.nowNs() - START_NS;
        long clientUplinkBytes = 0;
        for (StarNetwork.Host client : clients) {
            clientUplinkBytes += client.downlink.departedBytes;
        }
        double downUtil = server.downlink.departedBytes * 8e3 / setup.fabric().linkMbps() / spanNs;
        double upUtil = clientUplinkBytes * 8e3 / setup.fabric().linkMbps() / spanNs;
        return new Result(setup, rate, calls.size(), measured, completed, failed, unfinished, unfinishedMeasured,
                failures, rows, drops, arrivals, maxQueue, clientCounters, counters(server.engine.counters()),
                slowestShort == null ? "" : formatTrace(slowestShort),
                slowestLong == null ? "" : formatTrace(slowestLong), dropSnapshots, unloadedLine(), network.eventsRun(), wallNs / 1_000_000,
                downUtil, upUtil, maxReceiveQueue);
    }

    private DecileRow decileRow(int decile, List<Call> calls) {
        int from = decile == 0 ? workload.minLengthBytes() : decileUpperBytes[decile - 1] + 1;
        int to = decileUpperBytes[decile];
        List<Long> latencies = new ArrayList<>();
        List<Double> slowdowns = new ArrayList<>();
        List<Long> unloaded = new ArrayList<>();
        List<Long> portWaits = new ArrayList<>();
        double[] parts = new double[6];
        int failedHere = 0;
        int unfinishedHere = 0;
        int overTimeout = 0;
        int ended = 0;
        for (Call call : calls) {
            if (call.endNs < 0) {
                unfinishedHere++;
                overTimeout++;
                continue;
            }
            if (call.failure != null) {
                failedHere++;
                continue;
            }
            long latency = call.latencyNs();
            long unloadedNs = unloadedNs(call.lengthBytes);
            latencies.add(latency);
            unloaded.add(unloadedNs);
            slowdowns.add(latency / (double) unloadedNs);
            portWaits.add(Math.max(call.request.maxPortWaitNs, call.response.maxPortWaitNs));
            if (latency > setup.applicationTimeoutNs()) {
                overTimeout++;
            }
            parts[0] += call.request.backlogNs;
            parts[1] += call.request.grantWaitNs;
            parts[2] += call.request.tailNs;
            parts[3] += call.response.backlogNs;
            parts[4] += call.response.grantWaitNs;
            parts[5] += call.response.tailNs;
            ended++;
        }
        for (int i = 0; i < parts.length; i++) {
            parts[i] = ended == 0 ? 0 : parts[i] / ended;
        }
        latencies.sort(null);
        slowdowns.sort(null);
        unloaded.sort(null);
        portWaits.sort(null);
        return new DecileRow(decile, from, to, calls.size(), percentile(latencies, 0.5), percentile(latencies, 0.99),
                latencies.isEmpty() ? 0 : latencies.get(latencies.size() - 1), percentileDouble(slowdowns, 0.5),
                percentileDouble(slowdowns, 0.99), percentile(unloaded, 0.5), overTimeout, failedHere, unfinishedHere,
                parts, percentile(portWaits, 0.99));
    }

    static long percentile(List<Long> sorted, double q) {
        if (sorted.isEmpty()) {
            return 0;
        }
        int index = (int) Math.ceil(q * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }

    static double percentileDouble(List<Double> sorted, double q) {
        if (sorted.isEmpty()) {
            return 0;
        }
        int index = (int) Math.ceil(q * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }

    private static Map<String, Long> counters(EngineCounters c) {
        Map<String, Long> map = new java.util.LinkedHashMap<>();
        map.put("dataSent", c.packetsSent(PacketType.DATA));
        map.put("grantsSent", c.packetsSent(PacketType.GRANT));
        map.put("resendsSent", c.resendsSent());
        map.put("retransmittedData", c.retransmittedDataPackets());
        map.put("busySent", c.busySent());
        map.put("timeouts", c.timeouts());
        map.put("retransmitBudgetExceeded", c.retransmitBudgetExceeded());
        map.put("duplicates", c.duplicatePackets());
        map.put("resendsDeferred", c.resendsDeferred());
        map.put("silentPeerProbes", c.silentPeerProbes());
        map.put("cutoffsSent", c.packetsSent(PacketType.CUTOFFS));
        map.put("rpcUnknownSent", c.packetsSent(PacketType.RPC_UNKNOWN));
        map.put("needAckSent", c.packetsSent(PacketType.NEED_ACK));
        map.put("incastMarked", c.incastMarked());
        map.put("droppedForBufferSpace", c.droppedForBufferSpace());
        map.put("malformed", c.malformedPackets());
        return map;
    }

    /**
     * A traced RPC: its events, and its packets with consecutive ones of the same direction, type
     * and priority folded into one line (sent times, offsets, the longest wait at the switch port
     * and the most bytes queued ahead there, drops).
     */
    private String formatTrace(Call call) {
        StringBuilder out = new StringBuilder();
        long t0 = call.startNs;
        out.append(String.format(Locale.ROOT,
                "RPC #%d client%d %,d B: latency %.3f ms (unloaded %.3f ms)%s; request backlog %.3f grant-wait %.3f tail %.3f,"
                        + " %d DATA (%d again, %d dropped); response backlog %.3f grant-wait %.3f tail %.3f, %d DATA"
                        + " (%d again, %d dropped)%n",
                call.index, call.client, call.lengthBytes, call.latencyNs() / 1e6, unloadedNs(call.lengthBytes) / 1e6,
                call.failure == null ? "" : " FAILED " + call.failure, call.request.backlogNs / 1e6,
                call.request.grantWaitNs / 1e6, call.request.tailNs / 1e6, call.request.dataPackets,
                call.request.retransmitted, call.request.drops, call.response.backlogNs / 1e6,
                call.response.grantWaitNs / 1e6, call.response.tailNs / 1e6, call.response.dataPackets,
                call.response.retransmitted, call.response.drops));
        out.append("   times in ms from the call's start; sent = handed out by the sender's engine; portW = wait at"
                + " the switch port; ahead = bytes queued at that port at its priority or above\n");
        List<TraceEntry> trace = call.trace == null ? List.of() : call.trace;
        out.append(timeline(call, trace));
        int lines = 0;
        int i = 0;
        while (i < trace.size() && lines < 80) {
            TraceEntry first = trace.get(i);
            if (first.note() != null) {
                out.append(String.format(Locale.ROOT, "   %10.3f  %s%n", (first.sentNs() - t0) / 1e6, first.note()));
                lines++;
                i++;
                continue;
            }
            int j = i;
            long maxWait = 0;
            long maxAhead = 0;
            int drops = 0;
            int again = 0;
            int lowOffset = Integer.MAX_VALUE;
            int highOffset = 0;
            while (j < trace.size()) {
                TraceEntry e = trace.get(j);
                if (e.note() != null || e.type() != first.type() || e.fromClient() != first.fromClient()
                        || e.priority() != first.priority() || e.dropped() != first.dropped()
                        || (j > i && e.sentNs() - trace.get(j - 1).sentNs() > 2_000_000)) {
                    break;
                }
                if (!e.dropped()) {
                    maxWait = Math.max(maxWait, e.portStartNs() - e.portArrivedNs());
                    maxAhead = Math.max(maxAhead, e.queuedAheadBytes());
                } else {
                    drops++;
                }
                if (e.retransmit()) {
                    again++;
                }
                lowOffset = Math.min(lowOffset, e.offset());
                highOffset = Math.max(highOffset, e.type() == PacketType.DATA ? e.offset() + e.length() : e.offset());
                j++;
            }
            TraceEntry last = trace.get(j - 1);
            String what = switch (first.type()) {
                case DATA -> String.format(Locale.ROOT, "[%d, %d)%s", lowOffset, highOffset,
                        again > 0 ? " " + again + " retransmitted" : "");
                case GRANT -> String.format(Locale.ROOT, "to %d..%d", lowOffset, highOffset);
                case RESEND -> String.format(Locale.ROOT, "offset %d len %d", first.offset(), first.length());
                default -> "";
            };
            out.append(String.format(Locale.ROOT, "   %10.3f..%10.3f %s %-6s x%-4d prio %d %s; max portW %.3f ms, ahead %,d B%s%n",
                    (first.sentNs() - t0) / 1e6, (last.sentNs() - t0) / 1e6, first.fromClient() ? "c->s" : "s->c",
                    first.type(), j - i, first.priority(), what, maxWait / 1e6, maxAhead,
                    drops > 0 ? ", DROPPED" : ""));
            lines++;
            i = j;
        }
        if (i < trace.size()) {
            out.append("   ... ").append(trace.size() - i).append(" more packets\n");
        }
        return out.toString();
    }

    /**
     * The traced RPC's life in 20 slices of its latency: per slice and direction, the DATA packets
     * that left their sender (new and again, the priorities they went at), the drops, GRANTs and
     * RESENDs, and the longest wait at a switch port of a packet sent in the slice.
     */
    private static String timeline(Call call, List<TraceEntry> trace) {
        int slices = 20;
        long sliceNs = Math.max(1, (call.latencyNs() + slices - 1) / slices);
        StringBuilder out = new StringBuilder(String.format(Locale.ROOT,
                "   timeline in slices of %.1f ms (by the time each packet left its sender): request DATA new/again"
                        + " [prios] drops | GRANTs to the client [prios] RESENDs | response DATA new/again drops |"
                        + " GRANTs to the server RESENDs | max portW ms%n", sliceNs / 1e6));
        for (int slice = 0; slice < slices; slice++) {
            long from = call.startNs + slice * sliceNs;
            long to = from + sliceNs;
            int[] n = new int[10];
            java.util.TreeSet<Integer> requestPrios = new java.util.TreeSet<>();
            java.util.TreeSet<Integer> grantPrios = new java.util.TreeSet<>();
            long maxWait = 0;
            for (TraceEntry e : trace) {
                if (e.note() != null || e.sentNs() < from || e.sentNs() >= to) {
                    continue;
                }
                if (!e.dropped() && e.portStartNs() >= 0) {
                    maxWait = Math.max(maxWait, e.portStartNs() - e.portArrivedNs());
                }
                int base = e.fromClient() ? 0 : 5;
                if (e.type() == PacketType.DATA) {
                    n[base + (e.retransmit() ? 1 : 0)]++;
                    if (e.dropped()) {
                        n[base + 2]++;
                    }
                    if (e.fromClient()) {
                        requestPrios.add(e.priority());
                    }
                } else if (e.type() == PacketType.GRANT) {
                    n[base == 0 ? 8 : 3]++;
                    if (base == 5) {
                        grantPrios.add(e.length()); // the priority the GRANT assigns
                    }
                } else if (e.type() == PacketType.RESEND) {
                    n[base == 0 ? 9 : 4]++;
                }
            }
            out.append(String.format(Locale.ROOT,
                    "   %8.1f ms: rq %4d/%-3d %-9s %3d | G %4d %-9s R %3d | rs %4d/%-3d %3d | G %4d R %3d | %8.1f%n",
                    (from - call.startNs) / 1e6, n[0], n[1], requestPrios, n[2], n[3], grantPrios, n[4], n[5], n[6],
                    n[7], n[8], n[9], maxWait / 1e6));
        }
        return out.toString();
    }

    /**
     * Runs the setups of {@link LoadedRackSimulationTest#setups} (all, or those named in
     * {@code homa.rack.only}, comma-separated) with {@code homa.rack.seconds} of measurement
     * (default 30), each for the seeds {@code homa.rack.seed} (default 1) onwards,
     * {@code homa.rack.seeds} of them (default 1); {@code homa.rack.traces=true} adds the packets of
     * the slowest short and long RPC and the port to the server at some of its drops.
     */
    public static void main(String[] args) {
        long seconds = Long.getLong("homa.rack.seconds", 30);
        int seeds = Integer.getInteger("homa.rack.seeds", 1);
        List<String> summary = new ArrayList<>();
        for (Setup setup : LoadedRackSimulationTest.setups(seconds, System.getProperty("homa.rack.only"))) {
            for (int i = 0; i < seeds; i++) {
                Result result = new LoadedRackExperiment(setup.withSeed(setup.seed() + i)).run();
                summary.add(result.summaryLine());
                System.out.print(result.table());
                if (Boolean.getBoolean("homa.rack.traces")) {
                    System.out.println("   slowest short RPC: " + result.slowShortTrace());
                    System.out.println("   slowest long RPC (slowdown): " + result.slowLongTrace());
                    result.dropSnapshots().forEach(text -> System.out.println("   drop at the server port " + text));
                }
                System.out.flush();
            }
        }
        System.out.println("== summary (" + seconds + " s measured; latencies in ms; d1 = 53-315 B, d10 = 120,374-1,000,000 B;"
                + " d10 sl = p99 slowdown; drops at the port to the server)");
        System.out.println(Result.summaryHeader());
        summary.forEach(System.out::println);
    }
}
