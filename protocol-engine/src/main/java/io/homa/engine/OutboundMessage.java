package io.homa.engine;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Sender's state of one message (a request on the client, a response on the server): what has
 * been sent, what the receiver has granted, and ranges it asked to have sent again.
 */
final class OutboundMessage {
    /** The message's bytes, in order across these arrays ({@link MessageBytes}), none of them copied. */
    private final byte[][] parts;
    /** {@code partEnds[i]}: the message offset just past {@code parts[i]}. */
    private final int[] partEnds;
    final int lengthBytes;
    /** Where the message goes. */
    final Peer peer;
    /** Rpcid as on the wire (S bit set for a response). */
    final long wireRpcId;
    /** The RPC this is the request of (client side), or null. */
    final ClientRpc clientRpc;
    /** The RPC this is the response of (server side), or null. */
    final ServerRpc serverRpc;
    /** Bytes below this offset may be sent (unscheduled bytes plus GRANTs, RESENDs imply grants). */
    int grantedOffset;
    /** Bytes sent before any GRANT: these go at the unscheduled priority, the rest at the granted one. */
    final int unscheduledBytes;
    /** Next byte never sent so far. */
    int nextOffset;
    /** Priority from the last GRANT, used for scheduled bytes. */
    int grantPriority;
    /** Extension flags for the DATA header (INCAST). */
    int flags;
    /** A request marked INCAST: the head its response may start with (the DATA header's Incast Head). */
    int incastHeadBytes;
    /** A request whose first packet has left: whether it is marked INCAST is settled. */
    boolean incastDecided;
    /** Set when the message no longer needs sending (RPC finished, cancelled or reclaimed). */
    boolean abandoned;
    /** Whether the message sits in the engine's SRPT queue. */
    boolean queued;
    /** Whether the message sits in the engine's retransmit queue. */
    boolean retransmitQueued;
    /** When the last packet holding the message's first byte left (meaningful once {@code nextOffset > 0}). */
    long startSentNs;
    /** Order of creation, the SRPT tie-break (older first). */
    final long sequence;

    /**
     * Bytes that may still be queued for retransmission: at first {@link SenderFeedback#RETRANSMIT_BUDGET_FACTOR}
     * times the length or {@link SenderFeedback#RETRANSMIT_BUDGET_FLOOR_BYTES}, whichever is more.
     */
    private long retransmitBudgetBytes;

    private int[] retransmitStarts = new int[2];
    private int[] retransmitEnds = new int[2];
    private int retransmitCount;

    /**
     * @param parts the message's bytes in order, at most {@code Integer.MAX_VALUE} in all: kept, not copied
     * @param unscheduledBytes bytes sent before any GRANT, already rounded up to whole packets
     */
    OutboundMessage(byte[][] parts, int unscheduledBytes, long sequence, Peer peer, long wireRpcId,
            ClientRpc clientRpc, ServerRpc serverRpc) {
        this.parts = parts;
        this.partEnds = new int[parts.length];
        int end = 0;
        for (int i = 0; i < parts.length; i++) {
            end += parts[i].length;
            partEnds[i] = end;
        }
        this.peer = peer;
        this.wireRpcId = wireRpcId;
        this.clientRpc = clientRpc;
        this.serverRpc = serverRpc;
        this.lengthBytes = end;
        this.grantedOffset = Math.min(lengthBytes, unscheduledBytes);
        this.unscheduledBytes = this.grantedOffset;
        this.sequence = sequence;
        this.retransmitBudgetBytes = (long) SenderFeedback.RETRANSMIT_BUDGET_FACTOR
                * Math.max(lengthBytes, SenderFeedback.RETRANSMIT_BUDGET_FLOOR_BYTES);
    }

    /** Copies the message's bytes {@code [offset, offset + length)} into {@code to} at {@code toIndex}. */
    void copyTo(int offset, int length, ByteBuffer to, int toIndex) {
        int part = firstPartEndingAfter(offset);
        while (length > 0) {
            int partStart = partEnds[part] - parts[part].length;
            int n = Math.min(length, partEnds[part] - offset);
            to.put(toIndex, parts[part], offset - partStart, n);
            toIndex += n;
            offset += n;
            length -= n;
            part++;
        }
    }

