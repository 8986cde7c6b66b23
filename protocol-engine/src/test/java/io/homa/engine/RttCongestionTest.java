package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.internal.wire.GrantHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.internal.wire.RttProbeHeader;
import io.homa.engine.wire.PacketType;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** RTT-based congestion control between whole engines on a delayed link, in virtual time. */
class RttCongestionTest {
    private static final long ONE_WAY_NS = 20_000;
    private static final long GAP_NS = 2_000_000;
    private static final EngineConfig RTT = EngineConfig.builder()
            .linkMbps(1_000)
            .congestionControl(CongestionControl.RTT)
            .rttProbeIntervalNs(10_000)
            .build();
    private static final EngineConfig OFF = RTT.toBuilder().congestionControl(CongestionControl.OFF).build();

    private static DelayedPair measured() {
        DelayedPair pair = new DelayedPair(RTT, ONE_WAY_NS);
        pair.calls(10, 100, GAP_NS);
        assertThat(pair.completed).isEqualTo(10);
        return pair;
    }

    private static PeerCongestion clientView(DelayedPair pair) {
        return pair.client.peerCongestion(DelayedPair.SERVER);
    }

    @Test
    void shouldConvergeToTheLinksRoundTrip() {
        DelayedPair pair = new DelayedPair(RTT, 150_000);
        pair.calls(5, 100, GAP_NS);
        assertThat(clientView(pair).rttMinNs).isEqualTo(300_000);

        pair.oneWayDelayNs = ONE_WAY_NS; // the queue drains
        pair.calls(30, 100, GAP_NS);

        PeerCongestion cc = clientView(pair);
        assertThat(cc.rttMinNs).isEqualTo(2 * ONE_WAY_NS);
        assertThat(cc.rttRecentNs).isBetween(2 * ONE_WAY_NS, 2 * ONE_WAY_NS + 1);
        assertThat(cc.linkMbps).isEqualTo(1_000);
        assertThat(pair.client.counters().rttProbesAnswered()).isEqualTo(cc.samples).isGreaterThanOrEqualTo(30);
        // The server measured the client too, probing it for its responses.
        assertThat(pair.server.peerCongestion(DelayedPair.CLIENT).rttMinNs).isEqualTo(2 * ONE_WAY_NS);
        assertThat(pair.server.peerCongestion(DelayedPair.CLIENT).grantWindowBytes).isPositive();
        assertThat(pair.failed).isZero();
    }

    @Test
    void shouldSizeTheUnscheduledWindowFromTheThreeRegions() {
        DelayedPair pair = measured();
        PeerCongestion cc = clientView(pair);
        int payload = RTT.maxDataPayloadBytes();
        CongestionWindow window = CongestionWindow.of(cc.rttMinNs, 1_000, EngineParams.gsoBatchBytes(RTT));

        // Below rtt_mid: rtt_mid at the peer's link rate, in whole packets.
        assertThat(pair.client.unscheduledBytesFor(DelayedPair.SERVER, false))
                .isEqualTo(wholePackets(CongestionWindow.bytes(window.rttMidNs(), 1_000), payload));
        // Between rtt_mid and rtt_high: the paper's formula.
        long between = (window.rttMidNs() + window.rttHighNs()) / 2;
        cc.rttRecentNs = between;
        assertThat(pair.client.unscheduledBytesFor(DelayedPair.SERVER, false)).isEqualTo(wholePackets(
                CongestionWindow.bytes(window.rttLowNs() - (between - window.rttMidNs()) * 3 / 8, 1_000), payload));
        // Above rtt_high: one GSO batch (4 packets at 1 Gbit/s), whether or not other messages wait.
        cc.rttRecentNs = window.rttHighNs() + 1;
        assertThat(pair.client.unscheduledBytesFor(DelayedPair.SERVER, false)).isEqualTo(4 * payload);
        assertThat(pair.client.unscheduledBytesFor(DelayedPair.SERVER, true)).isEqualTo(4 * payload);
    }

    @Test
    void shouldAddRttMidWhenNothingWaitsHalvedWhenTheRatioIsLow() {
        DelayedPair pair = measured();
        PeerCongestion cc = clientView(pair);
        cc.rttRecentNs = cc.rttMinNs;
        // A small window for the extra to be visible under the 60,000-byte cap.
        cc.rttMinNs = 1_000;
        cc.rttRecentNs = 1_000;
        int payload = RTT.maxDataPayloadBytes();
        CongestionWindow window = CongestionWindow.of(1_000, 1_000, EngineParams.gsoBatchBytes(RTT));
        long mid = window.rttMidNs();

        cc.unscheduledPercent = 90;
        assertThat(pair.client.unscheduledBytesFor(DelayedPair.SERVER, true))
                .isEqualTo(wholePackets(CongestionWindow.bytes(2 * mid, 1_000), payload));
        cc.unscheduledPercent = 30;
        assertThat(pair.client.unscheduledBytesFor(DelayedPair.SERVER, true))
                .isEqualTo(wholePackets(CongestionWindow.bytes(mid + mid / 2, 1_000), payload));
        assertThat(pair.client.unscheduledBytesFor(DelayedPair.SERVER, false))
                .isEqualTo(wholePackets(CongestionWindow.bytes(mid, 1_000), payload));
    }

