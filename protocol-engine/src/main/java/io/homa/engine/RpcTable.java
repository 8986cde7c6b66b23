package io.homa.engine;

import io.homa.engine.internal.wire.HomaHeader;
import java.net.InetAddress;
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
    /** Peers in access order (least recently used first), so that the oldest idle one can be evicted. */
    private final Map<InetSocketAddress, Peer> peers = new java.util.LinkedHashMap<>(16, 0.75f, true);
    private final int maxPeers;
    private int serverRpcCount;
    /** Memory held by inbound messages still arriving (see {@link InboundMessage}). */
    private long inboundBufferedBytes;
    /** What the requests still arriving from each client IP address hold (ports are free to forge). */
    private final Map<InetAddress, AddressLoad> addressLoads = new HashMap<>();
    /**
     * Most memory the requests still arriving from one IP address may hold: a share of
     * {@code max-inbound-buffer}, but never less than one message of {@code max-message-size}.
     */
    private final long maxHalfOpenBytesPerAddress;

    /**
     * This endpoint's server epoch (1..{@link HomaHeader#MAX_EPOCH}, chosen per engine by
     * {@link HomaEngine}), written into every packet it sends as a server; 0 = none (components
     * built by hand in tests).
     */
    int localEpoch;

    /** The share of {@code max-inbound-buffer} one client address may fill with requests still arriving: 1/8. */
    static final int ADDRESS_SHARE_DIVISOR = 8;

    /**
     * Requests still arriving ("half-open" RPCs) from one client IP address, whatever its ports:
     * the memory they hold, and how many peers (ports) of that address are known.
     */
    static final class AddressLoad {
        long halfOpenBufferedBytes;
        int peers;
    }

    /**
     * Most peers a first packet from an unknown address may create: past it the least recently
     * used idle peer is forgotten (as after peer-idle-timeout) or, if the oldest are all busy, the
     * packet is dropped, so that a flood from spoofed addresses cannot create a peer per address.
     */
    static final int MAX_PEERS = 1 << 17;
    /** Oldest peers looked at for an idle one to evict. */
    static final int EVICTION_SCAN = 64;

    RpcTable(EngineConfig config, GrantScheduler grantScheduler, TimerQueue timers, EngineCounters counters) {
        this(config, grantScheduler, timers, counters, MAX_PEERS);
    }

    RpcTable(EngineConfig config, GrantScheduler grantScheduler, TimerQueue timers, EngineCounters counters,
            int maxPeers) {
        this.maxPeers = maxPeers;
        this.config = config;
        this.grantScheduler = grantScheduler;
        this.timers = timers;
        this.counters = counters;
        // At least what one message of max-message-size takes (its chunks hold exactly its bytes),
        // so that any request can complete, as one could before the address had a share at all.
        this.maxHalfOpenBytesPerAddress = Math.max(config.maxInboundBufferBytes() / ADDRESS_SHARE_DIVISOR,
                config.maxMessageBytes());
    }

    // ---- peers

    /** The peer at {@code address}, created (with its idle-expiry timer) if unknown. */
    Peer peer(InetSocketAddress address, long nowNs) {
        Peer peer = peers.get(address);
        if (peer == null) {
            peer = new Peer(address, nowNs, config.resendIntervalNs(), config.maxResendIntervalNs());
            peers.put(address, peer);
            AddressLoad load = addressLoads.computeIfAbsent(address.getAddress(), (key) -> new AddressLoad());
            load.peers++;
            peer.addressLoad = load;
            timers.armAtOrBefore(peer, nowNs + config.peerIdleTimeoutNs() + 1);
        }
        return peer;
    }

    /**
     * The peer at {@code address} for a packet from it that opens state: created if unknown and
     * the table has room, evicting the least recently used idle peer when it is full ({@link
     * #MAX_PEERS}); null when it is full of busy peers (the caller drops the packet).
     */
    Peer peerForInbound(InetSocketAddress address, long nowNs) {
        Peer peer = peers.get(address);
        if (peer != null) {
            return peer;
        }
        if (peers.size() >= maxPeers && !evictIdlePeer()) {
            counters.droppedForPeerTable++;
            return null;
        }
        return peer(address, nowNs);
    }

    private boolean evictIdlePeer() {
        java.util.Iterator<Peer> oldest = peers.values().iterator();
        for (int i = 0; i < EVICTION_SCAN && oldest.hasNext(); i++) {
            Peer candidate = oldest.next();
            if (candidate.idle()) {
                forget(candidate);
                counters.peersEvicted++;
                return true;
            }
        }
        return false;
    }

    /** The peer at {@code address}, or null; never creates one (a packet alone must not). */
    Peer knownPeer(InetSocketAddress address) {
        return peers.get(address);
    }

    /** Forgets an idle peer, its finished rpcids and its cutoffs (draft "Timeouts": after a long idle time). */
    void forget(Peer peer) {
        peers.remove(peer.address);
        peer.addressLoad.peers--;
        releaseIfUnused(peer.address.getAddress(), peer.addressLoad);
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
     * The RPC held with that peer that a packet from {@code from} names, or null: one of our client
     * RPCs to it (a packet from a server) or one of its RPCs we serve (a packet from a client).
     */
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

    /**
     * The server epoch a client RPC's packets carry: the one it is bound to, else the server's
     * epoch as known now, else {@link HomaHeader#EPOCH_ASK} (first contact: a server of ours asks
     * for the request again, naming its epoch, before it runs it).
     */
    static int epochOf(ClientRpc rpc) {
        if (rpc.epochBound) {
            return rpc.epoch;
        }
        int known = rpc.server.serverEpoch;
        return known != 0 ? known : HomaHeader.EPOCH_ASK;
    }

    /** The epoch for a packet we send: ours for a packet about an RPC we serve, the bound one for our own RPCs. */
    int epochFor(InetSocketAddress peer, long wireRpcId) {
        if ((wireRpcId & HomaHeader.FROM_SERVER_BIT) != 0) {
            return localEpoch;
        }
        ClientRpc rpc = clientRpcs.get(wireRpcId);
        if (rpc != null) {
            return epochOf(rpc);
        }
        Peer known = peers.get(peer);
        return known == null ? 0 : known.serverEpoch;
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

    /** {@code message} took {@code bytes} more memory. */
    void addInboundBuffered(InboundMessage message, long bytes) {
        inboundBufferedBytes += bytes;
        if (isRequest(message)) {
            message.peer.addressLoad.halfOpenBufferedBytes += bytes;
        }
    }

    /** An inbound message completed or was dropped: its memory is no longer ours to count, its grants stop. */
    void endInbound(InboundMessage message) {
        inboundBufferedBytes -= message.bufferedBytes();
        if (isRequest(message)) {
            AddressLoad load = message.peer.addressLoad;
            load.halfOpenBufferedBytes -= message.bufferedBytes();
            releaseIfUnused(message.peer.address.getAddress(), load);
        }
        grantScheduler.ended(message);
    }

    /**
     * Whether requests still arriving from {@code from}'s IP address hold their share of
     * {@code max-inbound-buffer} (an {@value #ADDRESS_SHARE_DIVISOR}th, at least one message of
     * {@code max-message-size}): then no request from that
     * address may open or take more memory: one address flooding first packets would otherwise
     * hold all of it, and every new RPC of every client would fail.
     */
    boolean addressOverBudget(InetSocketAddress from) {
        AddressLoad load = addressLoads.get(from.getAddress());
        return load != null && load.halfOpenBufferedBytes >= maxHalfOpenBytesPerAddress;
    }

    /** Memory held by requests still arriving from {@code address}'s IP address. */
    long halfOpenBufferedBytes(InetSocketAddress address) {
        AddressLoad load = addressLoads.get(address.getAddress());
        return load == null ? 0 : load.halfOpenBufferedBytes;
    }

    private void releaseIfUnused(InetAddress address, AddressLoad load) {
        if (load.peers == 0 && load.halfOpenBufferedBytes == 0) {
            addressLoads.remove(address, load);
        }
    }

    /** A server's inbound message is a request: its GRANTs and RESENDs carry the S bit. */
    private static boolean isRequest(InboundMessage message) {
        return (message.wireRpcId & HomaHeader.FROM_SERVER_BIT) != 0;
    }

    // ---- lifecycle

    /** Drops the client RPC {@code rpcId} (cancelled: no event follows); false if we do not hold it. */
    boolean cancelClientRpc(long rpcId) {
        ClientRpc rpc = clientRpc(rpcId);
        if (rpc == null) {
            return false;
        }
        removeClientRpc(rpc);
        return true;
    }

    /**
     * Starts and holds a client RPC to {@code server}: its peer marked used, the RPC heard now (its
     * silence counts from its start); the caller queues its request.
     */
    ClientRpc startClientRpc(long rpcId, InetSocketAddress server, long nowNs) {
        Peer peer = peer(server, nowNs);
        peer.lastUsedNs = nowNs;
        ClientRpc rpc = new ClientRpc(rpcId, peer);
        rpc.lastHeardNs = nowNs;
        addClientRpc(rpc);
        counters.rpcsStarted++;
        return rpc;
    }

    /** Client RPCs, for {@link #clear}'s caller to fail them. */
    Iterable<ClientRpc> clientRpcs() {
        return clientRpcs.values();
    }

    void clear() {
        clientRpcs.clear();
        peers.clear();
        addressLoads.clear();
        serverRpcCount = 0;
        inboundBufferedBytes = 0;
    }
}
