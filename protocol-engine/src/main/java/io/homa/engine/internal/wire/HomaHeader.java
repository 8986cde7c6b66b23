package io.homa.engine.internal.wire;

import io.homa.engine.wire.PacketType;
import java.nio.ByteBuffer;

/**
 * Flyweight over the 28-byte common header that starts every Homa packet
 * (draft-ousterhout-tsvwg-homa, "Common Header"). All fields are big-endian; offsets are
 * relative to the start of the packet at {@link #offset()} in the wrapped buffer.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |          Source Port          |       Destination Port        |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                            Offset                             |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                   Reserved                    |     Type      |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |     Doff      |   Reserved    |           Reserved            |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |           Checksum            |        Urgent Pointer         |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                         Rpcid (high)                          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                         Rpcid (low)                         |S|
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * <p>The low bit of the rpcid (S) is 0 in packets from the client and 1 in packets from the
 * server. Subclasses add the type-specific fields that follow. A flyweight holds no data of its
 * own: {@link #wrap(ByteBuffer, int)} points it at a packet, and it can be reused for any number
 * of packets without allocating. Getters do not check bounds beyond those of the buffer; callers
 * check the packet's length against {@code HEADER_LENGTH} first.
 */
public abstract class HomaHeader {
    public static final int SOURCE_PORT_OFFSET = 0;
    public static final int DEST_PORT_OFFSET = 2;
    public static final int SEGMENT_OFFSET_OFFSET = 4;
    /**
     * Bytes 8-10, reserved in the draft: this project's server epoch (24 bits, 0 = none). A server
     * writes its own (a value chosen per process start) in every packet; a client writes the
     * epoch of the server incarnation its RPC is bound to. Receivers that do not know it ignore it.
     */
    public static final int EPOCH_OFFSET = 8;
    /** Largest server epoch: 24 bits, less the value {@link #EPOCH_ASK}. */
    public static final int MAX_EPOCH = 0xFF_FFFE;
    /**
     * {@link #EPOCH_OFFSET} in a client's request DATA or RESEND when it knows no epoch of the server
     * yet (first contact): "I speak epochs; tell me yours". A server of this project never
     * runs a request named so: it asks for the request again with a RESEND that carries its epoch
     * (and its address token), so that every request it runs names its own incarnation. A server
     * that knows only the draft ignores the bytes and serves the request.
     */
    public static final int EPOCH_ASK = 0xFF_FFFF;
    public static final int TYPE_OFFSET = 11;
    public static final int DOFF_OFFSET = 12;
    /**
     * Byte 13, reserved in the draft: this project's reason byte in RPC_UNKNOWN (0: none given, as
     * in the draft; {@link #REASON_SHUTTING_DOWN}, {@link #REASON_OVERLOADED}, ...). Receivers that do not know it ignore it.
     */
    public static final int REASON_OFFSET = 13;
    /** {@link #REASON_OFFSET} in an RPC_UNKNOWN from a server: it is shutting down and refused the request unexecuted. */
    public static final int REASON_SHUTTING_DOWN = 1;
    /**
     * {@link #REASON_OFFSET} in an RPC_UNKNOWN from a server: it is a later incarnation than the
     * one the client's RPC was bound to (its epoch differs), so the request may have executed before
     * the restart and is not executed again.
     */
    public static final int REASON_RESTARTED = 2;
    /**
     * {@link #REASON_OFFSET} in an RPC_UNKNOWN from a server: it gave the RPC up after
     * retransmitting its response more than its retransmission budget allows (the request was
     * executed; the response is lost).
     */
    public static final int REASON_RETRANSMIT_BUDGET = 3;
    /**
     * {@link #REASON_OFFSET} in an RPC_UNKNOWN from a server: it is overloaded (requests in service
     * or queued work over its bounds) and refused the request unexecuted. Unlike
     * {@link #REASON_SHUTTING_DOWN} it says nothing of the server's other RPCs: overload is
     * momentary, so the client keeps sending to it.
     */
    public static final int REASON_OVERLOADED = 4;
    /**
     * Bytes 14-19 (the draft's reserved bytes 14-15, then Checksum and Urgent Pointer, which only
     * TSO and TCP hijacking use; a user-space Homa over UDP uses neither): this project's 48-bit
     * address token (address validation), 0 = none. In a packet from a server
     * (S bit set) it is the server's token for the client's address, a keyed hash that an off-path
     * host cannot compute; in a packet from a client it is the echo of the latest token that
     * server sent it, which proves that the client receives packets sent to its address.
     * Receivers that do not know it ignore it.
     */
    public static final int ADDRESS_TOKEN_OFFSET = 14;
    /** Largest address token: 48 bits. */
    public static final long MAX_ADDRESS_TOKEN = (1L << 48) - 1;
    public static final int CHECKSUM_OFFSET = 16;
    public static final int URGENT_OFFSET = 18;
    public static final int RPC_ID_OFFSET = 20;
    /** Length in bytes of the common header. */
    public static final int COMMON_HEADER_LENGTH = 28;

    /** The S bit: set in the rpcid of packets sent by the server. */
    public static final long FROM_SERVER_BIT = 1L;

    protected ByteBuffer buffer;
    protected int offset;