    /** The index of the part holding the message's byte at {@code offset} (binary search; empty parts skipped). */
    private int firstPartEndingAfter(int offset) {
        int low = 0;
        int high = partEnds.length - 1;
        while (low < high) {
            int middle = (low + high) >>> 1;
            if (partEnds[middle] > offset) {
                high = middle;
            } else {
                low = middle + 1;
            }
        }
        return low;
    }

    /** Bytes never sent: the SRPT key (fewest first). */
    int remainingBytes() {
        return lengthBytes - nextOffset;
    }

    boolean fullySent() {
        return nextOffset == lengthBytes && retransmitCount == 0;
    }

    boolean hasSendable() {
        return !abandoned && (retransmitCount > 0 || nextOffset < grantedOffset);
    }

    /** Whether bytes never sent before may go now. */
    boolean hasNewSendable() {
        return !abandoned && nextOffset < grantedOffset;
    }

    /** Raises the granted offset (never lowers it); returns whether it grew. */
    boolean grant(int offset, int priority) {
        grantPriority = priority;
        int clamped = Math.min(offset, lengthBytes);
        if (clamped > grantedOffset) {
            grantedOffset = clamped;
            return true;
        }
        return false;
    }

    /**
     * Queues {@code [offset, offset + length)} to be sent again (the part already sent) and
     * treats the range as granted (draft: a RESEND implies permission to send the bytes). The
     * bytes queued are charged to the retransmission budget ({@link #retransmitBudgetExhausted()}).
     *
     * @return whether any of the range had been sent before (so something will go out again);
     *     {@code false} when none of it was ever sent: the sender has yet to get to it
     */
    boolean retransmit(int offset, int length) {
        if (offset < 0 || length <= 0 || offset >= lengthBytes) {
            return false;
        }
        int end = (int) Math.min((long) offset + length, lengthBytes);
        grant(end, grantPriority);
        int sentEnd = Math.min(end, nextOffset);
        if (sentEnd <= offset) {
            return false;
        }
        for (int i = 0; i < retransmitCount; i++) {
            if (retransmitStarts[i] <= offset && retransmitEnds[i] >= sentEnd) {
                return true; // already queued
            }
        }
        if (retransmitCount == retransmitStarts.length) {
            retransmitStarts = Arrays.copyOf(retransmitStarts, retransmitCount * 2);
            retransmitEnds = Arrays.copyOf(retransmitEnds, retransmitCount * 2);
        }
        retransmitBudgetBytes -= sentEnd - offset;
        retransmitStarts[retransmitCount] = offset;
        retransmitEnds[retransmitCount] = sentEnd;
        retransmitCount++;
        return true;
    }

    /**
     * Whether the ranges queued by {@link #retransmit} have passed the budget (see
     * {@link SenderFeedback#RETRANSMIT_BUDGET_FACTOR}): the caller gives the message up.
     */
    boolean retransmitBudgetExhausted() {
        return retransmitBudgetBytes < 0;
    }

    boolean hasRetransmit() {
        return retransmitCount > 0;
    }

    int retransmitStart() {
        return retransmitStarts[0];
    }

    int retransmitEnd() {
        return retransmitEnds[0];
    }

    /** Marks the first {@code bytes} of the first retransmit range as sent again. */
    void consumeRetransmit(int bytes) {
        retransmitStarts[0] += bytes;
        if (retransmitStarts[0] >= retransmitEnds[0]) {
            retransmitCount--;
            System.arraycopy(retransmitStarts, 1, retransmitStarts, 0, retransmitCount);
            System.arraycopy(retransmitEnds, 1, retransmitEnds, 0, retransmitCount);
        }
    }

    void clearRetransmits() {
        retransmitCount = 0;
    }
}
