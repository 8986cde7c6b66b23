package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The pacer on virtual time: nothing here sleeps or reads a clock. */
class PacerTest {
    private static final long SECOND_NS = 1_000_000_000L;

    /**
     * A sender with an endless backlog of 64 KiB datagrams for one simulated second: it sends while
     * it has credit, then sleeps until {@link Pacer#nextSendNs}. Clock origins include negative
     * ones and one that wraps past {@link Long#MAX_VALUE} mid-run.
     */
    @ParameterizedTest(name = "clock origin {0}")
    @ValueSource(longs = {0L, -123_456_789_000L, Long.MAX_VALUE - SECOND_NS / 2, Long.MIN_VALUE + 1})
    void shouldSendAtTheLinkRate(long originNs) {
        int datagramBytes = 64 * 1024;
        Pacer pacer = new Pacer(2_000, 50_000, originNs);
        long nowNs = originNs;
        long wireBytes = 0;
        int wakeUps = 0;
        while (nowNs - originNs < SECOND_NS) {
            while (pacer.hasCredit(nowNs)) {
                pacer.charge(datagramBytes);
                wireBytes += datagramBytes + EngineConfig.IP_UDP_HEADER_BYTES + Pacer.ETHERNET_FRAMING_BYTES;
            }
            long wakeNs = pacer.nextSendNs(nowNs);
            assertThat(wakeNs - nowNs).as("wait").isGreaterThanOrEqualTo(Pacer.MIN_WAIT_NS);
            nowNs = wakeNs;
            wakeUps++;
        }
        // 2,000 Mbit/s for one second: 250,000,000 bytes on the wire.
        assertThat((double) wireBytes).isCloseTo(250_000_000.0, within(2_500_000.0));
        assertThat(wakeUps).as("one wake-up per datagram at most").isLessThanOrEqualTo(4_000);
    }

    @Test
    void shouldSendAtTheLinkRateWithSmallPacketsAndFewWakeUps() {
        Pacer pacer = new Pacer(10_000, 50_000, 42);
        long nowNs = 42;
        long wireBytes = 0;
        int wakeUps = 0;
        while (nowNs - 42 < SECOND_NS / 10) {
            while (pacer.hasCredit(nowNs)) {
                pacer.charge(1_472);
                wireBytes += 1_500 + Pacer.ETHERNET_FRAMING_BYTES;
            }
            nowNs = pacer.nextSendNs(nowNs);
            wakeUps++;
        }
        // 10,000 Mbit/s for 100 ms: 125,000,000 bytes (81,274 frames of 1,538 bytes), with a wake-up per quarter
        // bucket (12.5 µs, plus the last packet's overshoot of up to 1 packet): not one per packet.
        assertThat((double) wireBytes).isCloseTo(125_000_000.0, within(1_250_000.0));
        assertThat(wakeUps).isBetween(7_300, 8_000);
    }

    @Test
    void shouldHoldAtMostMaxNicQueueNsOfCreditAfterAnIdleGap() {
        long originNs = -5_000L;
        Pacer pacer = new Pacer(2_000, 50_000, originNs);
        long maxBytes = 50_000L * 2_000 / 8_000; // 50 µs at 2 Gbit/s: 12,500 bytes
        assertThat(pacer.maxCreditBytes()).isEqualTo(maxBytes);
        assertThat(pacer.creditBytes()).as("starts full").isEqualTo(maxBytes);

        pacer.hasCredit(originNs);
        pacer.charge(60_000 - EngineConfig.IP_UDP_HEADER_BYTES - Pacer.ETHERNET_FRAMING_BYTES);
        assertThat(pacer.creditBytes()).isEqualTo(maxBytes - 60_000);

        for (long gapNs : new long[] {1_000L, 10 * SECOND_NS, 3_600 * SECOND_NS, Long.MAX_VALUE / 2}) {
            long nowNs = originNs + gapNs;
            pacer.hasCredit(nowNs);
            assertThat(pacer.creditBytes()).as("after an idle gap of %d ns", gapNs).isLessThanOrEqualTo(maxBytes);
            originNs = nowNs;
        }
        assertThat(pacer.creditBytes()).isEqualTo(maxBytes);

        // After the gap, only a bucketful goes at once.
        long nowNs = originNs;
        long sentBytes = 0;
        while (pacer.hasCredit(nowNs)) {
            pacer.charge(1_000 - EngineConfig.IP_UDP_HEADER_BYTES - Pacer.ETHERNET_FRAMING_BYTES);
            sentBytes += 1_000;
        }
        assertThat(sentBytes).isEqualTo(13_000); // 12,500 of credit: 13 packets leave, the 13th on 500
        assertThat(pacer.creditBytes()).isEqualTo(-500);
    }

