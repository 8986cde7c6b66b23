package io.homa.engine.incast;

import io.homa.engine.EngineConfig;
import io.homa.engine.EngineCounters;
import io.homa.engine.HomaEngine;
import io.homa.engine.HomaEvent;
import io.homa.engine.SendOptions;
import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import io.homa.engine.internal.wire.ResendHeader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The incast experiment of the Homa paper (SIGCOMM 2018, §5.1, Figure 9) on a {@link StarNetwork}:
 * one client starts {@code rpcs} RPCs at the same instant, round-robin over {@code servers}
 * servers; each request is {@code requestBytes} long and each server answers it at once with
 * {@code responseBytes}. The run ends when every RPC has ended, nothing is on the wire and no
 * engine holds RPC state (servers acknowledged), or at {@code virtualLimitNs}.
 *
 * <p>Requests carry their RPC's index; responses are filled with a pattern of that index, and the
 * client checks every byte. Drops at the client's downlink are classified by what was lost and
 * by phase: "burst" before the client's first RESEND, "recovery" after it.
 */
final class IncastExperiment {

    /** Inputs of one run. */
    record Setup(int servers, int rpcs, int requestBytes, int responseBytes, EngineConfig config,
            StarNetwork.Fabric fabric, long virtualLimitNs) {}

    /**
     * What one run did. Times are virtual, from the instant the RPCs were started.
     *
     * @param incastMarked requests the client sent with the INCAST flag (engine counter)
     * @param clientDownlinkDrops packets dropped at the switch port towards the client
     * @param otherDrops packets dropped at the ports towards the servers
     * @param maxClientQueueBytes peak occupancy of the client's downlink buffer
     * @param firstDropQueue what filled the client's downlink buffer when its first drop happened
     * @param firstDropUnmarkedBytes of that, the bytes of responses to unmarked requests
     * @param lastResponseNs when the last response was complete at the client
     * @param quiescentNs when the run ended (quiescence, or the limit)
     * @param wholeResponseResendsForMarked client RESENDs for INCAST-marked RPCs that asked for
     *     more than the whole response from offset 0 (the client had received nothing of it)
     * @param dropsByKind drops at the client's downlink by "phase/kind"
     */
    record Result(
            int rpcs,
            int completed,
            int failed,
            String firstFailure,
            int wrongResponses,
            long incastMarked,
            long clientDownlinkDrops,
            long clientDownlinkDroppedBytes,
            long otherDrops,
            long maxClientQueueBytes,
            long maxClientQueueAtNs,
            long firstDropAtNs,
            String firstDropQueue,
            long firstDropUnmarkedBytes,
            long firstClientResendNs,
            long lastResponseNs,
            long quiescentNs,
            boolean quiescent,
            long clientResends,
            long serverRetransmittedPackets,
            long clientGrants,
            long clientTimeouts,
            long wholeResponseResendsForMarked,
            Map<String, Long> dropsByKind,
            long eventsRun) {

        String summary() {
            return String.format(
                    "%d/%d completed (%d failed%s, %d wrong), %d marked INCAST; client downlink: %d packets dropped"
                            + " (%,d B) %s, max queue %,d B at %.1f µs; first drop at %s%s; drops elsewhere %d;"
                            + " last response at %.3f ms, %s; client RESENDs %d (first at %s), of which %d for"
                            + " [0, whole response) of a marked RPC; server retransmitted DATA %d; client GRANTs"
                            + " %d; timeouts %d; %,d events",
                    completed, rpcs, failed, firstFailure == null ? "" : ", first: " + firstFailure, wrongResponses,
                    incastMarked, clientDownlinkDrops, clientDownlinkDroppedBytes, dropsByKind,
                    maxClientQueueBytes, maxClientQueueAtNs / 1e3,
                    firstDropAtNs < 0 ? "-" : String.format("%.1f µs", firstDropAtNs / 1e3),
                    firstDropQueue == null ? "" : " (" + firstDropQueue + ")", otherDrops, lastResponseNs / 1e6,
                    quiescent ? String.format("quiescent at %.3f ms", quiescentNs / 1e6) : "NOT quiescent",
                    clientResends, firstClientResendNs < 0 ? "-" : String.format("%.3f ms", firstClientResendNs / 1e6),
                    wholeResponseResendsForMarked, serverRetransmittedPackets, clientGrants, clientTimeouts,
                    eventsRun);
        }
    }

