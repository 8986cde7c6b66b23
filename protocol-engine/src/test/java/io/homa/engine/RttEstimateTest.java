package io.homa.engine;

import static io.homa.engine.ComponentRig.PEER;
import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.HomaHeader;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** RFC 6298 smoothing, and the receiver's samples taken only where Karn's rule allows. */
class RttEstimateTest {
    private static final long MIN_NS = 10_000_000L;
    private static final long MAX_NS = 1_000_000_000L;

    @Test
    void shouldSmoothAsRfc6298() {
        RttEstimate rtt = new RttEstimate(MIN_NS, MAX_NS);
        assertThat(rtt.rtoNs()).as("no sample: the resend interval").isEqualTo(MIN_NS);
        rtt.sample(8_000_000L);
        assertThat(rtt.srttNs()).isEqualTo(8_000_000L);
        assertThat(rtt.rttvarNs()).isEqualTo(4_000_000L);
        assertThat(rtt.rtoNs()).as("SRTT + 4 RTTVAR").isEqualTo(24_000_000L);
        rtt.sample(16_000_000L);
        // RTTVAR = 3/4 x 4 ms + 1/4 x |8 - 16| ms = 5 ms; SRTT = 7/8 x 8 ms + 1/8 x 16 ms = 9 ms
        assertThat(rtt.rttvarNs()).isEqualTo(5_000_000L);
        assertThat(rtt.srttNs()).isEqualTo(9_000_000L);
        assertThat(rtt.rtoNs()).isEqualTo(29_000_000L);
        rtt.sample(-1);
        assertThat(rtt.samples()).as("a negative sample (clock step) is ignored").isEqualTo(2);
        for (int i = 0; i < 50; i++) {
            rtt.sample(5_000_000_000L);
        }
        assertThat(rtt.rtoNs()).as("capped at the backoff cap").isEqualTo(MAX_NS);
        RttEstimate fast = new RttEstimate(MIN_NS, MAX_NS);
        fast.sample(50_000L);
        assertThat(fast.rtoNs()).as("never below the resend interval").isEqualTo(MIN_NS);
    }

    @Test
    void shouldSampleAResendAnsweredByFreshDataButNotByARetransmission() {
        for (boolean retransmitted : new boolean[] {false, true}) {
            ComponentRig rig = new ComponentRig();
            int payload = rig.payload();
            byte[] request = new byte[3 * payload];
            int incoming = request.length;
            int version = rig.cutoffs.version();
            rig.onData(0, PEER, ComponentRig.data(100, request, incoming, 0, payload, version));
            rig.onData(0, PEER, ComponentRig.data(100, request, incoming, 2 * payload, payload, version));
            ServerRpc rpc = rig.rpcs.serverRpc(PEER, 100);
            rig.drainControl();
            rig.receiver.requestMissing(rpc.request, PEER, 100 | HomaHeader.FROM_SERVER_BIT, 1_000_000L);
            assertThat(rig.drainControl()).hasSize(1);

            ByteBuffer answer = ComponentRig.data(100, request, incoming, payload, payload, version);
            new DataHeader().wrap(answer, 0).retransmitted(retransmitted);
            rig.onData(1_050_000L, PEER, answer);
            assertThat(rpc.state()).isEqualTo(ServerRpc.State.IN_SERVICE);
            if (retransmitted) {
                assertThat(rpc.client.rtt.samples()).as("a retransmission may answer an earlier RESEND: no sample").isZero();
                assertThat(rig.counters.rttSamples()).isZero();
            } else {
                assertThat(rpc.client.rtt.samples()).isEqualTo(1);
                assertThat(rpc.client.rtt.srttNs()).as("RESEND to the DATA it released").isEqualTo(50_000L);
                assertThat(rig.counters.rttSamples()).isEqualTo(1);
            }
        }
    }
}
