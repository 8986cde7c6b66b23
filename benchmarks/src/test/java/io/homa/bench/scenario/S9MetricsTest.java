package io.homa.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.CongestionControl;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** S9's figures from what the agents measured and the rack's counters moved, and its table. */
class S9MetricsTest {
    /** 20 calls of 100..2,000 B: round trips 1..20 ms, the shortest calls the slowest. */
    private static OpenLoop.Result homa() {
        int[] lengths = new int[20];
        long[] rtts = new long[20];
        for (int i = 0; i < 20; i++) {
            lengths[i] = (i + 1) * 100;
            rtts[i] = (20 - i) * 1_000_000L;
        }
        return new OpenLoop.Result(lengths, rtts, 20, 22, 1, 1, 2.0, "TimeoutException", Map.of(), 20, 900_000, 1_000_000);
    }

    @Test
    void shouldGiveAchievedOverOfferedInBytes() {
        assertThat(S9Metrics.achievedFraction(homa())).isEqualTo(0.9);
        OpenLoop.Result nothingOffered = new OpenLoop.Result(new int[0], new long[0], 0, 0, 0, 0, 1.0, null, Map.of(), 0, 0, 0);
        assertThat(S9Metrics.achievedFraction(nothingOffered)).isNaN();
    }

    @Test
    void shouldGiveDropsOverPacketsSent() {
        assertThat(S9Metrics.dropsFraction(10_000, 7)).isEqualTo(0.0007);
        assertThat(S9Metrics.dropsFraction(10_000, 0)).isZero();
        assertThat(S9Metrics.dropsFraction(0, 0)).isNaN();
    }

    @Test
    void shouldTakeTheP99OfTheShortestDecileAndTheGoodput() {
        // The shortest tenth: the two calls of 100 and 200 B, 20 and 19 ms.
        assertThat(S9Metrics.shortestDecileP99Us(homa())).isBetween(19_000.0, 20_000.0);
        // 900,000 B answered in 2 s.
        assertThat(S9Metrics.goodputGbps(homa())).isEqualTo(0.0036);
    }

    @Test
    void shouldAskForCongestionControlInTheOnRunsOnly() {
        assertThat(S9Metrics.RUNS).containsExactly("cc_on_with_tcp", "cc_off_with_tcp", "cc_on_alone", "incast_cc_on",
                "incast_cc_off");
        assertThat(S9Metrics.RUNS.stream().map(S9Metrics::congestionControl).toList())
                .containsExactly(CongestionControl.RTT, CongestionControl.OFF, CongestionControl.RTT, CongestionControl.RTT,
                        CongestionControl.OFF);
        assertThat(S9Metrics.RUNS.stream().filter(S9Metrics::withTcp).toList())
                .containsExactly("cc_on_with_tcp", "cc_off_with_tcp");
        assertThat(S9Metrics.RUNS.stream().filter(S9Metrics::incast).toList()).containsExactly("incast_cc_on", "incast_cc_off");
    }

    @Test
    void shouldHoldTheIssuesFiguresInEveryRun() {
        OpenLoop.Result tcp = new OpenLoop.Result(new int[] {1_000}, new long[] {1_000_000}, 1, 1, 0, 0, 2.0, null, Map.of(),
                1, 960, 1_000);
        Map<String, Object> split = S9Metrics.run("cc_off_with_tcp", homa(), 10.0, tcp, 12.0,
                new S9Metrics.Packets(50_000, 5), new S9Metrics.Packets(40_000, 40), 45, 12, null);
        Map<String, Object> alone = S9Metrics.run("cc_on_alone", homa(), 10.0, null, 0, new S9Metrics.Packets(50_000, 0),
                null, 0, -1, null);

        assertThat(split).containsEntry("congestion_control", "off").containsEntry("with_tcp", true)
                .containsEntry("homa_achieved_fraction", 0.9).containsEntry("tcp_achieved_fraction", 0.96)
                .containsEntry("homa_drops_fraction", 0.0001).containsEntry("homa_switch_drops", 5L)
                .containsEntry("tcp_packets_lost", 40L).containsEntry("switch_qdisc_drops", 45L).containsEntry("queued_packets_at_start", 12L)
                .containsEntry("goodput_gbps", 0.0036).containsEntry("homa_failures", 1L).containsKey("short_p99_us");
        assertThat(alone).containsEntry("congestion_control", "rtt").containsEntry("with_tcp", false)
                .containsEntry("tcp_achieved_fraction", null).containsEntry("homa_drops_fraction", 0.0)
                .doesNotContainKey("tcp_packets_lost").doesNotContainKey("tcp_offered_mbps");
        assertThat(alone.keySet()).containsAll(S9Metrics.REQUIRED);
    }

    @Test
    void shouldLeaveTheDropsUnknownWithoutTheRacksCounters() {
        Map<String, Object> m = S9Metrics.run("incast_cc_on", homa(), 10.0, null, 0, null, null, -1, -1, null);

        assertThat(m).containsEntry("homa_drops_fraction", null).doesNotContainKey("switch_qdisc_drops")
                .doesNotContainKey("homa_switch_drops");
        assertThat(S9Metrics.tableRows(List.of(m)).get(0).get(6)).isEqualTo("n/a");
    }

    @Test
    void shouldWriteOneRowPerRunWithWhatItAskedFor() {
        Map<String, Object> cpu = new LinkedHashMap<>();
        cpu.put("cores", List.of(0.93, 0.41));
        cpu.put("cpu_bound", true);
        OpenLoop.Result tcp = new OpenLoop.Result(new int[] {1_000}, new long[] {1_000_000}, 1, 1, 0, 0, 2.0, null, Map.of(),
                1, 960, 1_000);
        List<Map<String, Object>> runs = new ArrayList<>();
        runs.add(S9Metrics.run("cc_on_with_tcp", homa(), 10.0, tcp, 12.0, new S9Metrics.Packets(50_000, 5),
                new S9Metrics.Packets(40_000, 40), 45, 12, cpu));
        runs.add(S9Metrics.run("incast_cc_off", homa(), 10.0, null, 0, new S9Metrics.Packets(80_000, 800), null, 800, -1, null));

        List<List<String>> rows = S9Metrics.tableRows(runs);

        assertThat(rows).hasSize(2);
        assertThat(rows.get(0)).hasSize(S9Metrics.TABLE_HEADER.size());
        assertThat(rows.get(0).subList(0, 8)).containsExactly("cc_on_with_tcp", "rtt", "yes", "4", "90.0%", "96.0%",
                "5 of 50000 (0.010%) ±12", "40 of 40000");
        assertThat(rows.get(0).get(12)).isEqualTo("93% / 41% (CPU-bound)");
        assertThat(rows.get(1).subList(0, 8)).containsExactly("incast_cc_off", "off", "no", "4", "90.0%", "–",
                "800 of 80000 (1.000%)", "–");
        assertThat(rows.get(1).get(11)).isEqualTo("20 (1)");
        assertThat(rows.get(1).get(12)).isEqualTo("n/a");
    }
}