    private static final long START_NS = 1_000_000_000L;
    private static final int CLIENT_PORT = 5000;
    private static final int SERVER_PORT = 4000;

    private final Setup setup;
    private final StarNetwork network;
    private final StarNetwork.Host client;
    private final StarNetwork.Host[] servers;
    private final boolean[] ended;
    private final Map<Long, Integer> indexByRpcId = new HashMap<>();
    /** Client rpcids whose request went out with the INCAST flag. */
    private final Set<Long> markedRpcIds = new HashSet<>();
    private final Map<String, Long> dropsByKind = new TreeMap<>();
    private final DataHeader dataView = new DataHeader();
    private final ResendHeader resendView = new ResendHeader();
    private int completed;
    private int failed;
    private int wrongResponses;
    private String firstFailure;
    private String firstDropQueue;
    private long firstDropUnmarkedBytes;
    private long lastResponseNs = -1;
    private long firstClientResendNs = -1;
    private long wholeResponseResendsForMarked;

    IncastExperiment(Setup setup) {
        this.setup = setup;
        this.network = new StarNetwork(setup.fabric(), START_NS);
        this.ended = new boolean[setup.rpcs()];
        this.client = network.addHost("client", new InetSocketAddress("10.0.0.1", CLIENT_PORT),
                new HomaEngine(setup.config(), CLIENT_PORT, 2), this::onClientEvent);
        this.servers = new StarNetwork.Host[setup.servers()];
        for (int i = 0; i < servers.length; i++) {
            servers[i] = network.addHost("server" + i, new InetSocketAddress("10.0.1." + (i + 1), SERVER_PORT),
                    new HomaEngine(setup.config(), SERVER_PORT, 2), this::onServerEvent);
        }
        network.observer = new StarNetwork.Observer() {
            @Override
            public void sent(StarNetwork.Packet packet) {
                onSent(packet);
            }

            @Override
            public void dropped(StarNetwork.EgressPort port, StarNetwork.Packet packet) {
                if (port == client.downlink) {
                    onClientDownlinkDrop(packet);
                }
            }
        };
    }

    /** Runs the experiment to quiescence or the virtual time limit. */
    Result run() {
        for (int i = 0; i < setup.rpcs(); i++) {
            byte[] request = new byte[setup.requestBytes()];
            ByteBuffer.wrap(request).putInt(i);
            StarNetwork.Host server = servers[i % servers.length];
            long rpcId = client.engine.sendRequest(network.nowNs(), server.address, SendOptions.of(request));
            indexByRpcId.put(rpcId, i);
        }
        client.settle();
        boolean quiescent = network.runUntil(this::quiescent, START_NS + setup.virtualLimitNs());
        long otherDrops = 0;
        long serverRetransmits = 0;
        for (StarNetwork.Host server : servers) {
            otherDrops += server.downlink.droppedPackets;
            serverRetransmits += server.engine.counters().retransmittedDataPackets();
        }
        EngineCounters counters = client.engine.counters();
        StarNetwork.EgressPort port = client.downlink;
        return new Result(setup.rpcs(), completed, failed, firstFailure, wrongResponses, counters.incastMarked(),
                port.droppedPackets, port.droppedBytes, otherDrops, port.maxBufferedBytes,
                port.maxBufferedAtNs - START_NS, sinceStart(port.firstDropAtNs), firstDropQueue, firstDropUnmarkedBytes,
                sinceStart(firstClientResendNs), sinceStart(lastResponseNs), network.nowNs() - START_NS, quiescent,
                counters.resendsSent(), serverRetransmits, counters.packetsSent(PacketType.GRANT), counters.timeouts(),
                wholeResponseResendsForMarked, dropsByKind, network.eventsRun());
    }

    private static long sinceStart(long ns) {
        return ns < 0 ? -1 : ns - START_NS;
    }

    /** Every RPC ended, nothing on the wire, no RPC state left at either end. */
    private boolean quiescent() {
        if (completed + failed < setup.rpcs() || network.packetsInFlight() != 0
                || client.engine.activeClientRpcs() != 0) {
            return false;
        }
        for (StarNetwork.Host server : servers) {
            if (server.engine.activeServerRpcs() != 0) {
                return false;
            }
        }
        return true;
    }

