package io.homa.engine;

import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;

/**
 * The RPCs and peers an endpoint holds (Linux Homa's {@code homa_rpc.c} and {@code homa_peer.c}):
 * client RPCs by rpcid, server RPCs by (client, rpcid), one {@link Peer} per remote endpoint, and
 * the memory held by inbound messages. It starts and ends RPCs' state; what to do with them is
 * the other components' business.
 *
 * <p>An RPC is named by (client address, rpcid) (draft "RPCs"): a client's rpcids are its own, and
 * only the server a request went to may speak for it (it answers from the address we sent to).
 */
final class RpcTable {
    private final EngineConfig config;
    private final GrantScheduler grantScheduler;
    private final TimerQueue timers;
    private final EngineCounters counters;
    private final LongMap<ClientRpc> clientRpcs = new LongMap<>();
    private final Map<InetSocketAddress, Peer> peers = new HashMap<>();
    private int serverRpcCount;
    /** Memory held by inbound messages still arriving (see {@link InboundMessage}). */
    private long inboundBufferedBytes;

    RpcTable(EngineConfig config, GrantScheduler grantScheduler, TimerQueue timers, EngineCounters counters) {
        this.config = config;
        this.grantScheduler = grantScheduler;
        this.timers = timers;
        this.counters = counters;
    }

    // ---- peers

    /** The peer at {@code address}, created (with its idle-expiry timer) if unknown. */
    Peer peer(InetSocketAddress address, long nowNs) {
        Peer peer = peers.get(address);
        if (peer == null) {
            peer = new Peer(address, nowNs, config.resendIntervalNs(), config.maxResendIntervalNs());
            peers.put(address, peer);
            timers.armAtOrBefore(peer, nowNs + config.peerIdleTimeoutNs() + 1);
        }
        return peer;
    }

    /** The peer at {@code address}, or null; never creates one (a packet alone must not). */
    Peer knownPeer(InetSocketAddress address) {
        return peers.get(address);
    }

    /** Forgets an idle peer, its finished rpcids and its cutoffs (draft "Timeouts": after a long idle time). */
    void forget(Peer peer) {
        peers.remove(peer.address);
        timers.cancel(peer);
        counters.peersForgotten++;
    }

    /** Smoothed RTT of up to {@code max} peers with at least one sample (see {@link RttEstimate}). */
    Map<InetSocketAddress, Long> smoothedRttNs(int max) {
        Map<InetSocketAddress, Long> rtts = new HashMap<>();
        for (Peer peer : peers.values()) {
            if (rtts.size() == max) {
                break;
            }
            if (peer.rtt.samples() > 0) {
                rtts.put(peer.address, peer.rtt.srttNs());
            }
        }
        return Map.copyOf(rtts);
    }

    int peerCount() {
        return peers.size();
    }

    /**
     * Whether a packet from {@code from} names an RPC held with that peer: one of our client RPCs
     * to it (a packet from a server) or one of its RPCs we serve (a packet from a client).
     */
    boolean holds(InetSocketAddress from, boolean fromServer, long rpcId) {
        return held(from, fromServer, rpcId) != null;
    }

    /** The RPC held with that peer that a packet from {@code from} names, or null (see {@link #holds}). */
    TimerEntry held(InetSocketAddress from, boolean fromServer, long rpcId) {
        return fromServer ? clientRpc(rpcId, from) : serverRpc(from, rpcId);
    }

    /** A packet about an RPC held with the peer at {@code address} arrived: the peer is alive. */
    void heardFrom(InetSocketAddress address, long nowNs) {
        Peer peer = peers.get(address);
        if (peer != null) {
            peer.heard(nowNs);
        }
    }

    // ---- client RPCs

    void addClientRpc(ClientRpc rpc) {
        clientRpcs.put(rpc.rpcId, rpc);
        rpc.server.clientRpcCount++;
    }

    /** The client RPC a packet from {@code from} is about, or null if the rpcid is not ours or {@code from} is not its server. */
    ClientRpc clientRpc(long rpcId, InetSocketAddress from) {
        ClientRpc rpc = clientRpcs.get(rpcId);
        return rpc != null && rpc.server.address.equals(from) ? rpc : null;
    }

    ClientRpc clientRpc(long rpcId) {
        return clientRpcs.get(rpcId);
    }

    int clientRpcCount() {
        return clientRpcs.size();
    }

    /** Ends a client RPC's state: its request stops, its partial response is freed, its timer stops. */
    void removeClientRpc(ClientRpc rpc) {
        if (clientRpcs.remove(rpc.rpcId) == null) {
            return;
        }
        rpc.moveTo(ClientRpc.State.DONE);
        rpc.server.clientRpcCount--;
        rpc.request.abandoned = true;
        if (rpc.response != null && !rpc.response.complete()) {
            inboundBufferedBytes -= rpc.response.bufferedBytes();
            grantScheduler.ended(rpc.response);
        }
        timers.cancel(rpc);
    }

    // ---- server RPCs

    void addServerRpc(ServerRpc rpc) {
        rpc.client.serverRpcs.put(rpc.rpcId, rpc);
        rpc.client.finished.received(rpc.rpcId);
        serverRpcCount++;
    }

    /** The server RPC of {@code client}'s {@code rpcId}, or null. */
    ServerRpc serverRpc(InetSocketAddress client, long rpcId) {
        Peer peer = peers.get(client);
        return peer == null ? null : peer.serverRpcs.get(rpcId);
    }

    int serverRpcCount() {
        return serverRpcCount;
    }

    /** Ends a server RPC's state; a request still arriving is freed, a response stops. */
    void removeServerRpc(ServerRpc rpc) {
        if (rpc.client.serverRpcs.remove(rpc.rpcId) == null) {
            return;
        }
        serverRpcCount--;
        if (rpc.state() == ServerRpc.State.RECEIVING_REQUEST) {
            endInbound(rpc.request);
        }
        if (rpc.response != null) {
            rpc.response.abandoned = true;
        }
        rpc.moveTo(ServerRpc.State.DEAD);
        timers.cancel(rpc);
    }

    // ---- inbound memory

    /** Memory taken by inbound messages still arriving, in bytes. */
    long inboundBufferedBytes() {
        return inboundBufferedBytes;
    }

    void addInboundBuffered(long bytes) {
        inboundBufferedBytes += bytes;
    }

    /** An inbound message completed or was dropped: its memory is no longer ours to count, its grants stop. */
    void endInbound(InboundMessage message) {
        inboundBufferedBytes -= message.bufferedBytes();
        grantScheduler.ended(message);
    }

    // ---- lifecycle

    /** Client RPCs, for {@link #clear}'s caller to fail them. */
    Iterable<ClientRpc> clientRpcs() {
        return clientRpcs.values();
    }

    void clear() {
        clientRpcs.clear();
        peers.clear();
        serverRpcCount = 0;
        inboundBufferedBytes = 0;
    }
}
