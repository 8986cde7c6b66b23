package io.homa.engine.internal.wire;

import java.nio.ByteBuffer;

/**
 * Flyweight over an ACK packet (draft-ousterhout-tsvwg-homa, "ACK packets"):
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                 Common Header (28 bytes)                      |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |           Num_Acks            |       Ack Rpcid (high) ...       28
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |  ... {Ack Rpcid (8), Server Port (2)} x Num_Acks                 30
 * </pre>
 *
 * <p>The packet acknowledges the RPC named by its common header (rpcid, at the destination port)
 * and, in addition, each of the {@code Num_Acks} listed ones; so {@code Num_Acks = 0} still
 * acknowledges one RPC.
 */
public final class AckHeader extends HomaHeader {
    public static final int NUM_ACKS_OFFSET = 28;
    public static final int ACKS_OFFSET = 30;
    /** Bytes per listed ack: rpcid (8) and server port (2). */
    public static final int ACK_LENGTH = 10;
    /** Length of an ACK packet with no listed acks. */
    public static final int HEADER_LENGTH = 30;

    /** Length in bytes of an ACK packet that lists {@code numAcks} acks. */
    public static int packetLength(int numAcks) {
        return HEADER_LENGTH + ACK_LENGTH * numAcks;
    }

    /** Number of listed acks, 0..65535 (the packet's length must be checked against it). */
    public int numAcks() {
        return Short.toUnsignedInt(buffer.getShort(offset + NUM_ACKS_OFFSET));
    }

    public AckHeader numAcks(int count) {
        buffer.putShort(offset + NUM_ACKS_OFFSET, (short) count);
        return this;
    }

    /** Rpcid of listed ack {@code i}. */
    public long ackRpcId(int i) {
        return buffer.getLong(offset + ACKS_OFFSET + ACK_LENGTH * i);
    }

    /** Server port of listed ack {@code i}. */
    public int ackServerPort(int i) {
        return Short.toUnsignedInt(buffer.getShort(offset + ACKS_OFFSET + ACK_LENGTH * i + 8));
    }

    /** Writes listed ack {@code i}. */
    public AckHeader ack(int i, long rpcId, int serverPort) {
        int at = offset + ACKS_OFFSET + ACK_LENGTH * i;
        buffer.putLong(at, rpcId);
        buffer.putShort(at + 8, (short) serverPort);
        return this;
    }


    /** {@inheritDoc} */
    @Override
    public AckHeader wrap(ByteBuffer buffer, int offset) {
        super.wrap(buffer, offset);
        return this;
    }
}