    @Test
    void shouldDetectCongestionProbeEveryEightMinimumRoundTripsAndSendOneGsoBatch() {
        EngineConfig config = RTT.toBuilder().rttProbeIntervalNs(EngineConfig.DEFAULT_RTT_PROBE_INTERVAL_NS).build();
        DelayedPair pair = new DelayedPair(config, ONE_WAY_NS);
        pair.calls(10, 100, GAP_NS);
        PeerCongestion cc = clientView(pair);
        assertThat(cc.rttMinNs).isEqualTo(2 * ONE_WAY_NS);
        CongestionWindow window = CongestionWindow.of(cc.rttMinNs, 1_000, EngineParams.gsoBatchBytes(config));
        long gapNs = 900_000; // shorter than the 1 ms probe interval, longer than 8 rtt_min and the queued round trip

        // Uncongested, a call every 0.9 ms: a probe every other call at most.
        long before = pair.client.counters().rttProbesSent();
        pair.calls(10, 100, gapNs);
        assertThat(pair.client.counters().rttProbesSent() - before).isLessThanOrEqualTo(5);

        // A queue builds up on the path: the round trip passes rtt_high.
        pair.oneWayDelayNs = 400_000;
        assertThat(2 * pair.oneWayDelayNs).isGreaterThan(window.rttHighNs());
        pair.calls(6, 100, 2 * GAP_NS);
        assertThat(cc.rttRecentNs).isGreaterThan(window.rttHighNs());
        before = pair.client.counters().rttProbesSent();
        pair.calls(10, 100, gapNs);
        assertThat(pair.client.counters().rttProbesSent() - before).as("one probe per call while congested").isEqualTo(10);

        // A new message leaves with one GSO batch unscheduled (4 packets at 1 Gbit/s), as its DATA says.
        int sentBefore = pair.sent.size();
        long rpcId = pair.call(100_000);
        pair.run(GAP_NS);
        int payload = config.maxDataPayloadBytes();
        DelayedPair.Flight first = pair.sent.subList(sentBefore, pair.sent.size()).stream()
                .filter(f -> f.is(PacketType.DATA) && f.from().equals(DelayedPair.CLIENT)).findFirst().orElseThrow();
        io.homa.engine.internal.wire.DataHeader data = new io.homa.engine.internal.wire.DataHeader()
                .wrap(ByteBuffer.wrap(first.bytes()), 0);
        assertThat(data.rpcId()).isEqualTo(rpcId);
        assertThat(data.incoming()).isEqualTo(4 * payload);
        pair.run(20 * GAP_NS);
        assertThat(pair.failed).isZero();

        // The queue drains: the window grows back to rtt_mid's.
        pair.oneWayDelayNs = ONE_WAY_NS;
        pair.calls(20, 100, GAP_NS);
        assertThat(cc.rttRecentNs).isLessThan(window.rttMidNs());
        assertThat(pair.client.unscheduledBytesFor(DelayedPair.SERVER, false))
                .isEqualTo(wholePackets(CongestionWindow.bytes(window.rttMidNs(), 1_000), payload));
    }

    @Test
    void shouldChangeNothingWhenAProbeIsLost() {
        DelayedPair pair = measured();
        PeerCongestion cc = clientView(pair);
        long min = cc.rttMinNs;
        long recent = cc.rttRecentNs;
        long samples = cc.samples;
        int window = pair.client.unscheduledBytesFor(DelayedPair.SERVER, false);

        pair.drop = flight -> flight.is(PacketType.RTT_PROBE) && flight.from().equals(DelayedPair.CLIENT);
        pair.calls(1, 100, GAP_NS);

        assertThat(pair.dropped).hasSize(1);
        assertThat(pair.completed).isEqualTo(11);
        assertThat(cc.rttMinNs).isEqualTo(min);
        assertThat(cc.rttRecentNs).isEqualTo(recent);
        assertThat(cc.samples).isEqualTo(samples);
        assertThat(pair.client.unscheduledBytesFor(DelayedPair.SERVER, false)).isEqualTo(window);

        pair.drop = flight -> false;
        pair.calls(1, 100, GAP_NS);
        assertThat(pair.client.counters().rttProbesLost()).isEqualTo(1);
        assertThat(cc.samples).isEqualTo(samples + 1);
        assertThat(cc.probingStopped).isFalse();
        assertThat(cc.rttMinNs).isEqualTo(min);
    }

