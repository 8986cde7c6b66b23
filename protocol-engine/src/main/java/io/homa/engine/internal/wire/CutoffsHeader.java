package io.homa.engine.internal.wire;

import java.nio.ByteBuffer;

/**
 * Flyweight over a CUTOFFS packet (draft-ousterhout-tsvwg-homa, "CUTOFFS packets"):
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                 Common Header (28 bytes)                      |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                          Cutoffs[0]                           |  28
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                              ...                              |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                          Cutoffs[7]                           |  56
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |        Cutoff Version         |                                  60
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * <p>Cutoffs are non-increasing; the priority of an unscheduled DATA packet is the largest
 * {@code i} with {@code cutoffs[i] >= messageLength}.
 */
public final class CutoffsHeader extends HomaHeader {
    public static final int CUTOFFS_OFFSET = 28;
    public static final int NUM_PRIORITIES = 8;
    public static final int CUTOFF_VERSION_OFFSET = 60;
    public static final int HEADER_LENGTH = 62;

    /**
     * Cutoff {@code i} (0..7) in bytes of message length. The wire field is unsigned 32-bit;
     * values above {@link Integer#MAX_VALUE} read as negative ints (use
     * {@link Integer#toUnsignedLong(int)}).
     */
    public int cutoff(int i) {
        return buffer.getInt(offset + CUTOFFS_OFFSET + 4 * i);
    }

    public CutoffsHeader cutoff(int i, int lengthBytes) {
        buffer.putInt(offset + CUTOFFS_OFFSET + 4 * i, lengthBytes);
        return this;
    }

    /** Version of these cutoffs, 0..65535. */
    public int cutoffVersion() {
        return Short.toUnsignedInt(buffer.getShort(offset + CUTOFF_VERSION_OFFSET));
    }

    public CutoffsHeader cutoffVersion(int version) {
        buffer.putShort(offset + CUTOFF_VERSION_OFFSET, (short) version);
        return this;
    }


    /** {@inheritDoc} */
    @Override
    public CutoffsHeader wrap(ByteBuffer buffer, int offset) {
        super.wrap(buffer, offset);
        return this;
    }
}
