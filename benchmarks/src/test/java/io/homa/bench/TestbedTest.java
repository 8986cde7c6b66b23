package io.homa.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.workloads.Workload;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The testbed's description as the load generator reads it: hosts, counters, the S7 rate rule. */
class TestbedTest {
    private static final Testbed RACK = new Testbed("homa", "198.18.0", 4, 1500, 400, 300_000);

    @Test
    void shouldPutTheClientOnHostOneAndServersOnTheOthersInTurn() {
        assertThat(RACK.address(1)).isEqualTo("198.18.0.1");
        assertThat(List.of(RACK.serverHost(0), RACK.serverHost(1), RACK.serverHost(2), RACK.serverHost(3)))
                .containsExactly(2, 3, 4, 2);
        assertThat(RACK.hostPrefix(3)).containsExactly("ip", "netns", "exec", "homa-h3");
    }

    @Test
    void shouldSumSentAndDroppedPacketsPerPriorityClass() {
        String tc = """
                qdisc htb 1: root refcnt 3 r2q 1 default 0x10 direct_packets_stat 0 direct_qlen 1000
                 Sent 43176997 bytes 58117 pkt (dropped 9, overlimits 23317 requeues 0)
                 backlog 0b 0p requeues 0
                qdisc bfifo 17: parent 1:17 limit 37500b
                 Sent 8700436 bytes 15969 pkt (dropped 2, overlimits 0 requeues 0)
                 backlog 0b 0p requeues 0
                qdisc bfifo 10: parent 1:10 limit 37500b
                 Sent 32871657 bytes 40915 pkt (dropped 31, overlimits 0 requeues 0)
                 backlog 0b 0p requeues 0
                """;
        Map<Integer, long[]> totals = new LinkedHashMap<>();
        Testbed.addQdiscCounters(tc, totals);
        Testbed.addQdiscCounters(tc, totals);

        assertThat(totals).containsOnlyKeys(0, 7);
        assertThat(totals.get(7)).containsExactly(2 * 15_969L, 4);
        assertThat(totals.get(0)).as("the root's own counters are not a class").containsExactly(2 * 40_915L, 62);
        Map<Integer, long[]> later = Map.of(0, new long[] {2 * 40_915L + 5, 63}, 7, new long[] {2 * 15_969L, 4});
        assertThat(io.homa.bench.scenario.ScenarioRunner.classDelta(totals, later).get(0)).containsExactly(5, 1);
    }

    @Test
    void shouldLoadTheLinkToTheAskedFractionWithTheWorkloadsMeanLength() {
        Workload w4 = Workload.load("w4");
        double rate = LoadGenerator.linkRate(w4, RACK, 0.8);
        double wireBitsPerSecond = rate * (w4.meanLengthBytes() * (1 + 80.0 / 1420) + 80) * 8;
        assertThat(wireBitsPerSecond / 400e6).isBetween(0.79, 0.81);
        assertThat(LoadGenerator.linkRate(w4, RACK, 0.5)).isLessThan(rate);
    }

    @Test
    void shouldSayHowToBringTheTestbedUpWhenItIsDown() {
        assertThatThrownBy(() -> Testbed.load("nosuchbed"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("testbed.sh up");
    }

    private static final String SNMP = """
            Ip: Forwarding DefaultTTL InReceives InHdrErrors
            Ip: 2 64 1000 0
            Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors
            Tcp: 1 200 120000 -1 15 14 6 1 0 5000 7000 40 0 1 0
            Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
            Udp: 9000 3 20 12000 20 5 0 0 0
            UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
            UdpLite: 0 0 0 0 0 0 0 0 0
            """;

    @Test
    void shouldCountUdpReceivedAsReadDroppedAtTheSocketOrWithoutOne() {
        Testbed.ProtocolCounts counts = Testbed.ProtocolCounts.parseSnmp(SNMP);

        // TCP: OutSegs leaves retransmissions out, RetransSegs counts them.
        assertThat(counts).isEqualTo(new Testbed.ProtocolCounts(12_000, 9_023, 7_040, 5_000));
        assertThat(counts.udpLost()).isEqualTo(2_977);
        assertThat(counts.tcpLost()).isEqualTo(2_040);
    }

    @Test
    void shouldGiveTheCountsBetweenTwoReadings() {
        Testbed.ProtocolCounts before = new Testbed.ProtocolCounts(100, 90, 50, 50);
        Testbed.ProtocolCounts after = new Testbed.ProtocolCounts(1_100, 1_089, 250, 248);

        Testbed.ProtocolCounts window = after.minus(before);

        assertThat(window).isEqualTo(new Testbed.ProtocolCounts(1_000, 999, 200, 198));
        assertThat(window.udpLost()).isEqualTo(1);
        assertThat(window.tcpLost()).isEqualTo(2);
    }

    @Test
    void shouldReadNoCountsWhereASectionIsMissing() {
        assertThat(Testbed.ProtocolCounts.parseSnmp("Ip: Forwarding\nIp: 2\n")).isNull();
        assertThat(Testbed.ProtocolCounts.parseSnmp(SNMP.replace("Udp: 9000", "Udp: x9000"))).isNull();
    }

    @Test
    void shouldReadTheClassesOfEveryPortFromOneTcWithoutADevice() {
        // tc -s qdisc show (no dev) names each qdisc's device.
        String tc = """
                qdisc htb 1: dev sw1 root refcnt 2 r2q 1 default 0x10 direct_packets_stat 0 direct_qlen 1000
                 Sent 100 bytes 2 pkt (dropped 3, overlimits 0 requeues 0)
                qdisc bfifo 10: dev sw1 parent 1:10 limit 37500b
                 Sent 100 bytes 2 pkt (dropped 3, overlimits 0 requeues 0)
                qdisc bfifo 10: dev sw2 parent 1:10 limit 37500b
                 Sent 900 bytes 6 pkt (dropped 40, overlimits 0 requeues 0)
                qdisc bfifo 17: dev sw2 parent 1:17 limit 37500b
                 Sent 50 bytes 1 pkt (dropped 1, overlimits 0 requeues 0)
                """;
        Map<Integer, long[]> totals = new LinkedHashMap<>();
        Testbed.addQdiscCounters(tc, totals);

        assertThat(totals.get(0)).containsExactly(8, 43);
        assertThat(totals.get(7)).containsExactly(1, 1);
    }

    @Test
    void shouldSumThePacketsQueuedInEveryClass() {
        String tc = """
                qdisc htb 1: dev sw2 root refcnt 2 r2q 1 default 0x10 direct_packets_stat 0 direct_qlen 1000
                 Sent 100 bytes 2 pkt (dropped 3, overlimits 0 requeues 0)
                 backlog 45000b 30p requeues 0
                qdisc bfifo 10: dev sw2 parent 1:10 limit 37500b
                 Sent 100 bytes 2 pkt (dropped 3, overlimits 0 requeues 0)
                 backlog 36000b 24p requeues 0
                qdisc bfifo 17: parent 1:17 limit 37500b
                 Sent 50 bytes 1 pkt (dropped 1, overlimits 0 requeues 0)
                 backlog 9000b 6p requeues 0
                """;

        assertThat(Testbed.backlogPackets(tc)).isEqualTo(30);
    }
}
