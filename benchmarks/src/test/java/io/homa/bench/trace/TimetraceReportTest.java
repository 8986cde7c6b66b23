package io.homa.bench.trace;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class TimetraceReportTest {
    private static final List<TimetraceBreakdown.Rpc> RPCS = IntStream.of(500, 100, 400, 350, 200)
            .mapToObj(length -> new TimetraceBreakdown.Rpc(length, 0, 1_000, new long[0]))
            .toList();

    @Test
    void shouldTakeTheDecilesShortestRequestsAsTheTransportCarriedThem() {
        // The decile (3 calls) is cut at 315 B of payload; the RPC layer's envelope made one of them 350 B.
        assertThat(TimetraceReport.messageMaxBytes(RPCS, 315, 3)).isEqualTo(350);
    }

    @Test
    void shouldKeepThePayloadBoundWhereItIsLongerOrTheDecileIsUnknown() {
        assertThat(TimetraceReport.messageMaxBytes(RPCS, 450, 3)).isEqualTo(450);
        assertThat(TimetraceReport.messageMaxBytes(RPCS, 315, null)).isEqualTo(315);
        assertThat(TimetraceReport.messageMaxBytes(RPCS, 315, 6)).as("fewer traced than the decile").isEqualTo(315);
    }
}
