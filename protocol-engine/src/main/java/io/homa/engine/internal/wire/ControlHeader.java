package io.homa.engine.internal.wire;

import java.nio.ByteBuffer;

/**
 * Flyweight for the packets that are only a common header: RPC_UNKNOWN, BUSY and NEED_ACK
 * (draft-ousterhout-tsvwg-homa, "RPC_UNKNOWN packets", "BUSY packets", "NEED_ACK packets").
 */
public final class ControlHeader extends HomaHeader {
    public static final int HEADER_LENGTH = COMMON_HEADER_LENGTH;


    /** {@inheritDoc} */
    @Override
    public ControlHeader wrap(ByteBuffer buffer, int offset) {
        super.wrap(buffer, offset);
        return this;
    }
}
