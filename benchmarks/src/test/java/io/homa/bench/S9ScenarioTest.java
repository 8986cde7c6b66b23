package io.homa.bench;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.bench.systems.SystemKind;
import org.junit.jupiter.api.Test;

/** What S9 asks of the run before it starts anything. */
class S9ScenarioTest {
    private static final Testbed RACK = new Testbed("homa", "198.18.0", 4, 1500, 100, 300_000);

    @Test
    void shouldRefuseLoopbackNamingTheRack() {
        assertThatThrownBy(() -> S9Scenario.check(null, SystemKind.TCP, 8, 10_000))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rack only")
                .hasMessageContaining("--net=testbed");
    }

    @Test
    void shouldNeedThreeHostsAndATcpSystem() {
        assertThatThrownBy(() -> S9Scenario.check(new Testbed("homa", "198.18.0", 2, 1500, 100, 300_000), SystemKind.TCP,
                8, 10_000)).hasMessageContaining("at least 3 hosts");
        assertThatThrownBy(() -> S9Scenario.check(RACK, SystemKind.HOMA_RPC, 8, 10_000)).hasMessageContaining("--s9-tcp-system");
        assertThatThrownBy(() -> S9Scenario.check(RACK, SystemKind.TCP, 0, 10_000)).hasMessageContaining("--s9-incast-outstanding");
        assertThatThrownBy(() -> S9Scenario.check(RACK, SystemKind.TCP, 8, 100)).hasMessageContaining("--s9-measure-ms");
        assertThatCode(() -> S9Scenario.check(RACK, SystemKind.GRPC, 8, 10_000)).doesNotThrowAnyException();
    }

    @Test
    void shouldRefuseS9OnLoopbackBeforeStartingAnything() {
        LoadGenerator generator = new LoadGenerator();
        new picocli.CommandLine(generator).parseArgs("--scenarios=s9", "--out=target/s9-refused");
        assertThatThrownBy(generator::call).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rack only");
    }
}
