package io.homa.engine;

import io.homa.engine.wire.PacketType;
import java.net.InetSocketAddress;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;

/**
 * Counts of what one engine has done. The engine updates the live instance on its own thread;
 * other threads read a {@link #snapshot()} taken on that thread.
 */
public final class EngineCounters {
    private final long[] packetsSent = new long[PacketType.values().length];
    private final long[] packetsReceived = new long[PacketType.values().length];
    long malformedPackets;
    long resendsSent;
    long retransmittedDataPackets;
    long busySent;
    long timeouts;
    long duplicatePackets;
    long rpcsStarted;
    long rpcsCompleted;
    long requestsDelivered;
    long requestsRefused;
    long requestsRefusedOverloaded;
    long staleEpochRefused;
    long droppedForBufferSpace;
    long droppedForAddressBudget;
    long peersForgotten;
    long peersEvicted;
    long droppedForPeerTable;
    long incastMarked;
    long rttSamples;
    long resendsDeferred;
    long silentPeerProbes;
    long acksIgnored;
    long cutoffsIgnored;
    long conflictingDataPackets;
    long retransmitBudgetExceeded;
    long firstContactResends;
    long addressesValidated;
    long bytesHeldForValidation;
    long rttProbesSent;
    long rttProbesAnswered;
    long rttProbesIgnored;
    long rttProbesLost;
    /** Smoothed RTT per peer; filled only in a {@link HomaEngine#countersSnapshot()}. */
    Map<InetSocketAddress, Long> peerSmoothedRttNs = Map.of();

    void sent(PacketType type) {
        packetsSent[type.ordinal()]++;
    }

    void received(PacketType type) {
        packetsReceived[type.ordinal()]++;
    }

    /** Packets handed to the sink, by type. */
    public long packetsSent(PacketType type) {
        return packetsSent[type.ordinal()];
    }

    /** Well-formed packets received, by type. */
    public long packetsReceived(PacketType type) {
        return packetsReceived[type.ordinal()];
    }

    /** All packets sent, by type, as a map. */
    public Map<PacketType, Long> packetsSentByType() {
        return byType(packetsSent);
    }

    /** All well-formed packets received, by type, as a map. */
    public Map<PacketType, Long> packetsReceivedByType() {
        return byType(packetsReceived);
    }

    private static Map<PacketType, Long> byType(long[] counts) {
        Map<PacketType, Long> map = new EnumMap<>(PacketType.class);
        for (PacketType type : PacketType.values()) {
            map.put(type, counts[type.ordinal()]);
        }
        return map;
    }

    /** Packets dropped because they were short, of an unknown type or inconsistent. */
    public long malformedPackets() {
        return malformedPackets;
    }

    /** RESEND packets sent. */
    public long resendsSent() {
        return resendsSent;
    }

    /** DATA packets sent again in answer to a RESEND (or a GRANT with resend-all). */
    public long retransmittedDataPackets() {
        return retransmittedDataPackets;
    }

    /** BUSY packets sent. */
    public long busySent() {
        return busySent;
    }

    /** RPCs aborted because the peer went silent. */
    public long timeouts() {
        return timeouts;
    }

    /** DATA packets whose bytes had all arrived before, or that belonged to a finished RPC. */
    public long duplicatePackets() {
        return duplicatePackets;
    }

    /** Client RPCs started. */
    public long rpcsStarted() {
        return rpcsStarted;
    }

    /** Client RPCs whose response arrived. */
    public long rpcsCompleted() {
        return rpcsCompleted;
    }

    /** Requests handed to the server application. */
    public long requestsDelivered() {
        return requestsDelivered;
    }

    /** Requests refused unexecuted because the server is shutting down ({@link HomaEngine#refuseRequest}). */
    public long requestsRefused() {
        return requestsRefused;
    }

    /**
     * Requests refused unexecuted because the server is overloaded: refused on their first DATA
     * while {@link HomaEngine#refuseNewRequests} is on, or once delivered
     * ({@link HomaEngine#refuseOverloaded}).
     */
    public long requestsRefusedOverloaded() {
        return requestsRefusedOverloaded;
    }

    /**
     * Request DATA and RESENDs about RPCs this server does not know that name an earlier
     * incarnation's epoch: answered RPC_UNKNOWN instead of running the request (again).
     */
    public long staleEpochRefused() {
        return staleEpochRefused;
    }

    /**
     * Requests from clients that knew no epoch of this server yet (first contact), answered with a
     * RESEND naming the epoch instead of being run ({@code homa.first-contacts}).
     */
    public long firstContactResends() {
        return firstContactResends;
    }

    /** Client addresses (peers) that echoed this server's address token: validated ({@code homa.addresses.validated}). */
    public long addressesValidated() {
        return addressesValidated;
    }

