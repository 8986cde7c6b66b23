package io.homa.engine.internal.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.wire.PacketType;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class RttProbeHeaderTest {

    @Test
    void shouldLayOutTheFieldsAfterTheCommonHeader() {
        ByteBuffer buffer = ByteBuffer.allocate(RttProbeHeader.HEADER_LENGTH + 4);
        RttProbeHeader probe = new RttProbeHeader().wrap(buffer, 4);
        probe.writeCommon(PacketType.RTT_PROBE, 5000, 4000, 0);
        probe.timestampNs(0x0102030405060708L).linkMbps(25_000).unscheduledRatio(UnscheduledRatio.toWire(37));

        assertThat(buffer.get(4 + HomaHeader.TYPE_OFFSET)).isEqualTo((byte) 0x20);
        assertThat(buffer.getLong(4 + 28)).isEqualTo(0x0102030405060708L);
        assertThat(buffer.getInt(4 + 36)).isEqualTo(25_000);
        assertThat(buffer.get(4 + 40)).isEqualTo((byte) 38);
        assertThat(buffer.get(4 + 41)).isZero();
        RttProbeHeader read = new RttProbeHeader().wrap(buffer, 4);
        assertThat(read.type()).isEqualTo(PacketType.RTT_PROBE);
        assertThat(read.timestampNs()).isEqualTo(0x0102030405060708L);
        assertThat(read.linkMbps()).isEqualTo(25_000);
        assertThat(UnscheduledRatio.percent(read.unscheduledRatio())).isEqualTo(37);
    }

    @Test
    void shouldReadAHugeLinkRateAsUnsigned() {
        ByteBuffer buffer = ByteBuffer.allocate(RttProbeHeader.HEADER_LENGTH);
        RttProbeHeader probe = new RttProbeHeader().wrap(buffer, 0);
        probe.linkMbps(-1);
        assertThat(probe.linkMbps()).isEqualTo(0xFFFF_FFFFL);
    }

    @Test
    void shouldEncodeTheRatioWithZeroForNone() {
        assertThat(UnscheduledRatio.toWire(-1)).isEqualTo(UnscheduledRatio.NONE);
        assertThat(UnscheduledRatio.toWire(0)).isEqualTo(1);
        assertThat(UnscheduledRatio.toWire(100)).isEqualTo(101);
        assertThat(UnscheduledRatio.valid(101)).isTrue();
        assertThat(UnscheduledRatio.valid(102)).isFalse();
    }
}