    @Test
    void shouldEarnExactlyTheLinkRate() {
        Pacer pacer = new Pacer(8, 1_000_000_000L, 0); // 8 Mbit/s: one byte per microsecond
        pacer.hasCredit(0);
        pacer.charge(1_000_000 - EngineConfig.IP_UDP_HEADER_BYTES - Pacer.ETHERNET_FRAMING_BYTES);
        assertThat(pacer.creditBytes()).isZero();
        pacer.hasCredit(1_000);
        assertThat(pacer.creditBytes()).isEqualTo(1);
        pacer.hasCredit(500_000_000L);
        assertThat(pacer.creditBytes()).isEqualTo(500_000);
        pacer.hasCredit(499_000_000L); // out of order: earns nothing, loses nothing
        assertThat(pacer.creditBytes()).isEqualTo(500_000);
        pacer.hasCredit(5 * SECOND_NS);
        assertThat(pacer.creditBytes()).as("capped at a second of transmission").isEqualTo(1_000_000);
    }

    @Test
    void shouldSendAPacketLargerThanTheBucketAndComeBackWhenTheWantedCreditIsEarned() {
        long originNs = Long.MAX_VALUE - 100_000; // wraps during the wait
        Pacer pacer = new Pacer(2_000, 50_000, originNs); // bucket: 12,500 bytes
        int datagramBytes = 65_507;
        assertThat(pacer.hasCredit(originNs)).isTrue();
        pacer.charge(datagramBytes);
        long creditBytes = 12_500 - 65_535 - Pacer.ETHERNET_FRAMING_BYTES;
        assertThat(pacer.creditBytes()).as("negative after a packet larger than the bucket").isEqualTo(creditBytes);
        assertThat(pacer.hasCredit(originNs)).isFalse();

        // Wanted: a quarter of the bucket (12.5 µs, 3,125 bytes), more than 10 µs' worth.
        long wakeNs = pacer.nextSendNs(originNs);
        long expectedWaitNs = (3_125 - creditBytes) * 8_000 / 2_000; // 4 ns per byte at 2 Gbit/s
        assertThat(wakeNs - originNs).isEqualTo(expectedWaitNs);
        assertThat(wakeNs).as("wrapped past Long.MAX_VALUE").isNegative();

        Pacer probe = new Pacer(2_000, 50_000, originNs);
        probe.hasCredit(originNs);
        probe.charge(datagramBytes);
        probe.hasCredit(wakeNs - 1);
        assertThat(probe.creditBytes()).as("one ns early").isLessThan(3_125);
        assertThat(pacer.hasCredit(wakeNs)).isTrue();
        assertThat(pacer.creditBytes()).isEqualTo(3_125);
        assertThat(pacer.nextSendNs(wakeNs)).as("credit now: send now").isEqualTo(wakeNs);
    }

    @Test
    void shouldWaitTenMicrosecondsOfCreditOrTheWholeBucketIfSmaller() {
        // Bucket of 20 µs at 1,000 Mbit/s (2,500 bytes); a quarter is 5 µs, so 10 µs is wanted.
        Pacer pacer = new Pacer(1_000, 20_000, 0);
        pacer.hasCredit(0);
        pacer.charge(2_500 - EngineConfig.IP_UDP_HEADER_BYTES - Pacer.ETHERNET_FRAMING_BYTES);
        assertThat(pacer.creditBytes()).isZero();
        assertThat(pacer.hasCredit(0)).isFalse();
        assertThat(pacer.nextSendNs(0)).isEqualTo(10_000);

        // Bucket of 5 µs (625 bytes): 10 µs would overflow it, so the whole bucket is wanted.
        Pacer small = new Pacer(1_000, 5_000, 0);
        small.hasCredit(0);
        small.charge(625 - EngineConfig.IP_UDP_HEADER_BYTES - Pacer.ETHERNET_FRAMING_BYTES);
        assertThat(small.nextSendNs(0)).isEqualTo(5_000);
    }