    /**
     * Response bytes held back because the client's address was not validated and its credit (3x
     * what it sent) did not pay for them: unscheduled bytes, GRANTs and RESENDs cut
     * ({@code homa.bytes.held{reason=address-validation}}).
     */
    public long bytesHeldForValidation() {
        return bytesHeldForValidation;
    }

    /** First packets of new inbound messages dropped because {@code maxInboundBufferBytes} was reached. */
    public long droppedForBufferSpace() {
        return droppedForBufferSpace;
    }

    /**
     * Request DATA dropped because the requests still arriving from its IP address hold their
     * share (1/8) of {@code maxInboundBufferBytes}: new requests that would stay half-open, and
     * packets that would take more memory (a RESEND asks for them again later).
     */
    public long droppedForAddressBudget() {
        return droppedForAddressBudget;
    }

    /** Idle peers whose state was dropped after {@code peerIdleTimeoutNs}. */
    public long peersForgotten() {
        return peersForgotten;
    }

    /**
     * Idle peers forgotten early because the peer table was full (its least recently used idle
     * peers go first); they are also counted in {@link #peersForgotten()}.
     */
    public long peersEvicted() {
        return peersEvicted;
    }

    /** First request packets dropped because the peer table was full and its oldest peers were busy. */
    public long droppedForPeerTable() {
        return droppedForPeerTable;
    }

    /** Requests sent with the INCAST flag (more than {@code incastThreshold} RPCs outstanding). */
    public long incastMarked() {
        return incastMarked;
    }

    /** Round-trip samples taken (GRANT or RESEND to the first DATA it released; RFC 6298, Karn's rule). */
    public long rttSamples() {
        return rttSamples;
    }

    /**
     * RESENDs and NEED_ACKs not sent because their peer was silent and had already been probed
     * within the current backoff step (one probe per silent peer, not one per RPC).
     */
    public long resendsDeferred() {
        return resendsDeferred;
    }

    /** RESENDs and NEED_ACKs sent to a silent peer as its one probe of a backoff step. */
    public long silentPeerProbes() {
        return silentPeerProbes;
    }

    /**
     * Acknowledgments (in ACK packets or riding on request DATA) of an RPC whose response had not
     * been sent in full: no client can have received it, so the ack is forged or confused and the
     * RPC is kept: a forged ACK must not drop a response in service.
     */
    public long acksIgnored() {
        return acksIgnored;
    }

    /**
     * CUTOFFS packets not applied: about an RPC this endpoint does not hold with the sender, or
     * with cutoffs that are not a non-increasing list with a non-zero first entry.
     */
    public long cutoffsIgnored() {
        return cutoffsIgnored;
    }

    /**
     * DATA packets whose bytes differ from bytes of the same message already received at the same
     * offsets; each failed its message as a protocol error.
     */
    public long conflictingDataPackets() {
        return conflictingDataPackets;
    }

    /**
     * Messages given up because the peer asked for more retransmissions than
     * {@value Sender#RETRANSMIT_BUDGET_FACTOR} times their length (at least
     * {@value Sender#RETRANSMIT_BUDGET_FLOOR_BYTES} bytes) in all: a lossy path needs far fewer;
     * forged RESENDs would turn a stored response into an amplifier.
     */
    public long retransmitBudgetExceeded() {
        return retransmitBudgetExceeded;
    }

    /**
     * RTT_PROBE packets this endpoint sent (congestion control {@code rtt}: one when a message is
     * queued for a peer whose last probe is older than the probe interval).
     */
    public long rttProbesSent() {
        return rttProbesSent;
    }

    /** Probes of ours answered by an RTT_RESPS that echoed them: each gave one RTT sample. */
    public long rttProbesAnswered() {
        return rttProbesAnswered;
    }

    /**
     * RTT_PROBE and RTT_RESPS packets received and not acted on: a probe from an address that has
     * not validated (or with congestion control off), a response that echoes no probe outstanding
     * to its sender, or one whose round trip is not plausible. Malformed fields (a timestamp that
     * is not positive, a link rate of 0 or above {@value EngineConfig#MAX_LINK_MBPS}, a ratio above
     * 100%) count as {@link #malformedPackets()} instead.
     */
    public long rttProbesIgnored() {
        return rttProbesIgnored;
    }

    /** Probes of ours given up unanswered (a new one was due, or the peer stopped being probed). */
    public long rttProbesLost() {
        return rttProbesLost;
    }

    /**
     * Smoothed round-trip time (RFC 6298 SRTT) in nanoseconds of each peer with at least one
     * sample, at most {@value HomaEngine#MAX_PEERS_REPORTED} of them; empty unless this is a
     * {@link HomaEngine#countersSnapshot()}.
     */
    public Map<InetSocketAddress, Long> peerSmoothedRttNs() {
        return peerSmoothedRttNs;
    }

