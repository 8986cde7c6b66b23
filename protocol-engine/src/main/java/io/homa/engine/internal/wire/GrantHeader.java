package io.homa.engine.internal.wire;

import java.nio.ByteBuffer;

/**
 * Flyweight over a GRANT packet (draft-ousterhout-tsvwg-homa, "GRANT packets"):
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                 Common Header (28 bytes)                      |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                            Offset                             |  28
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |   Priority    |  Resend All   |                                  32
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 */
public final class GrantHeader extends HomaHeader {
    public static final int GRANT_OFFSET_OFFSET = 28;
    public static final int PRIORITY_OFFSET = 32;
    public static final int RESEND_ALL_OFFSET = 33;
    public static final int HEADER_LENGTH = 34;

    /** The sender may now transmit all bytes of the message below this offset. */
    public int grantOffset() {
        return buffer.getInt(offset + GRANT_OFFSET_OFFSET);
    }

    public GrantHeader grantOffset(int value) {
        buffer.putInt(offset + GRANT_OFFSET_OFFSET, value);
        return this;
    }

    /** Priority, 0..7, for all future DATA packets of the message. */
    public int priority() {
        return Byte.toUnsignedInt(buffer.get(offset + PRIORITY_OFFSET));
    }

    public GrantHeader priority(int value) {
        buffer.put(offset + PRIORITY_OFFSET, (byte) value);
        return this;
    }

    /** Whether the sender should resend the whole message from its start up to the offset. */
    public boolean resendAll() {
        return buffer.get(offset + RESEND_ALL_OFFSET) != 0;
    }

    public GrantHeader resendAll(boolean value) {
        buffer.put(offset + RESEND_ALL_OFFSET, (byte) (value ? 1 : 0));
        return this;
    }


    /** {@inheritDoc} */
    @Override
    public GrantHeader wrap(ByteBuffer buffer, int offset) {
        super.wrap(buffer, offset);
        return this;
    }
}