    /**
     * Points this flyweight at a packet.
     *
     * @param buffer the buffer holding the packet, in big-endian order (the {@code ByteBuffer}
     *     default; fields are read and written in the buffer's order). Its position is not used
     *     or changed; the packet must lie below its limit, or accesses throw
     *     {@link IndexOutOfBoundsException}.
     * @param offset the index of the packet's first byte in {@code buffer}
     * @return this flyweight
     */
    public HomaHeader wrap(ByteBuffer buffer, int offset) {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /** The wrapped buffer. */
    public ByteBuffer buffer() {
        return buffer;
    }

    /** Index of the packet's first byte in the wrapped buffer. */
    public int offset() {
        return offset;
    }

    /** Writes the common header with the given fields and zeros elsewhere; sets the type byte. */
    public HomaHeader writeCommon(PacketType type, int sourcePort, int destPort, long rpcIdWithSBit) {
        for (int i = 0; i < COMMON_HEADER_LENGTH; i += 4) {
            buffer.putInt(offset + i, 0);
        }
        sourcePort(sourcePort);
        destPort(destPort);
        buffer.put(offset + TYPE_OFFSET, (byte) type.code());
        rpcId(rpcIdWithSBit);
        return this;
    }

    /** The server epoch ({@link #EPOCH_OFFSET}), 0..{@value #MAX_EPOCH}; 0 = none. */
    public int epoch() {
        return (Byte.toUnsignedInt(buffer.get(offset + EPOCH_OFFSET)) << 16)
                | (Byte.toUnsignedInt(buffer.get(offset + EPOCH_OFFSET + 1)) << 8)
                | Byte.toUnsignedInt(buffer.get(offset + EPOCH_OFFSET + 2));
    }

    public HomaHeader epoch(int epoch) {
        buffer.put(offset + EPOCH_OFFSET, (byte) (epoch >>> 16));
        buffer.put(offset + EPOCH_OFFSET + 1, (byte) (epoch >>> 8));
        buffer.put(offset + EPOCH_OFFSET + 2, (byte) epoch);
        return this;
    }

    /** The address token ({@link #ADDRESS_TOKEN_OFFSET}), 0..{@link #MAX_ADDRESS_TOKEN}; 0 = none. */
    public long addressToken() {
        return ((long) Short.toUnsignedInt(buffer.getShort(offset + ADDRESS_TOKEN_OFFSET)) << 32)
                | Integer.toUnsignedLong(buffer.getInt(offset + ADDRESS_TOKEN_OFFSET + 2));
    }

    /** Writes the address token; only its low 48 bits are kept. */
    public HomaHeader addressToken(long token) {
        buffer.putShort(offset + ADDRESS_TOKEN_OFFSET, (short) (token >>> 32));
        buffer.putInt(offset + ADDRESS_TOKEN_OFFSET + 2, (int) token);
        return this;
    }

    /** The reason byte ({@link #REASON_OFFSET}); 0 unless a sender set it. */
    public int reason() {
        return Byte.toUnsignedInt(buffer.get(offset + REASON_OFFSET));
    }

    public HomaHeader reason(int reason) {
        buffer.put(offset + REASON_OFFSET, (byte) reason);
        return this;
    }

    /** Source (Homa = UDP) port, 0..65535. */
    public int sourcePort() {
        return Short.toUnsignedInt(buffer.getShort(offset + SOURCE_PORT_OFFSET));
    }

    public HomaHeader sourcePort(int port) {
        buffer.putShort(offset + SOURCE_PORT_OFFSET, (short) port);
        return this;
    }

    /** Destination (Homa = UDP) port, 0..65535. */
    public int destPort() {
        return Short.toUnsignedInt(buffer.getShort(offset + DEST_PORT_OFFSET));
    }

    public HomaHeader destPort(int port) {
        buffer.putShort(offset + DEST_PORT_OFFSET, (short) port);
        return this;
    }

    /** Common-header offset field: for DATA, the offset of the first byte in the packet (TSO). */
    public int segmentOffset() {
        return buffer.getInt(offset + SEGMENT_OFFSET_OFFSET);
    }

    public HomaHeader segmentOffset(int value) {
        buffer.putInt(offset + SEGMENT_OFFSET_OFFSET, value);
        return this;
    }

    /** Unsigned type code; see {@link PacketType#fromCode(int)}. */
    public int typeCode() {
        return Byte.toUnsignedInt(buffer.get(offset + TYPE_OFFSET));
    }

    /** The packet type, or {@code null} when the type byte is not a Homa type. */
    public PacketType type() {
        return PacketType.fromCode(typeCode());
    }

    /** Doff byte: header length in 4-byte words in its high nibble (TSO only; receivers ignore it). */
    public int doff() {
        return Byte.toUnsignedInt(buffer.get(offset + DOFF_OFFSET));
    }

    public HomaHeader doff(int value) {
        buffer.put(offset + DOFF_OFFSET, (byte) value);
        return this;
    }

    /** Rpcid as on the wire, including the S bit. */
    public long rpcId() {
        return buffer.getLong(offset + RPC_ID_OFFSET);
    }

    public HomaHeader rpcId(long rpcIdWithSBit) {
        buffer.putLong(offset + RPC_ID_OFFSET, rpcIdWithSBit);
        return this;
    }

    /** Whether the S bit is set: the packet was sent by the RPC's server. */
    public boolean fromServer() {
        return (rpcId() & FROM_SERVER_BIT) != 0;
    }

    /** The client's rpcid: the wire rpcid with the S bit cleared. */
    public long clientRpcId() {
        return rpcId() & ~FROM_SERVER_BIT;
    }
}
