package io.homa.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Options of the load generator checked before anything starts. */
class LoadGeneratorOptionsTest {
    @Test
    void shouldTakeS5MinCallsOffByDefault() {
        LoadGenerator generator = new LoadGenerator();
        new CommandLine(generator).parseArgs();
        assertThat(generator.s5MinCalls).isZero();
        new CommandLine(generator = new LoadGenerator()).parseArgs("--s5-min-calls=50000");
        assertThat(generator.s5MinCalls).isEqualTo(50_000);
    }

    @Test
    void shouldRefuseS5MinCallsOutOfRangeBeforeStartingAnything() {
        LoadGenerator generator = new LoadGenerator();
        new CommandLine(generator).parseArgs("--s5-min-calls=10000001");

        assertThatThrownBy(generator::call).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--s5-min-calls must be between 0 (off) and 10000000, was 10000001");
    }
}
