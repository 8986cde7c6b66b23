package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The per-peer delay estimate of RTT_PROBE / RTT_RESPS, in virtual time. */
class PeerDelayTest {
    private static final long PROBE_INTERVAL_NS = 1_000_000;

    @Test
    void shouldConvergeToTheLinksOwnRoundTripWhateverTheQueuesAddAndLose() {
        long pathRttNs = 25_000; // the configured link delay, both ways
        SplittableRandom random = new SplittableRandom(7);
        PeerDelay delay = new PeerDelay();
        long nowNs = 0;
        List<long[]> inFlight = new ArrayList<>(); // {sentNs, arrivesNs}
        int lost = 0;
        for (int round = 0; round < 400; round++, nowNs += 250_000) {
            if (delay.probeDue(nowNs, PROBE_INTERVAL_NS)) {
                delay.probeSent(nowNs);
                if (random.nextInt(10) == 0) {
                    lost++; // the probe or its answer is dropped: nothing comes back
                } else {
                    // queues add 0 (one probe in five finds them empty) to 400 µs
                    long queuedNs = random.nextInt(5) == 0 ? 0 : random.nextLong(400_000);
                    inFlight.add(new long[] {nowNs, nowNs + pathRttNs + queuedNs});
                }
            }
            long now = nowNs;
            inFlight.removeIf(probe -> {
                if (probe[1] <= now + 250_000) {
                    assertThat(delay.responseReceived(probe[0], probe[1])).isTrue();
                    return true;
                }
                return false;
            });
        }

        assertThat(lost).isPositive();
        assertThat(delay.measured()).isTrue();
        assertThat(delay.rttMinNs()).isEqualTo(pathRttNs);
        assertThat(delay.rttRecentNs()).isBetween(pathRttNs, pathRttNs + 400_000);
        assertThat(delay.silent()).isFalse();
    }

    @Test
    void shouldLetALostProbeChangeNothing() {
        PeerDelay delay = new PeerDelay();
        delay.probeSent(0);
        assertThat(delay.responseReceived(0, 30_000)).isTrue();
        long minNs = delay.rttMinNs();
        long recentNs = delay.rttRecentNs();

        delay.probeSent(1_000_000); // lost: never answered

        assertThat(delay.rttMinNs()).isEqualTo(minNs);
        assertThat(delay.rttRecentNs()).isEqualTo(recentNs);
        assertThat(delay.probeDue(1_500_000, PROBE_INTERVAL_NS)).isFalse();
        assertThat(delay.probeDue(2_000_000, PROBE_INTERVAL_NS)).as("the next probe goes on time").isTrue();
        delay.probeSent(2_000_000);
        assertThat(delay.responseReceived(2_000_000, 2_040_000)).isTrue();
        assertThat(delay.outstanding()).as("the lost probe is forgotten with the later answer").isZero();
        assertThat(delay.rttMinNs()).isEqualTo(30_000);
        assertThat(delay.rttRecentNs()).isEqualTo(35_000);
    }

    @Test
    void shouldIgnoreAnAnswerThatEchoesNoOutstandingProbe() {
        PeerDelay delay = new PeerDelay();
        delay.probeSent(1_000);

        assertThat(delay.responseReceived(999, 2_000)).as("a timestamp never sent (forged)").isFalse();
        assertThat(delay.responseReceived(1_000, 500)).as("an answer older than its probe").isFalse();
        assertThat(delay.measured()).isFalse();
        assertThat(delay.responseReceived(1_000, 21_000)).isTrue();
        assertThat(delay.responseReceived(1_000, 22_000)).as("the same answer twice counts once").isFalse();
        assertThat(delay.rttMinNs()).isEqualTo(20_000);
        assertThat(delay.rttRecentNs()).isEqualTo(20_000);
    }

    @Test
    void shouldForgetTheOldestProbesBeyondItsMemory() {
        PeerDelay delay = new PeerDelay();
        for (int i = 0; i <= PeerDelay.MAX_OUTSTANDING; i++) {
            delay.probeSent(i * 1_000L);
        }

        assertThat(delay.outstanding()).isEqualTo(PeerDelay.MAX_OUTSTANDING);
        assertThat(delay.responseReceived(0, 50_000)).as("pushed out by newer probes").isFalse();
        assertThat(delay.responseReceived(1_000, 50_000)).isTrue();
    }

    @Test
    void shouldStopProbingAPeerThatNeverAnswers() {
        PeerDelay delay = new PeerDelay();
        long nowNs = 0;
        int probes = 0;
        for (int i = 0; i < 100; i++, nowNs += PROBE_INTERVAL_NS) {
            if (delay.probeDue(nowNs, PROBE_INTERVAL_NS)) {
                delay.probeSent(nowNs);
                probes++;
            }
        }

        assertThat(probes).isEqualTo(PeerDelay.SILENT_PROBES);
        assertThat(delay.silent()).isTrue();
        assertThat(delay.measured()).isFalse();
    }

    @Test
    void shouldKeepProbingAPeerThatAnsweredOnceThoughLaterProbesAreLost() {
        PeerDelay delay = new PeerDelay();
        delay.probeSent(0);
        delay.responseReceived(0, 20_000);
        for (int i = 1; i <= 3 * PeerDelay.SILENT_PROBES; i++) {
            delay.probeSent(i * PROBE_INTERVAL_NS);
        }

        assertThat(delay.silent()).isFalse();
        assertThat(delay.probeDue(100 * PROBE_INTERVAL_NS, PROBE_INTERVAL_NS)).isTrue();
    }
}