    @Test
    void shouldIgnoreAResponseThatEchoesNoOutstandingProbe() {
        DelayedPair pair = measured();
        PeerCongestion cc = clientView(pair);
        long samples = cc.samples;
        long ignored = pair.client.counters().rttProbesIgnored();

        pair.inject(DelayedPair.SERVER, DelayedPair.CLIENT, rtt(PacketType.RTT_RESPS, 1, 12_345, 1_000, 0));
        pair.inject(DelayedPair.SERVER, DelayedPair.CLIENT, rtt(PacketType.RTT_RESPS, 1, Long.MAX_VALUE, 1_000, 0));
        // A real response delivered twice counts once.
        DelayedPair.Flight last = lastFrom(pair, PacketType.RTT_RESPS, DelayedPair.SERVER);
        pair.inject(DelayedPair.SERVER, DelayedPair.CLIENT, last.bytes());

        assertThat(cc.samples).isEqualTo(samples);
        assertThat(pair.client.counters().rttProbesIgnored()).isEqualTo(ignored + 3);
        assertThat(pair.client.counters().malformedPackets()).isZero();
    }

    @Test
    void shouldDropAndCountMalformedProbesAndResponses() {
        DelayedPair pair = measured();
        long malformed = pair.server.counters().malformedPackets();
        List<byte[]> bad = List.of(
                rtt(PacketType.RTT_PROBE, 0, 0, 1_000, 0), // zero timestamp
                rtt(PacketType.RTT_PROBE, 0, -1, 1_000, 0), // huge (negative as signed)
                rtt(PacketType.RTT_PROBE, 0, Long.MIN_VALUE, 1_000, 0),
                rtt(PacketType.RTT_PROBE, 0, 5, 0, 0), // no link rate
                rtt(PacketType.RTT_PROBE, 0, 5, -1, 0), // 4,294,967,295 Mbit/s
                rtt(PacketType.RTT_PROBE, 0, 5, EngineConfig.MAX_LINK_MBPS + 1, 0),
                rtt(PacketType.RTT_PROBE, 0, 5, 1_000, 102), // a ratio above 100%
                rtt(PacketType.RTT_PROBE, 0, 5, 1_000, 255),
                java.util.Arrays.copyOf(rtt(PacketType.RTT_PROBE, 0, 5, 1_000, 0), RttProbeHeader.HEADER_LENGTH - 1));
        for (byte[] packet : bad) {
            pair.inject(DelayedPair.CLIENT, DelayedPair.SERVER, packet);
        }
        assertThat(pair.server.counters().malformedPackets()).isEqualTo(malformed + bad.size());
        assertThat(pair.server.hasTransmit()).as("nothing answered").isFalse();

        long clientMalformed = pair.client.counters().malformedPackets();
        pair.inject(DelayedPair.SERVER, DelayedPair.CLIENT, rtt(PacketType.RTT_RESPS, 1, 5, 1_000, 200));
        pair.inject(DelayedPair.SERVER, DelayedPair.CLIENT, rtt(PacketType.RTT_RESPS, 1, 0, 1_000, 0));
        assertThat(pair.client.counters().malformedPackets()).isEqualTo(clientMalformed + 2);
        pair.calls(3, 100, GAP_NS);
        assertThat(pair.completed).isEqualTo(13);
    }

    @Test
    void shouldAnswerProbesOnlyFromAddressesThatValidated() {
        DelayedPair pair = measured();
        InetSocketAddress stranger = new InetSocketAddress("10.0.0.99", 5000);
        long ignored = pair.server.counters().rttProbesIgnored();

        pair.inject(stranger, DelayedPair.SERVER, rtt(PacketType.RTT_PROBE, 0, 77, 1_000, 0));
        // An address we hold no state for, which never echoed our token: a forged source, perhaps a victim.
        assertThat(pair.server.hasTransmit()).isFalse();
        assertThat(pair.server.counters().rttProbesIgnored()).isEqualTo(ignored + 1);
    }

    @Test
    void shouldStopProbingADraftOnlyPeerAndStillCompleteCalls() {
        // The server knows only the draft: it drops the unknown types (emulated on the link) and never probes.
        DelayedPair pair = new DelayedPair(RTT, OFF, ONE_WAY_NS);
        pair.drop = flight -> flight.to().equals(DelayedPair.SERVER)
                && (flight.is(PacketType.RTT_PROBE) || flight.is(PacketType.RTT_RESPS));

        pair.calls(20, 100, GAP_NS);

        assertThat(pair.completed).isEqualTo(20);
        assertThat(pair.failed).isZero();
        PeerCongestion cc = clientView(pair);
        assertThat(cc.probingStopped).isTrue();
        assertThat(cc.samples).isZero();
        assertThat(pair.client.counters().rttProbesSent()).isEqualTo(RttCongestion.MAX_UNANSWERED_PROBES);
        assertThat(pair.dropped).hasSize(RttCongestion.MAX_UNANSWERED_PROBES);
        // Never measured: the engine's global window.
        assertThat(pair.client.unscheduledBytesFor(DelayedPair.SERVER, false))
                .isEqualTo(EngineParams.of(RTT).unscheduledBytes());
    }