    private void onServerEvent(StarNetwork.Host server, HomaEvent event) {
        if (!(event instanceof HomaEvent.RequestReceived request)) {
            throw new AssertionError(server.name + " got a client event: " + event);
        }
        int index = ByteBuffer.wrap(request.message()).getInt();
        if (!server.engine.sendResponse(network.nowNs(), request.client(), request.rpcId(), SendOptions.of(response(index)))) {
            throw new AssertionError(server.name + " could not answer rpcid " + request.rpcId());
        }
    }

    private void onClientEvent(StarNetwork.Host host, HomaEvent event) {
        if (event instanceof HomaEvent.ResponseReceived response) {
            int index = end(response.rpcId());
            completed++;
            lastResponseNs = network.nowNs();
            if (!Arrays.equals(response(index), response.message())) {
                wrongResponses++;
            }
        } else if (event instanceof HomaEvent.RpcFailed rpcFailed) {
            end(rpcFailed.rpcId());
            failed++;
            if (firstFailure == null) {
                firstFailure = rpcFailed.reason() + ": " + rpcFailed.detail();
            }
        } else {
            throw new AssertionError("the client got a server event: " + event);
        }
    }

    private int end(long rpcId) {
        Integer index = indexByRpcId.get(rpcId);
        if (index == null || ended[index]) {
            throw new AssertionError("event for an unknown or ended RPC " + rpcId);
        }
        ended[index] = true;
        return index;
    }

    private byte[] response(int index) {
        byte[] response = new byte[setup.responseBytes()];
        for (int i = 0; i < response.length; i++) {
            response[i] = (byte) (index * 7 + i);
        }
        return response;
    }

    private void onSent(StarNetwork.Packet packet) {
        if (packet.from != client) {
            return;
        }
        PacketType type = typeOf(packet.bytes);
        if (type == PacketType.DATA) {
            dataView.wrap(ByteBuffer.wrap(packet.bytes), 0);
            if ((dataView.flags() & DataHeader.FLAG_INCAST) != 0) {
                markedRpcIds.add(dataView.clientRpcId());
            }
        } else if (type == PacketType.RESEND) {
            if (firstClientResendNs < 0) {
                firstClientResendNs = network.nowNs();
            }
            resendView.wrap(ByteBuffer.wrap(packet.bytes), 0);
            if (markedRpcIds.contains(resendView.clientRpcId()) && resendView.resendOffset() == 0
                    && resendView.length() > setup.responseBytes()) {
                wholeResponseResendsForMarked++;
            }
        }
    }

    private void onClientDownlinkDrop(StarNetwork.Packet packet) {
        if (firstDropQueue == null) {
            firstDropQueue = describeClientQueue();
        }
        String phase = firstClientResendNs < 0 ? "burst/" : "recovery/";
        dropsByKind.merge(phase + kindOf(packet), 1L, Long::sum);
    }

    /** Response DATA by kind: of an unmarked RPC, the unscheduled head of a marked one, or the rest. */
    private String kindOf(StarNetwork.Packet packet) {
        PacketType type = typeOf(packet.bytes);
        if (type != PacketType.DATA) {
            return String.valueOf(type);
        }
        dataView.wrap(ByteBuffer.wrap(packet.bytes), 0);
        if (!markedRpcIds.contains(dataView.clientRpcId())) {
            return "unmarked";
        }
        return dataView.dataOffset() < setup.config().incastUnscheduledBytes() ? "marked-head" : "marked-rest";
    }

    /** What sits in the client's downlink buffer, by kind and priority (called once, at the first drop). */
    private String describeClientQueue() {
        Map<String, long[]> byKind = new TreeMap<>();
        for (StarNetwork.Packet packet : client.downlink.queued()) {
            long[] sum = byKind.computeIfAbsent(kindOf(packet) + "@p" + packet.priority, k -> new long[2]);
            sum[0]++;
            sum[1] += packet.frameBytes;
            if (kindOf(packet).equals("unmarked")) {
                firstDropUnmarkedBytes += packet.frameBytes;
            }
        }
        StringBuilder text = new StringBuilder("buffer held ").append(client.downlink.bufferedBytes).append(" B:");
        byKind.forEach((kind, sum) -> text.append(' ').append(kind).append('=').append(sum[0]).append(" pkts/")
                .append(sum[1]).append(" B"));
        return text.toString();
    }

    static PacketType typeOf(byte[] packet) {
        return PacketType.fromCode(Byte.toUnsignedInt(packet[HomaHeader.TYPE_OFFSET]));
    }
}
