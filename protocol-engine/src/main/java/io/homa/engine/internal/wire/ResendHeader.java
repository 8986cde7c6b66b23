package io.homa.engine.internal.wire;

import java.nio.ByteBuffer;

/**
 * Flyweight over a RESEND packet (draft-ousterhout-tsvwg-homa, "RESEND packets"):
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                 Common Header (28 bytes)                      |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                            Offset                             |  28
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                            Length                             |  32
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |   Priority    |                                                  36
 * +-+-+-+-+-+-+-+-+
 * </pre>
 */
public final class ResendHeader extends HomaHeader {
    public static final int RESEND_OFFSET_OFFSET = 28;
    public static final int LENGTH_OFFSET = 32;
    public static final int PRIORITY_OFFSET = 36;
    public static final int HEADER_LENGTH = 37;

    /** Offset within the message of the first byte to retransmit. */
    public int resendOffset() {
        return buffer.getInt(offset + RESEND_OFFSET_OFFSET);
    }

    public ResendHeader resendOffset(int value) {
        buffer.putInt(offset + RESEND_OFFSET_OFFSET, value);
        return this;
    }

    /** Number of bytes to retransmit. */
    public int length() {
        return buffer.getInt(offset + LENGTH_OFFSET);
    }

    public ResendHeader length(int lengthBytes) {
        buffer.putInt(offset + LENGTH_OFFSET, lengthBytes);
        return this;
    }

    /** Priority, 0..7, for the retransmitted packets. */
    public int priority() {
        return Byte.toUnsignedInt(buffer.get(offset + PRIORITY_OFFSET));
    }

    public ResendHeader priority(int value) {
        buffer.put(offset + PRIORITY_OFFSET, (byte) value);
        return this;
    }


    /** {@inheritDoc} */
    @Override
    public ResendHeader wrap(ByteBuffer buffer, int offset) {
        super.wrap(buffer, offset);
        return this;
    }
}
