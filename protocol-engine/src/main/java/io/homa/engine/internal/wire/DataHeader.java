package io.homa.engine.internal.wire;

import io.homa.engine.wire.PacketType;
import java.nio.ByteBuffer;

/**
 * Flyweight over a DATA packet (draft-ousterhout-tsvwg-homa, "DATA packets"), offsets from the
 * start of the packet:
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                 Common Header (28 bytes)                      |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                        Message Length                         |  28
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                           Incoming                            |  32
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                       Ack Rpcid (high)                        |  36
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                       Ack Rpcid (low)                         |  40
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |        Ack Server Port        |        Cutoff Version         |  44
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |    Retrans    |     Flags     |          Incast Head          |  48
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                            Offset                             |  52
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                     Message Data ...                          |  56
 * </pre>
 *
 * <p>{@code Flags} sits in a byte the draft reserves; bit 0 is this project's INCAST mark
 * (SIGCOMM 2018 §3.6). {@code Incast Head} sits in the two bytes the draft reserves after it:
 * in a request marked INCAST, the unscheduled bytes its client lets the response start with
 * (1..65,535; 0 = not named, the server uses its own {@code incast-unscheduled-bytes}).
 * Receivers that do not know them ignore both. The payload length is the packet length less
 * {@link #HEADER_LENGTH}.
 */
public final class DataHeader extends HomaHeader {
    public static final int MESSAGE_LENGTH_OFFSET = 28;
    public static final int INCOMING_OFFSET = 32;
    public static final int ACK_RPC_ID_OFFSET = 36;
    public static final int ACK_SERVER_PORT_OFFSET = 44;
    public static final int CUTOFF_VERSION_OFFSET = 46;
    public static final int RETRANS_OFFSET = 48;
    public static final int FLAGS_OFFSET = 49;
    public static final int INCAST_HEAD_OFFSET = 50;
    /** Largest head the {@code Incast Head} field names, bytes. */
    public static final int MAX_INCAST_HEAD_BYTES = 0xFFFF;
    public static final int DATA_OFFSET_OFFSET = 52;
    /** Length in bytes of the DATA header; message data starts here. */
    public static final int HEADER_LENGTH = 56;
    /** Flags bit 0: the request was sent while its client was over its incast threshold. */
    public static final int FLAG_INCAST = 0x01;
    /** Doff value for DATA: header length in 4-byte words, in the high nibble. */
    public static final int DOFF = (HEADER_LENGTH / 4) << 4;

    /**
     * Writes the common header as {@link HomaHeader#writeCommon} does, and zeroes every DATA field
     * after it (so no field carries stale bytes of a reused buffer).
     */
    @Override
    public DataHeader writeCommon(PacketType type, int sourcePort, int destPort, long rpcIdWithSBit) {
        super.writeCommon(type, sourcePort, destPort, rpcIdWithSBit);
        for (int i = COMMON_HEADER_LENGTH; i < HEADER_LENGTH; i += 4) {
            buffer.putInt(offset + i, 0);
        }
        return this;
    }

    /** Total length of the message in bytes; the same in every DATA packet of the message. */
    public int messageLength() {
        return buffer.getInt(offset + MESSAGE_LENGTH_OFFSET);
    }

    public DataHeader messageLength(int lengthBytes) {
        buffer.putInt(offset + MESSAGE_LENGTH_OFFSET, lengthBytes);
        return this;
    }

    /** Initial bytes of the message the sender will transmit without further grants. */
    public int incoming() {
        return buffer.getInt(offset + INCOMING_OFFSET);
    }

    public DataHeader incoming(int bytes) {
        buffer.putInt(offset + INCOMING_OFFSET, bytes);
        return this;
    }

    /** Rpcid of another RPC from this client to this server whose response is complete; 0 = none. */
    public long ackRpcId() {
        return buffer.getLong(offset + ACK_RPC_ID_OFFSET);
    }

    public DataHeader ackRpcId(long rpcId) {
        buffer.putLong(offset + ACK_RPC_ID_OFFSET, rpcId);
        return this;
    }

    /** Server port to which {@link #ackRpcId()} was sent. */
    public int ackServerPort() {
        return Short.toUnsignedInt(buffer.getShort(offset + ACK_SERVER_PORT_OFFSET));
    }

    public DataHeader ackServerPort(int port) {
        buffer.putShort(offset + ACK_SERVER_PORT_OFFSET, (short) port);
        return this;
    }

    /** Version of the receiver's cutoffs that the sender used, 0..65535. */
    public int cutoffVersion() {
        return Short.toUnsignedInt(buffer.getShort(offset + CUTOFF_VERSION_OFFSET));
    }

    public DataHeader cutoffVersion(int version) {
        buffer.putShort(offset + CUTOFF_VERSION_OFFSET, (short) version);
        return this;
    }

    /** Whether this packet was sent in answer to a RESEND. */
    public boolean retransmitted() {
        return buffer.get(offset + RETRANS_OFFSET) != 0;
    }

    public DataHeader retransmitted(boolean value) {
        buffer.put(offset + RETRANS_OFFSET, (byte) (value ? 1 : 0));
        return this;
    }

    /** The flags byte (this project's extension); see {@link #FLAG_INCAST}. */
    public int flags() {
        return Byte.toUnsignedInt(buffer.get(offset + FLAGS_OFFSET));
    }

    public DataHeader flags(int value) {
        buffer.put(offset + FLAGS_OFFSET, (byte) value);
        return this;
    }

    /**
     * In a request marked {@link #FLAG_INCAST}: the unscheduled bytes its client lets the response
     * start with, 1..{@value #MAX_INCAST_HEAD_BYTES}; 0 = not named.
     */
    public int incastHeadBytes() {
        return Short.toUnsignedInt(buffer.getShort(offset + INCAST_HEAD_OFFSET));
    }

    public DataHeader incastHeadBytes(int value) {
        buffer.putShort(offset + INCAST_HEAD_OFFSET, (short) value);
        return this;
    }

    /** Offset within the message of the first byte of data in this packet. */
    public int dataOffset() {
        return buffer.getInt(offset + DATA_OFFSET_OFFSET);
    }

    public DataHeader dataOffset(int value) {
        buffer.putInt(offset + DATA_OFFSET_OFFSET, value);
        return this;
    }


    /** {@inheritDoc} */
    @Override
    public DataHeader wrap(ByteBuffer buffer, int offset) {
        super.wrap(buffer, offset);
        return this;
    }
}