    @Test
    void shouldLeaveTheWireAsTheDraftHasItWhenOff() {
        DelayedPair pair = new DelayedPair(OFF, ONE_WAY_NS);
        pair.responseBytes = 300_000;
        pair.calls(5, 300_000, 20 * GAP_NS);

        assertThat(pair.completed).isEqualTo(5);
        assertThat(pair.count(PacketType.RTT_PROBE) + pair.count(PacketType.RTT_RESPS)).isZero();
        List<DelayedPair.Flight> grants = pair.sent.stream().filter(f -> f.is(PacketType.GRANT)).toList();
        assertThat(grants).isNotEmpty().allSatisfy(g -> assertThat(g.bytes()[HomaHeader.REASON_OFFSET]).isZero());
        assertThat(pair.client.counters().rttProbesSent()).isZero();
    }

    @Test
    void shouldReportTheUnscheduledRatioInGrantsAndResponses() {
        DelayedPair pair = new DelayedPair(RTT, ONE_WAY_NS);
        pair.calls(3, 100, GAP_NS); // first contact and a measured round trip
        pair.calls(6, 300_000, 20 * GAP_NS);

        assertThat(pair.completed).isEqualTo(9);
        List<DelayedPair.Flight> grants = pair.sent.stream()
                .filter(f -> f.is(PacketType.GRANT) && f.from().equals(DelayedPair.SERVER)).toList();
        assertThat(grants).isNotEmpty().allSatisfy(g -> assertThat(
                Byte.toUnsignedInt(g.bytes()[HomaHeader.REASON_OFFSET])).isBetween(1, 101));
        int lastRatio = Byte.toUnsignedInt(grants.get(grants.size() - 1).bytes()[HomaHeader.REASON_OFFSET]) - 1;
        // Mostly 300 KB requests with about 60 KB of each unscheduled: a low ratio, which the client took.
        assertThat(lastRatio).isLessThan(RttCongestion.LOW_UNSCHEDULED_PERCENT);
        assertThat(clientView(pair).unscheduledPercent).isEqualTo(lastRatio);
        // The grant parses as a draft GRANT all the same.
        GrantHeader grant = new GrantHeader().wrap(ByteBuffer.wrap(grants.get(0).bytes()), 0);
        assertThat(grant.type()).isEqualTo(PacketType.GRANT);
        assertThat(pair.failed).isZero();
    }

    @Test
    void shouldSendProbesAtTheShortestMessagesPriorityAndAsControlPackets() {
        DelayedPair pair = measured();
        DelayedPair.Flight probe = lastFrom(pair, PacketType.RTT_PROBE, DelayedPair.CLIENT);
        assertThat(probe.priority()).isEqualTo(EngineConfig.DEFAULT_PRIORITY_LEVELS - 1);
        assertThat(probe.bytes()).hasSize(RttProbeHeader.HEADER_LENGTH);
        assertThat(pair.client.counters().packetsSent(PacketType.RTT_PROBE))
                .isEqualTo(pair.client.counters().rttProbesSent());
    }

    private static DelayedPair.Flight lastFrom(DelayedPair pair, PacketType type, InetSocketAddress from) {
        DelayedPair.Flight found = null;
        for (DelayedPair.Flight flight : pair.sent) {
            if (flight.is(type) && flight.from().equals(from)) {
                found = flight;
            }
        }
        assertThat(found).as("a %s from %s", type, from).isNotNull();
        return found;
    }

    private static byte[] rtt(PacketType type, long wireRpcId, long timestampNs, int linkMbps, int ratioWire) {
        ByteBuffer buffer = ByteBuffer.allocate(RttProbeHeader.HEADER_LENGTH);
        RttProbeHeader header = new RttProbeHeader().wrap(buffer, 0);
        header.writeCommon(type, 1, 2, wireRpcId);
        header.timestampNs(timestampNs).linkMbps(linkMbps).unscheduledRatio(ratioWire);
        return buffer.array();
    }

    private static int wholePackets(long bytes, int payload) {
        return (int) Math.min(EngineParams.of(RTT).maxUnscheduledBytes(), Math.max(payload, (bytes + payload - 1) / payload * payload));
    }
}