    /** A copy that no longer changes. */
    public EngineCounters snapshot() {
        EngineCounters copy = new EngineCounters();
        copy.add(this);
        copy.peerSmoothedRttNs = peerSmoothedRttNs;
        return copy;
    }

    /**
     * The sum of {@code parts}, snapshots of the engines of one endpoint that runs one engine per
     * event loop: every count added, and each peer's smoothed RTT as the engine that last reported
     * it has it (a peer talks to one engine of the group at a time).
     */
    public static EngineCounters sum(Iterable<EngineCounters> parts) {
        EngineCounters total = new EngineCounters();
        Map<InetSocketAddress, Long> rtts = new HashMap<>();
        for (EngineCounters part : parts) {
            total.add(part);
            rtts.putAll(part.peerSmoothedRttNs);
        }
        total.peerSmoothedRttNs = Map.copyOf(rtts);
        return total;
    }

    private void add(EngineCounters other) {
        for (int i = 0; i < packetsSent.length; i++) {
            packetsSent[i] += other.packetsSent[i];
            packetsReceived[i] += other.packetsReceived[i];
        }
        malformedPackets += other.malformedPackets;
        resendsSent += other.resendsSent;
        retransmittedDataPackets += other.retransmittedDataPackets;
        busySent += other.busySent;
        timeouts += other.timeouts;
        duplicatePackets += other.duplicatePackets;
        rpcsStarted += other.rpcsStarted;
        rpcsCompleted += other.rpcsCompleted;
        requestsDelivered += other.requestsDelivered;
        requestsRefused += other.requestsRefused;
        requestsRefusedOverloaded += other.requestsRefusedOverloaded;
        staleEpochRefused += other.staleEpochRefused;
        droppedForBufferSpace += other.droppedForBufferSpace;
        droppedForAddressBudget += other.droppedForAddressBudget;
        peersForgotten += other.peersForgotten;
        peersEvicted += other.peersEvicted;
        droppedForPeerTable += other.droppedForPeerTable;
        incastMarked += other.incastMarked;
        rttSamples += other.rttSamples;
        resendsDeferred += other.resendsDeferred;
        silentPeerProbes += other.silentPeerProbes;
        acksIgnored += other.acksIgnored;
        cutoffsIgnored += other.cutoffsIgnored;
        conflictingDataPackets += other.conflictingDataPackets;
        retransmitBudgetExceeded += other.retransmitBudgetExceeded;
        firstContactResends += other.firstContactResends;
        addressesValidated += other.addressesValidated;
        bytesHeldForValidation += other.bytesHeldForValidation;
        rttProbesSent += other.rttProbesSent;
        rttProbesAnswered += other.rttProbesAnswered;
        rttProbesIgnored += other.rttProbesIgnored;
        rttProbesLost += other.rttProbesLost;
    }

    @Override
    public String toString() {
        return "EngineCounters{sent=" + packetsSentByType() + ", received=" + packetsReceivedByType()
                + ", malformed=" + malformedPackets + ", resends=" + resendsSent
                + ", retransmittedData=" + retransmittedDataPackets + ", busy=" + busySent
                + ", timeouts=" + timeouts + ", duplicates=" + duplicatePackets
                + ", rpcsStarted=" + rpcsStarted + ", rpcsCompleted=" + rpcsCompleted
                + ", requestsDelivered=" + requestsDelivered + ", requestsRefused=" + requestsRefused
                + ", requestsRefusedOverloaded=" + requestsRefusedOverloaded
                + ", staleEpochRefused=" + staleEpochRefused + ", droppedForBufferSpace=" + droppedForBufferSpace
                + ", droppedForAddressBudget=" + droppedForAddressBudget
                + ", peersForgotten=" + peersForgotten
                + ", peersEvicted=" + peersEvicted + ", droppedForPeerTable=" + droppedForPeerTable + ", incastMarked=" + incastMarked
                + ", rttSamples=" + rttSamples + ", resendsDeferred=" + resendsDeferred
                + ", silentPeerProbes=" + silentPeerProbes + ", acksIgnored=" + acksIgnored
                + ", cutoffsIgnored=" + cutoffsIgnored + ", conflictingDataPackets=" + conflictingDataPackets
                + ", retransmitBudgetExceeded=" + retransmitBudgetExceeded
                + ", firstContactResends=" + firstContactResends + ", addressesValidated=" + addressesValidated
                + ", bytesHeldForValidation=" + bytesHeldForValidation
                + ", rttProbesSent=" + rttProbesSent + ", rttProbesAnswered=" + rttProbesAnswered
                + ", rttProbesIgnored=" + rttProbesIgnored + ", rttProbesLost=" + rttProbesLost + "}";
    }
}
