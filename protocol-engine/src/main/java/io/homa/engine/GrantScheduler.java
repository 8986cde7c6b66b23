package io.homa.engine;

import java.util.ArrayList;
import java.util.List;

/**
 * The receiver's grant policy (draft "Flow control", "Overcommitment", "SRPT and starvation";
 * SIGCOMM 2018 §3.4-§3.5): among inbound messages that still need grants, the
 * {@code maxOvercommit} with the fewest bytes remaining (at most {@code maxGrantsPerPeer} from one
 * sender) each keep about {@code rttBytes} granted ahead of what has arrived, while the total
 * incoming over all inbound messages stays under {@code maxIncomingBytes}; a
 * {@code fifoGrantFraction} of granted bytes goes to the oldest message so that nothing starves.
 * Grant priorities: one level per active message, the lowest scheduled levels first, the
 * shortest message highest (paper §3.4).
 */
final class GrantScheduler {

    /** Where GRANTs go. */
    interface GrantSink {
        void grant(InboundMessage message, int offset, int priority);
    }

    private final int maxOvercommit;
    private final int maxGrantsPerPeer;
    private final long maxIncomingBytes;
    private final double fifoGrantFraction;
    private final int rttBytes;
    private final int payloadBytes;
    private final int grantIncrementBytes;

    /**
     * Messages that need grants, fewest bytes remaining first, older first among equals. Not a
     * TreeSet: each received packet takes its message out and puts it back, which must not allocate.
     */
    private final InboundOrder waiting = new InboundOrder();
    private final List<InboundMessage> chosen = new ArrayList<>();
    /** Granted or unscheduled bytes not yet received, over all inbound messages. */
    private long totalIncomingBytes;
    private double fifoCreditBytes;
    private long pass;
    private long sequence;

    GrantScheduler(EngineConfig config, int rttBytes, int payloadBytes, int grantIncrementBytes) {
        this.maxOvercommit = config.maxOvercommit();
        this.maxGrantsPerPeer = config.maxGrantsPerPeer();
        this.maxIncomingBytes = config.maxIncomingBytes();
        this.fifoGrantFraction = config.fifoGrantFraction();
        this.rttBytes = rttBytes;
        this.payloadBytes = payloadBytes;
        this.grantIncrementBytes = grantIncrementBytes;
    }

    /** A new inbound message; its unscheduled bytes count as incoming at once (draft "Incoming"). */
    void added(InboundMessage message) {
        message.sequence = sequence++;
        totalIncomingBytes += message.grantedOffset;
        track(message);
    }

    /** The message's granted offset rose without a GRANT of ours (its sender said more is unscheduled). */
    void raised(InboundMessage message, int grantedOffset) {
        if (grantedOffset > message.grantedOffset) {
            waiting.remove(message);
            totalIncomingBytes += grantedOffset - message.grantedOffset;
            message.grantedOffset = grantedOffset;
            track(message);
        }
    }

    /** Takes the message out of the order before its received bytes change. */
    void beforeReceive(InboundMessage message) {
        waiting.remove(message);
    }

    /** {@code addedBytes} new bytes arrived (all below the granted offset). */
    void received(InboundMessage message, int addedBytes) {
        totalIncomingBytes -= addedBytes;
        track(message);
    }

    /** The message completed or was dropped: what was granted but not received no longer comes. */
    void ended(InboundMessage message) {
        waiting.remove(message);
        totalIncomingBytes -= Math.max(0, message.grantedOffset - message.receivedBytes());
        message.grantedOffset = Math.max(message.grantedOffset, (int) message.receivedBytes());
        message.ended = true;
    }

    private void track(InboundMessage message) {
        if (!message.ended && message.grantedOffset < message.lengthBytes && !message.complete()) {
            waiting.add(message);
        }
    }

    long totalIncomingBytes() {
        return totalIncomingBytes;
    }

    /**
     * Issues the grants the policy calls for now.
     *
     * @param scheduledLevels priority levels for scheduled packets: 0..scheduledLevels-1
     */
    void schedule(int scheduledLevels, GrantSink sink) {
        if (waiting.isEmpty()) {
            return;
        }
        pass++;
        chosen.clear();
        for (int i = 0; i < waiting.size(); i++) {
            InboundMessage message = waiting.get(i);
            if (chosen.size() == maxOvercommit) {
                break;
            }
            Peer peer = message.peer;
            if (peer.grantPass != pass) {
                peer.grantPass = pass;
                peer.grantsThisPass = 0;
            }
            if (peer.grantsThisPass >= maxGrantsPerPeer) {
                continue;
            }
            peer.grantsThisPass++;
            chosen.add(message);
        }
        int active = chosen.size();
        for (int rank = 0; rank < active; rank++) {
            InboundMessage message = chosen.get(rank);
            int priority = priorityFor(rank, active, scheduledLevels);
            long target = Math.min(message.lengthBytes, roundUpToPackets(message.receivedBytes() + rttBytes));
            long increase = target - message.grantedOffset;
            if (increase <= 0) {
                continue;
            }
            long room = maxIncomingBytes - totalIncomingBytes;
            if (room <= 0) {
                break;
            }
            if (increase > room) {
                increase = room;
            }
            boolean nothingOutstanding = message.receivedBytes() >= message.grantedOffset;
            if (increase < grantIncrementBytes && message.grantedOffset + increase < message.lengthBytes
                    && !nothingOutstanding) {
                continue; // not worth a packet yet
            }
            grant(message, (int) (message.grantedOffset + increase), priority, sink);
            fifoCreditBytes += increase * fifoGrantFraction;
        }
        if (fifoCreditBytes >= grantIncrementBytes) {
            grantOldest(sink);
        }
    }

    /**
     * Draft "Priorities": with {@code active <= levels}, the {@code active} lowest levels, shortest
     * message highest; with more, the shortest {@code levels - 1} get a level each and the rest
     * share level 0.
     */
    static int priorityFor(int rank, int active, int levels) {
        if (active <= levels) {
            return active - 1 - rank;
        }
        return rank < levels - 1 ? levels - 1 - rank : 0;
    }

    /** The FIFO share: one increment to the oldest waiting message, at the lowest priority. */
    private void grantOldest(GrantSink sink) {
        InboundMessage oldest = null;
        for (int i = 0; i < waiting.size(); i++) {
            InboundMessage message = waiting.get(i);
            if (oldest == null || message.sequence < oldest.sequence) {
                oldest = message;
            }
        }
        if (oldest == null) {
            return;
        }
        long room = maxIncomingBytes - totalIncomingBytes;
        if (room < payloadBytes) {
            return; // keep the credit: the cap holds for FIFO grants too
        }
        int offset = (int) Math.min(oldest.lengthBytes,
                (long) oldest.grantedOffset + Math.min(grantIncrementBytes, room));
        fifoCreditBytes -= offset - oldest.grantedOffset;
        grant(oldest, offset, 0, sink);
    }

    private void grant(InboundMessage message, int offset, int priority, GrantSink sink) {
        waiting.remove(message);
        totalIncomingBytes += offset - message.grantedOffset;
        message.grantedOffset = offset;
        track(message);
        sink.grant(message, offset, priority);
    }

    private long roundUpToPackets(long bytes) {
        return (bytes + payloadBytes - 1) / payloadBytes * payloadBytes;
    }
}
