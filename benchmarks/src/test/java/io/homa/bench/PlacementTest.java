package io.homa.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** How a server process is started and pinned. */
class PlacementTest {
    @Test
    void shouldStartAServerOnBothCpusSizedForItsOwnAndPinItOnceUp() {
        Placement pinned = new Placement(true, "0", "1", "test");

        assertThat(pinned.serverStartPrefix()).containsExactly("taskset", "-c", "0,1");
        assertThat(pinned.serverStartJvmOptions()).containsExactly("-XX:ActiveProcessorCount=1");
        assertThat(pinned.pinServerCommand(4242)).containsExactly("taskset", "-a", "-p", "-c", "1", "4242");

        Placement unpinned = new Placement(false, "any", "any", "test");
        assertThat(unpinned.serverStartPrefix()).isEmpty();
        assertThat(unpinned.serverStartJvmOptions()).isEmpty();
        assertThat(unpinned.pinServerCommand(4242)).isEmpty();
    }

    @Test
    void shouldCountTheCpusOfATasksetList() {
        assertThat(Placement.cpuCount("1")).isEqualTo(1);
        assertThat(Placement.cpuCount("0-3")).isEqualTo(4);
        assertThat(Placement.cpuCount("0,2-3")).isEqualTo(3);
        assertThat(Placement.cpuCount("0,0-1")).isEqualTo(2);
        assertThat(new Placement(true, "0", "0-1", "s11 scaling").serverStartJvmOptions())
                .isEqualTo(List.of("-XX:ActiveProcessorCount=2"));
    }
}
