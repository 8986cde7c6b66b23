package io.homa.engine.incast;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.EngineConfig;
import org.junit.jupiter.api.Test;

/**
 * The incast experiment of the Homa paper (SIGCOMM 2018 §3.6 and Figure 9) as a deterministic
 * packet-level simulation ({@link IncastExperiment} on a {@link StarNetwork}): one client fans out
 * {@value #RPCS} concurrent RPCs to {@value #SERVERS} servers, each answering at once with
 * {@value #RESPONSE_BYTES} bytes, through a switch whose port towards the client has a
 * {@value #BUFFER_BYTES}-byte drop-tail buffer.
 *
 * <p>Model: 10 Gbit/s full-duplex links for every host (0.8 ns per byte), 2 µs propagation per
 * hop, store-and-forward switch with 8 strict-priority queues per egress port sharing the port's
 * buffer. A host's engine is asked for one packet each time its uplink is free. Frame = Homa
 * packet + 28 (IPv4, UDP) + 18 (Ethernet header, FCS) bytes in the buffer, + 20 (preamble,
 * inter-frame gap) on the wire. DATA packets carry 1,416 message bytes (MTU 1,500).
 *
 * <p>Arithmetic (sizes as frames in the buffer / as wire time):
 * <ul>
 *   <li>A response of 10,000 B is 8 packets (7 x 1,416 + 88): 10,816 B in the buffer, 10,976 B
 *       = 8.78 µs on a link; all 1,000 need 8.78 ms of the client's downlink, the least possible
 *       completion time.
 *   <li>A request of {@value #REQUEST_BYTES} B is one packet: 1,102 B, 1,122 B = 0.90 µs on the
 *       client's uplink; the 1,000 requests leave in 0.90 ms, one every 0.90 µs, round-robin, so
 *       each server gets one every 14.4 µs and its uplink (8.78 µs per response) keeps up.
 *   <li>Without marking every response is unscheduled (10,000 B is below unscheduledBytes,
 *       60,000 rounded to 60,180): responses reach the switch at 10,976 B per 0.90 µs = 9.8 x
 *       the downlink rate, so the queue grows by ~11 B/ns and 200 KB overflow ~18 µs after the
 *       first response; over the request phase ~10.8 MB arrive and ~1.1 MB leave: drops are
 *       unavoidable (about 6,600 packets before the first RESEND), and every RESEND round
 *       (each 10 ms) is a smaller incast of its own.
 *   <li>With marking, the first {@code incastThreshold} RPCs are unmarked and send their whole
 *       response unscheduled. At 9.8 x the drain rate the buffer fills by 10,816 x (1 - 1/9.8)
 *       = 9.7 KB per such response, so a 200 KB buffer absorbs about 20 of them. The default
 *       threshold of 64 asks for 64 x 9.7 = 622 KB: with these parameters (200 KB buffer,
 *       10 KB responses, more than one server, servers answering at once) the default
 *       configuration must drop packets, whatever the engine does afterwards
 *       ({@link #defaultConfigurationShouldOverflowOnlyThroughItsUnmarkedResponses()}).
 *       {@link #MARKING} therefore uses a threshold of 8: 8 x 10,816 = 86.5 KB at most.
 *   <li>A marked response still sends incastUnscheduledBytes (400 B) at once: a 502 B frame,
 *       522 B = 0.42 µs of wire, one per request, i.e. at 522 / 1,122 = 0.47 x the downlink rate:
 *       the heads never build a queue of their own. (With 100 B requests, 222 B on the wire, the
 *       heads would arrive at 2.35 x the downlink rate: 992 x 502 B = 498 KB in 0.18 ms against
 *       ~220 KB drained, ~270 KB of buffer for the heads alone, more than 200 KB. Hence
 *       {@value #REQUEST_BYTES} B requests.)
 *   <li>The rest of each marked response comes under the client's grants. With 10 KB messages the
 *       overcommitment limit does not bound them (a fully granted message leaves the grant
 *       queue); maxIncomingBytes (unscheduled plus granted bytes not yet received) does. Its
 *       default, 400,000, is twice the buffer; {@link #MARKING} uses 50,000, about 4 BDP (a
 *       grant-to-data round trip is ~10.7 µs, BDP ~13 KB), which keeps the downlink busy. Granted
 *       bytes sharing the queue with heads that take 47 % of the link stay below about
 *       (50,000 + one 7,080 B FIFO grant) / (1 - 0.47) = 107 KB, after the unmarked burst has
 *       drained.
 * </ul>
 */
class IncastSimulationTest {
    private static final int SERVERS = 16;
    private static final int RPCS = 1_000;
    private static final int REQUEST_BYTES = 1_000;
    private static final int RESPONSE_BYTES = 10_000;
    private static final int BUFFER_BYTES = 200_000;
    private static final long VIRTUAL_LIMIT_NS = 5_000_000_000L;
    private static final StarNetwork.Fabric FABRIC = new StarNetwork.Fabric(10_000, 2_000, BUFFER_BYTES, true);

    /**
     * Incast marking sized for the 200 KB buffer (see the class comment): the incast buffer is the
     * port's, so 1,000 heads get the 400 B floor each.
     */
    static final EngineConfig MARKING = EngineConfig.builder().incastThreshold(8).maxIncomingBytes(50_000)
            .incastBufferBytes(BUFFER_BYTES).build();
    /** The same, with a threshold the client never reaches: no request is marked. */
    static final EngineConfig NO_MARKING = MARKING.toBuilder().incastThreshold(1_000_000).build();

    private static IncastExperiment.Result noMarking;

