package io.homa.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** How long an S5 workload's window lasts with --s5-min-calls. */
class S5WindowTest {
    @Test
    void shouldKeepThePlansWindowWhenOff() {
        assertThat(S5Window.measureMs(800, 0, 1.0)).isEqualTo(800);
        assertThat(S5Window.measureMs(10_000, 0, 150_000)).isEqualTo(10_000);
    }

    @Test
    void shouldLastUntilTheCallsArriveAtTheOfferedRatePlusAMargin() {
        // 10,000 calls at 1,000/s: 10 s, plus the least margin of 1 s
        assertThat(S5Window.measureMs(800, 10_000, 1_000)).isEqualTo(11_000);
        // 1,000,000 at 3,000/s: 333.3 s rounded up to 334 s, plus a tenth
        assertThat(S5Window.measureMs(10_000, 1_000_000, 3_000)).isEqualTo(334_000 + 33_400);
        // the whole of every second: 10,001 at 10,000/s is 2 s, not 1.0001
        assertThat(S5Window.measureMs(0, 10_001, 10_000)).isEqualTo(3_000);
    }

    @Test
    void shouldNeverShortenThePlansWindow() {
        // 10,000 calls at 15,000/s take 1 s (+ 1 s): the plan's 10 s window is longer
        assertThat(S5Window.measureMs(10_000, 10_000, 15_000)).isEqualTo(10_000);
    }

    @Test
    void shouldCountTheCallsOfEveryLoadProcessTogether() {
        // three agents at 1,000/s each: the window of 30,000 calls is that of 10,000 at 1,000/s
        assertThat(S5Window.measureMs(800, 30_000, 3 * 1_000.0)).isEqualTo(S5Window.measureMs(800, 10_000, 1_000));
    }

    @Test
    void shouldRejectCountsOutsideTheRangeNamingTheOption() {
        assertThat(S5Window.checkMinCalls(0)).isZero();
        assertThat(S5Window.checkMinCalls(S5Window.MAX_MIN_CALLS)).isEqualTo(10_000_000);
        assertThat(S5Window.measureMs(0, S5Window.MAX_MIN_CALLS, 1)).isEqualTo(11_000_000_000L);
        assertThatThrownBy(() -> S5Window.checkMinCalls(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--s5-min-calls").hasMessageContaining("-1");
        assertThatThrownBy(() -> S5Window.measureMs(800, 10_000_001, 1_000)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--s5-min-calls");
        assertThatThrownBy(() -> S5Window.measureMs(800, 10, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