    @Test
    void shouldWaitAtLeastOneMicrosecond() {
        // A bucket of 1 ns at 1,000 Mbit/s: the 28 header bytes and 38 of framing of an empty
        // datagram are earned back in 528 ns, but the wake-up comes no sooner than 1 µs.
        Pacer pacer = new Pacer(1_000, 1, 0);
        pacer.hasCredit(0);
        pacer.charge(0);
        assertThat(pacer.creditBytes()).isEqualTo(-28 - Pacer.ETHERNET_FRAMING_BYTES);
        assertThat(pacer.nextSendNs(0)).isEqualTo(Pacer.MIN_WAIT_NS);
        assertThat(pacer.nextSendNs(-77)).as("from the caller's now").isEqualTo(-77 + Pacer.MIN_WAIT_NS);
    }

    @Test
    void shouldAlwaysHaveCreditWhenDisabled() {
        Pacer pacer = new Pacer(0, 50_000, Long.MIN_VALUE);
        assertThat(pacer.enabled()).isFalse();
        for (int i = 0; i < 10_000; i++) {
            assertThat(pacer.hasCredit(Long.MIN_VALUE)).isTrue();
            pacer.charge(65_507);
        }
        assertThat(pacer.creditBytes()).isEqualTo(Long.MAX_VALUE);
        assertThat(pacer.nextSendNs(17)).isEqualTo(17);
        assertThat(new Pacer(1, 50_000, 0).enabled()).isTrue();
    }

    @Test
    void shouldNotOverflowOnEndlessCharges() {
        Pacer pacer = new Pacer(1_000_000, 10_000_000, 0);
        for (int i = 0; i < 1_000_000; i++) {
            pacer.charge(Integer.MAX_VALUE);
        }
        assertThat(pacer.creditBytes()).isNegative();
        assertThat(pacer.hasCredit(1_000)).isFalse();
        long wakeNs = pacer.nextSendNs(1_000);
        assertThat(wakeNs).as("the deficit is repaid, however long it takes").isGreaterThan(SECOND_NS);
        assertThat(pacer.hasCredit(wakeNs)).isTrue();
    }

    @Test
    void shouldLetOnePacketMessagesBypass() {
        assertThat(Pacer.URGENT_MESSAGE_BYTES).isEqualTo(1_416);
        assertThat(Pacer.bypasses(1)).isTrue();
        assertThat(Pacer.bypasses(1_000)).isTrue();
        assertThat(Pacer.bypasses(1_416)).isTrue();
        assertThat(Pacer.bypasses(1_417)).isFalse();
        assertThat(Pacer.bypasses(1_500)).isFalse();
        assertThat(Pacer.bypasses(1_000_000)).isFalse();
    }

    @Test
    void shouldRejectBadSettings() {
        assertThatThrownBy(() -> new Pacer(-1, 50_000, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("linkMbps");
        assertThatThrownBy(() -> new Pacer(1_000_001, 50_000, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Pacer(2_000, 0, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxNicQueueNs");
        Pacer pacer = new Pacer(2_000, 50_000, 0);
        assertThatThrownBy(() -> pacer.charge(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldHoldAtLeastTwoFullPacketsAtSlowLinksAndLeaveFastOnesAlone() {
        EngineConfig slow = EngineConfig.builder().linkMbps(100).build();
        // Two 1,538-byte frames (1,472 B of UDP payload, 28 of IP/UDP, 38 of framing) at 100 Mbit/s.
        assertThat(Pacer.bucketNs(slow)).isEqualTo(2 * 1_538 * 80L);
        assertThat(new Pacer(100, Pacer.bucketNs(slow)).maxCreditBytes()).isEqualTo(2 * 1_538);
        assertThat(Pacer.bucketNs(EngineConfig.builder().linkMbps(10_000).build())).as("two packets fit in 50 us")
                .isEqualTo(EngineConfig.DEFAULT_MAX_NIC_QUEUE_NS);
        assertThat(Pacer.bucketNs(EngineConfig.builder().linkMbps(25_000).mtuBytes(65_535).build()))
                .isEqualTo(EngineConfig.DEFAULT_MAX_NIC_QUEUE_NS);
        assertThat(Pacer.bucketNs(EngineConfig.builder().linkMbps(1).build())).as("capped")
                .isEqualTo(EngineConfig.MAX_MAX_NIC_QUEUE_NS);
        assertThat(Pacer.bucketNs(EngineConfig.builder().linkMbps(0).build())).isEqualTo(EngineConfig.DEFAULT_MAX_NIC_QUEUE_NS);
    }
}