    private static IncastExperiment.Result run(EngineConfig config) {
        return new IncastExperiment(new IncastExperiment.Setup(SERVERS, RPCS, REQUEST_BYTES, RESPONSE_BYTES, config,
                FABRIC, VIRTUAL_LIMIT_NS)).run();
    }

    private static synchronized IncastExperiment.Result noMarking() {
        if (noMarking == null) {
            noMarking = run(NO_MARKING);
            System.out.println("incast without marking: " + noMarking.summary());
        }
        return noMarking;
    }

    @Test
    void withIncastMarkingTheFanOutShouldCompleteWithoutAnyDrop() {
        IncastExperiment.Result with = run(MARKING);
        System.out.println("incast with marking (threshold 8, maxIncoming 50,000): " + with.summary());

        assertThat(with.incastMarked()).as("all queued at once: each leaves with 999 others outstanding")
                .isEqualTo(RPCS);
        assertThat(with.clientDownlinkDrops()).as(with.summary()).isZero();
        assertThat(with.otherDrops()).as(with.summary()).isZero();
        assertThat(with.completed()).as(with.summary()).isEqualTo(RPCS);
        assertThat(with.wrongResponses()).as(with.summary()).isZero();
        assertThat(with.clientResends()).as(with.summary()).isZero();
        assertThat(with.quiescent()).as(with.summary()).isTrue();
        assertThat(with.maxClientQueueBytes()).as(with.summary()).isLessThan(BUFFER_BYTES * 3 / 4);
        // The downlink stays busy: within 5 % of the 8.78 ms it takes to carry 1,000 responses.
        assertThat(with.lastResponseNs()).as(with.summary()).isLessThan(9_220_000L);
    }

    @Test
    void withoutIncastMarkingTheClientDownlinkShouldOverflowAndRpcsRecoverByResend() {
        IncastExperiment.Result without = noMarking();

        assertThat(without.incastMarked()).as(without.summary()).isZero();
        assertThat(without.clientDownlinkDrops()).as(without.summary()).isGreaterThan(1_000);
        assertThat(without.maxClientQueueBytes()).as(without.summary()).isGreaterThan(BUFFER_BYTES - 1_600);
        assertThat(without.clientResends()).as(without.summary()).isPositive();
        assertThat(without.completed()).as(without.summary()).isEqualTo(RPCS);
        assertThat(without.wrongResponses()).as(without.summary()).isZero();
        assertThat(without.quiescent()).as(without.summary()).isTrue();
    }

    /**
     * The default configuration sizes heads for an 8 MiB incast buffer
     * ({@link EngineConfig#DEFAULT_INCAST_BUFFER_BYTES}): 8 KB each for this fan-out, far more than
     * a 200 KB port holds. Marking still works (every request marked, since all leave with the
     * others outstanding), every RPC completes, and fewer than a third of the packets are lost
     * that are lost without marking.
     */
    @Test
    void defaultConfigurationOnAShallowPortShouldStillLoseFarLessThanWithoutMarking() {
        IncastExperiment.Result defaults = run(EngineConfig.defaults());
        System.out.println("incast with the default configuration (threshold 64, maxIncoming 400,000, incast buffer 8 MiB): "
                + defaults.summary());

        assertThat(defaults.incastMarked()).as(defaults.summary()).isEqualTo(RPCS);
        assertThat(defaults.completed()).as(defaults.summary()).isEqualTo(RPCS);
        assertThat(defaults.wrongResponses()).as(defaults.summary()).isZero();
        assertThat(defaults.clientDownlinkDrops()).as(defaults.summary())
                .isLessThan(noMarking().clientDownlinkDrops() / 3);
    }

    /**
     * With the incast buffer set to the port's (2 MB: shallow for a datacenter switch), the
     * defaults otherwise unchanged: 1,000 heads of 2,000 B (one 1,416 B packet each, 1.5 MB as
     * frames) plus the granted bytes (at most 400,000 + one FIFO grant) fit, and nothing is
     * dropped, while the same fabric without marking overflows.
     */
    @Test
    void withTheIncastBufferSetToATwoMegabytePortMarkingShouldAvoidEveryDrop() {
        StarNetwork.Fabric deeper = new StarNetwork.Fabric(10_000, 2_000, 2_000_000, true);
        EngineConfig config = EngineConfig.defaults().toBuilder().incastBufferBytes(2_000_000).build();
        IncastExperiment.Result with = new IncastExperiment(new IncastExperiment.Setup(SERVERS, RPCS, REQUEST_BYTES,
                RESPONSE_BYTES, config, deeper, VIRTUAL_LIMIT_NS)).run();
        IncastExperiment.Result without = new IncastExperiment(new IncastExperiment.Setup(SERVERS, RPCS,
                REQUEST_BYTES, RESPONSE_BYTES, config.toBuilder().incastThreshold(1_000_000).build(),
                deeper, VIRTUAL_LIMIT_NS)).run();
        System.out.println("incast, incast buffer = port buffer = 2 MB, with marking: " + with.summary());
        System.out.println("incast, 2 MB port buffer, without marking: " + without.summary());

        assertThat(with.incastMarked()).as(with.summary()).isEqualTo(RPCS);
        assertThat(with.clientDownlinkDrops()).as(with.summary()).isZero();
        assertThat(with.otherDrops()).as(with.summary()).isZero();
        assertThat(with.completed()).as(with.summary()).isEqualTo(RPCS);
        assertThat(with.wrongResponses()).as(with.summary()).isZero();
        assertThat(without.clientDownlinkDrops()).as(without.summary()).isPositive();
        assertThat(without.completed()).as(without.summary()).isEqualTo(RPCS);
    }
}
