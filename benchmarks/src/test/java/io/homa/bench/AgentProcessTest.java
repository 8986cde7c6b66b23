package io.homa.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.bench.scenario.OpenLoop;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/** What the load agents report, as the load generator reads and merges it. */
class AgentProcessTest {
    @Test
    void shouldReadWhatAnAgentPrints() {
        OpenLoop.Result result = new OpenLoop.Result(new int[] {100, 2_000}, new long[] {5_000, 70_000}, 2, 3, 1, 4, 10.0,
                "TimeoutException");
        String line = JsonMapper.builder().build().writeValueAsString(result);

        OpenLoop.Result read = JsonMapper.builder().build().readValue(line, OpenLoop.Result.class);

        assertThat(read.lengthsBytes()).containsExactly(100, 2_000);
        assertThat(read.rttNs()).containsExactly(5_000L, 70_000L);
        assertThat(read.recorded()).isEqualTo(2);
        assertThat(read.issuedInWindow()).isEqualTo(3);
        assertThat(read.failed()).isEqualTo(1);
        assertThat(read.skipped()).isEqualTo(4);
        assertThat(read.firstError()).isEqualTo("TimeoutException");
    }

    @Test
    void shouldMergeEveryCallOfEveryAgentAndSumTheirCounts() {
        OpenLoop.Result a = new OpenLoop.Result(new int[] {1, 2}, new long[] {10, 20}, 2, 2, 0, 1, 10.0, null);
        OpenLoop.Result b = new OpenLoop.Result(new int[] {3}, new long[] {30}, 1, 2, 1, 0, 10.0, "boom");

        OpenLoop.Result merged = AgentProcess.merge(List.of(a, b));

        assertThat(merged.lengthsBytes()).containsExactly(1, 2, 3);
        assertThat(merged.rttNs()).containsExactly(10L, 20L, 30L);
        assertThat(merged.recorded()).isEqualTo(3);
        assertThat(merged.issuedInWindow()).isEqualTo(4);
        assertThat(merged.failed()).isEqualTo(1);
        assertThat(merged.skipped()).isEqualTo(1);
        assertThat(merged.firstError()).isEqualTo("boom");
        assertThat(merged.achievedPerSecond()).isEqualTo(0.3);
    }

    @Test
    void shouldSumTheBytesAnsweredAndOfferedAndTheFailuresByKind() {
        OpenLoop.Result a = new OpenLoop.Result(new int[] {1_000}, new long[] {10}, 1, 2, 1, 0, 10.0, null,
                Map.of("timeout", 1L), 1, 1_000, 3_000);
        OpenLoop.Result b = new OpenLoop.Result(new int[] {500}, new long[] {30}, 1, 1, 0, 0, 10.0, null,
                Map.of("timeout", 0L), 2, 2_500, 500);

        OpenLoop.Result merged = AgentProcess.merge(List.of(a, b));

        assertThat(merged.answeredInWindow()).isEqualTo(3);
        assertThat(merged.answeredBytesInWindow()).isEqualTo(3_500);
        assertThat(merged.offeredBytesInWindow()).isEqualTo(3_500);
        assertThat(merged.failedInWindowByKind()).containsEntry("timeout", 1L);
        String line = JsonMapper.builder().build().writeValueAsString(merged);
        OpenLoop.Result read = JsonMapper.builder().build().readValue(line, OpenLoop.Result.class);
        assertThat(read.answeredBytesInWindow()).isEqualTo(3_500);
        assertThat(read.offeredBytesInWindow()).isEqualTo(3_500);
    }
}
