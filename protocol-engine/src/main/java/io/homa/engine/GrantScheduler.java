package io.homa.engine;

import java.util.ArrayList;
import java.util.Arrays;
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
 *
 * <p>By section of the draft:
 * <ul>
 *   <li>"Flow control": a sender transmits a message's unscheduled bytes, then only what the
 *       receiver grants; a chosen message is granted up to its received bytes plus
 *       {@code rttBytes} (whole packets), in steps of at least {@code grantIncrementBytes} unless
 *       that finishes the message or nothing is outstanding, and the incoming (granted or
 *       unscheduled bytes not yet received, {@link #totalIncomingBytes()}) never passes
 *       {@code maxIncomingBytes}.
 *   <li>"Overcommitment": up to {@code maxOvercommit} messages are granted to at once, so that
 *       a sender that stalls leaves others to fill the link, and at most
 *       {@code maxGrantsPerPeer} of them come from one sender.
 *   <li>"SRPT and starvation": the chosen are those with the fewest bytes remaining; the FIFO
 *       share grants the oldest waiting message however long it is, at the highest scheduled
 *       priority, a window and two increments ahead of what has arrived at most.
 * </ul>
 *
 * <p>Structure: a message "needs grants" while it is neither ended nor complete and its granted
 * offset is below its length. Granted offsets and received bytes only grow and an ended message
 * stays ended, so a message that stops needing grants never needs them again. The messages that
 * need grants are held three ways:
 * <ul>
 *   <li>per peer, in SRPT order ({@link Peer#grantable});
 *   <li>in {@link #candidates}, the first {@code maxGrantsPerPeer} of each peer's order, in SRPT
 *       order. Walking all waiting messages in SRPT order and skipping those whose peer already
 *       has {@code maxGrantsPerPeer} chosen skips exactly the messages that are not among their
 *       peer's first {@code maxGrantsPerPeer}, so the first {@code maxOvercommit} candidates are
 *       the same messages in the same order, found without skipping any;
 *   <li>in {@link #arrivals}, by {@link InboundMessage#sequence}, for the FIFO share.
 * </ul>
 *
 * <p>Costs, with n messages needing grants: adding, removing or changing the key of a message
 * costs O(log n) comparisons plus array shifts (at most one change in its peer's order and two
 * in the candidates), so a received DATA packet does so too; {@link #schedule} looks at no more
 * than {@code maxOvercommit} candidates plus the oldest message ({@link #messagesExamined()}),
 * whatever n. Nothing is allocated once the arrays have grown to the number of messages.
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
     * Each peer's first {@code maxGrantsPerPeer} messages that need grants, fewest bytes remaining
     * first, older first among equals. Not a TreeSet: each received packet takes its message out
     * and puts it back, which must not allocate.
     */
    private final InboundOrder candidates = new InboundOrder();
    /** All messages that need grants, oldest first. */
    private final ArrivalOrder arrivals = new ArrivalOrder();
    private final List<InboundMessage> chosen = new ArrayList<>();
    /** Granted or unscheduled bytes not yet received, over all inbound messages. */
    private long totalIncomingBytes;
    private double fifoCreditBytes;
    private long sequence;
    /** Messages looked at by {@link #schedule} (candidates and the oldest), for tests of its cost. */
    private long messagesExamined;

    GrantScheduler(EngineConfig config, int rttBytes, int payloadBytes, int grantIncrementBytes) {
        this.maxOvercommit = config.maxOvercommit();
        this.maxGrantsPerPeer = config.maxGrantsPerPeer();
        // More incoming than every chosen message's window only queues in the network: at a slow
        // link the configured cap would let a switch port's buffer overflow.
        this.maxIncomingBytes = (int) Math.min(config.maxIncomingBytes(), (long) maxOvercommit * rttBytes);
        this.fifoGrantFraction = config.fifoGrantFraction();
        this.rttBytes = rttBytes;
        this.payloadBytes = payloadBytes;
        this.grantIncrementBytes = grantIncrementBytes;
    }

    /** A new inbound message; its unscheduled bytes count as incoming at once (draft "Incoming"). */
    void added(InboundMessage message) {
        message.sequence = sequence++;
        totalIncomingBytes += message.grantedOffset;
        if (needsGrants(message)) {
            arrivals.append(message);
            addGrantable(message);
        }
    }

    /** The message's granted offset rose without a GRANT of ours (its sender said more is unscheduled). */
    void raised(InboundMessage message, int grantedOffset) {
        if (grantedOffset > message.grantedOffset) {
            if (message.stalled) {
                message.grantedOffset = grantedOffset; // counted once bytes of it arrive
                return;
            }
            removeGrantable(message);
            totalIncomingBytes += grantedOffset - message.grantedOffset;
            message.grantedOffset = grantedOffset;
            track(message);
        }
    }

    /**
     * The message's sender ignored what we authorised for two RTOs (we are asking for it again):
     * until bytes of it arrive, its outstanding bytes no longer count as incoming and it is no
     * longer a candidate for grants, so that a sender that never sends (a forged first packet, a
     * crashed or paused peer) cannot hold {@code maxIncomingBytes} or an overcommitment slot.
     * When it sends again, its outstanding bytes count again at once, so the total may
     * pass {@code maxIncomingBytes} by what such senders were granted.
     */
    void stalled(InboundMessage message) {
        if (message.stalled || message.ended) {
            return;
        }
        removeGrantable(message);
        arrivals.remove(message);
        totalIncomingBytes -= Math.max(0, message.grantedOffset - message.receivedBytes());
        message.stalled = true;
    }

    /** Takes the message out of the orders before its received bytes (its SRPT key) change. */
    void beforeReceive(InboundMessage message) {
        removeGrantable(message);
    }

    /** {@code addedBytes} new bytes arrived (all below the granted offset). */
    void received(InboundMessage message, int addedBytes) {
        if (message.stalled) {
            if (addedBytes == 0) {
                return;
            }
            message.stalled = false;
            totalIncomingBytes += Math.max(0, message.grantedOffset - message.receivedBytes());
            if (needsGrants(message)) {
                arrivals.insert(message);
            }
        } else {
            totalIncomingBytes -= addedBytes;
        }
        track(message);
    }

    /** The message completed or was dropped: what was granted but not received no longer comes. */
    void ended(InboundMessage message) {
        removeGrantable(message);
        arrivals.remove(message);
        if (!message.stalled) {
            totalIncomingBytes -= Math.max(0, message.grantedOffset - message.receivedBytes());
        }
        message.grantedOffset = Math.max(message.grantedOffset, (int) message.receivedBytes());
        message.ended = true;
    }

    long totalIncomingBytes() {
        return totalIncomingBytes;
    }

    /** Messages looked at by {@link #schedule} so far: at most {@code maxOvercommit + 1} a call. */
    long messagesExamined() {
        return messagesExamined;
    }

    /**
     * Issues the grants the policy calls for now.
     *
     * @param scheduledLevels priority levels for scheduled packets: 0..scheduledLevels-1
     */
    void schedule(int scheduledLevels, GrantSink sink) {
        if (candidates.isEmpty()) {
            return;
        }
        // Chosen before any grant: a grant moves its message in the orders.
        chosen.clear();
        int active = Math.min(maxOvercommit, candidates.size());
        for (int rank = 0; rank < active; rank++) {
            chosen.add(candidates.get(rank));
        }
        messagesExamined += active;
        for (int rank = 0; rank < active; rank++) {
            InboundMessage message = chosen.get(rank);
            int priority = priorityFor(rank, active, scheduledLevels);
            long target = Math.min(message.lengthBytes, roundUpToPackets(message.receivedBytes() + windowBytes(message)));
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
            grantOldest(sink, scheduledLevels - 1);
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

    /**
     * The FIFO share: one increment to the oldest waiting message, at the highest scheduled
     * priority (Linux Homa's {@code homa_grant_check_fifo}), unless it already has a window and
     * two increments granted and not received. At the lowest priority its packets waited behind
     * every SRPT message at the switch, for hundreds of milliseconds at 80% load, so the share
     * piled up there unserved until the port dropped it, and the oldest message starved all the
     * same; and a share granted faster than it arrives only adds to that queue. A share with no
     * message to take it is not saved up for a burst later.
     */
    private void grantOldest(GrantSink sink, int priority) {
        InboundMessage oldest = arrivals.first();
        if (oldest == null || oldest.grantedOffset - oldest.receivedBytes() >= windowBytes(oldest) + 2L * grantIncrementBytes) {
            fifoCreditBytes = 0;
            return;
        }
        messagesExamined++;
        long room = maxIncomingBytes - totalIncomingBytes;
        if (room < payloadBytes) {
            return; // keep the credit: the cap holds for FIFO grants too
        }
        int offset = (int) Math.min(oldest.lengthBytes,
                (long) oldest.grantedOffset + Math.min(grantIncrementBytes, room));
        fifoCreditBytes -= offset - oldest.grantedOffset;
        grant(oldest, offset, priority, sink);
    }

    /**
     * How far ahead of what has arrived a message is granted: its sender's window from RTT-based
     * congestion control once that peer has been measured ({@link PeerCongestion#grantWindowBytes}),
     * else the global {@code rttBytes}.
     */
    private int windowBytes(InboundMessage message) {
        int perPeer = message.peer == null ? 0 : message.peer.congestion.grantWindowBytes;
        return perPeer > 0 ? perPeer : rttBytes;
    }

    private void grant(InboundMessage message, int offset, int priority, GrantSink sink) {
        removeGrantable(message);
        totalIncomingBytes += offset - message.grantedOffset;
        message.grantedOffset = offset;
        track(message);
        sink.grant(message, offset, priority);
    }

    private static boolean needsGrants(InboundMessage message) {
        return !message.ended && message.grantedOffset < message.lengthBytes && !message.complete();
    }

    /**
     * Puts a message taken out of the orders back after a change, or lets it go for good once it
     * needs no more grants (it never needs them again).
     */
    private void track(InboundMessage message) {
        if (needsGrants(message)) {
            addGrantable(message);
        } else {
            arrivals.remove(message);
        }
    }

    /**
     * Adds the message to its peer's order and, if it lands among the peer's first
     * {@code maxGrantsPerPeer}, to the candidates, where it takes the place of the peer's message
     * it pushes out of them.
     */
    private void addGrantable(InboundMessage message) {
        InboundOrder peerOrder = message.peer.grantable;
        int rank = peerOrder.insert(message);
        if (rank < 0 || rank >= maxGrantsPerPeer) {
            return;
        }
        candidates.add(message);
        if (peerOrder.size() > maxGrantsPerPeer) {
            candidates.remove(peerOrder.get(maxGrantsPerPeer));
        }
    }

    /**
     * Removes the message, if held, from its peer's order and the candidates; if it was among its
     * peer's first {@code maxGrantsPerPeer}, the peer's next message moves up into the candidates.
     */
    private void removeGrantable(InboundMessage message) {
        InboundOrder peerOrder = message.peer.grantable;
        int rank = peerOrder.delete(message);
        if (rank < 0 || rank >= maxGrantsPerPeer) {
            return;
        }
        candidates.remove(message);
        if (peerOrder.size() >= maxGrantsPerPeer) {
            candidates.add(peerOrder.get(maxGrantsPerPeer - 1));
        }
    }

    private long roundUpToPackets(long bytes) {
        return (bytes + payloadBytes - 1) / payloadBytes * payloadBytes;
    }

    /**
     * Messages in arrival order ({@link InboundMessage#sequence}), oldest first: a sorted array
     * used from both ends. Messages arrive in sequence order, so adding appends; removing finds
     * the message by binary search and closes the gap from the nearer end, so taking out the
     * oldest costs O(1). Nothing is allocated once the array has grown to the number of messages.
     */
    static final class ArrivalOrder {
        private InboundMessage[] messages = new InboundMessage[8];
        /** The messages held are {@code messages[head..tail)}. */
        private int head;
        private int tail;

        int size() {
            return tail - head;
        }

        /** The oldest message held, or null. */
        InboundMessage first() {
            return head == tail ? null : messages[head];
        }

        /** Adds a message newer (higher sequence) than every one held. */
        void append(InboundMessage message) {
            if (head < tail && messages[tail - 1].sequence >= message.sequence) {
                throw new IllegalArgumentException("sequence " + message.sequence + " is not the newest");
            }
            if (tail == messages.length) {
                makeRoomAtTail();
            }
            messages[tail++] = message;
        }

        /** With the array full up to its end: slides the messages down, or doubles the array. */
        private void makeRoomAtTail() {
            int size = tail - head;
            if (size * 2 <= messages.length) {
                // At most half full: slide down, amortised over the appends that filled the rest.
                System.arraycopy(messages, head, messages, 0, size);
                Arrays.fill(messages, size, tail, null);
            } else {
                InboundMessage[] grown = new InboundMessage[messages.length * 2];
                System.arraycopy(messages, head, grown, 0, size);
                messages = grown;
            }
            head = 0;
            tail = size;
        }

        /** Adds a message that may be older than some held (one that stalled and came back), in order. */
        void insert(InboundMessage message) {
            if (head == tail || messages[tail - 1].sequence < message.sequence) {
                append(message);
                return;
            }
            if (search(message.sequence) >= 0) {
                return;
            }
            if (tail == messages.length) {
                makeRoomAtTail();
            }
            int low = head;
            int high = tail;
            while (low < high) {
                int mid = (low + high) >>> 1;
                if (messages[mid].sequence < message.sequence) {
                    low = mid + 1;
                } else {
                    high = mid;
                }
            }
            System.arraycopy(messages, low, messages, low + 1, tail - low);
            messages[low] = message;
            tail++;
        }

        /** Removes the message if held; returns whether it was. */
        boolean remove(InboundMessage message) {
            int index = search(message.sequence);
            if (index < 0) {
                return false;
            }
            if (index - head < tail - 1 - index) {
                System.arraycopy(messages, head, messages, head + 1, index - head);
                messages[head++] = null;
            } else {
                System.arraycopy(messages, index + 1, messages, index, tail - 1 - index);
                messages[--tail] = null;
            }
            return true;
        }

        /** Index of the message with this sequence, or -1. */
        private int search(long sequence) {
            int low = head;
            int high = tail - 1;
            while (low <= high) {
                int mid = (low + high) >>> 1;
                long probe = messages[mid].sequence;
                if (probe < sequence) {
                    low = mid + 1;
                } else if (probe > sequence) {
                    high = mid - 1;
                } else {
                    return mid;
                }
            }
            return -1;
        }
    }
}
