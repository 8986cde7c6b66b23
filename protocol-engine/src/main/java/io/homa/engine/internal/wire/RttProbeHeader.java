package io.homa.engine.internal.wire;

import java.nio.ByteBuffer;

/**
 * Flyweight over an RTT_PROBE or RTT_RESPS packet, this project's extension of the draft after Lu
 * and Zhang, "Leveraging Homa" ({@code rtt_probe_header}, {@code rtt_probe_resp_header}), with the
 * unscheduled ratio the paper also sends in them:
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                 Common Header (28 bytes)                      |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                     Timestamp (ns, 8 bytes)                   |  28
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                        Link (Mbit/s)                          |  36
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |  Unsched. +1  |                 reserved                      |  40
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * The timestamp is the prober's (a response echoes it, so only the prober reads it as a time);
 * the link rate and the unscheduled ratio are the sender's of the packet.
 */
public final class RttProbeHeader extends HomaHeader {
    public static final int TIMESTAMP_OFFSET = 28;
    public static final int LINK_MBPS_OFFSET = 36;
    public static final int UNSCHEDULED_RATIO_OFFSET = 40;
    public static final int HEADER_LENGTH = 44;

    /** The prober's clock when it sent the probe, ns, positive (a response echoes it). */
    public long timestampNs() {
        return buffer.getLong(offset + TIMESTAMP_OFFSET);
    }

    public RttProbeHeader timestampNs(long value) {
        buffer.putLong(offset + TIMESTAMP_OFFSET, value);
        return this;
    }

    /** The sender's link rate, Mbit/s (unsigned on the wire; read as a long so that a forged huge one is seen). */
    public long linkMbps() {
        return Integer.toUnsignedLong(buffer.getInt(offset + LINK_MBPS_OFFSET));
    }

    public RttProbeHeader linkMbps(int value) {
        buffer.putInt(offset + LINK_MBPS_OFFSET, value);
        return this;
    }

    /** The byte as on the wire: {@link UnscheduledRatio#NONE}, or 1 + the percentage (1..101). */
    public int unscheduledRatio() {
        return Byte.toUnsignedInt(buffer.get(offset + UNSCHEDULED_RATIO_OFFSET));
    }

    public RttProbeHeader unscheduledRatio(int wireValue) {
        buffer.put(offset + UNSCHEDULED_RATIO_OFFSET, (byte) wireValue);
        buffer.put(offset + UNSCHEDULED_RATIO_OFFSET + 1, (byte) 0);
        buffer.putShort(offset + UNSCHEDULED_RATIO_OFFSET + 2, (short) 0);
        return this;
    }

    /** {@inheritDoc} */
    @Override
    public RttProbeHeader wrap(ByteBuffer buffer, int offset) {
        super.wrap(buffer, offset);
        return this;
    }
}
