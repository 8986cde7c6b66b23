package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.internal.wire.CutoffsHeader;
import io.homa.engine.internal.wire.DataHeader;
import io.homa.engine.internal.wire.HomaHeader;
import io.homa.engine.wire.PacketType;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The CUTOFFS exchange from the first packet (draft "CUTOFFS"): a fresh receiver has default
 * cutoffs under a version of its own run; a DATA naming another version draws CUTOFFS at once,
 * at most once per resend interval while the sender keeps naming another version, so a lost
 * CUTOFFS is repaired; a sender that applied them names the new version and draws no more.
 */
class CutoffsExchangeTest {
    private static final InetSocketAddress CLIENT = EnginePair.CLIENT;
    private static final EngineConfig CONFIG = EngineConfig.defaults();

    private record Sent(InetSocketAddress to, byte[] bytes) {
        PacketType type() {
            return PacketType.fromCode(Byte.toUnsignedInt(bytes[HomaHeader.TYPE_OFFSET]));
        }
    }

    private static List<Sent> drain(HomaEngine engine, long nowNs) {
        List<Sent> sent = new ArrayList<>();
        while (engine.pollTransmit(nowNs, (peer, packet, priority) -> {
            byte[] bytes = new byte[packet.remaining()];
            packet.get(packet.position(), bytes);
            sent.add(new Sent(peer, bytes));
        }, 64) > 0) {
            // drain
        }
        return sent;
    }

    /** A one-packet request DATA, as a client holding cutoff version {@code version} sends it. */
    private static ByteBuffer requestData(long rpcId, int version) {
        ByteBuffer buffer = ByteBuffer.allocate(DataHeader.HEADER_LENGTH + 10);
        new DataHeader().wrap(buffer, 0)
                .writeCommon(PacketType.DATA, CLIENT.getPort(), EnginePair.SERVER.getPort(), rpcId)
                .messageLength(10).incoming(10).cutoffVersion(version).dataOffset(0).segmentOffset(0)
                .doff(DataHeader.DOFF);
        return buffer;
    }

    private static List<CutoffsHeader> cutoffsIn(List<Sent> sent) {
        return sent.stream().filter(s -> s.type() == PacketType.CUTOFFS)
                .map(s -> new CutoffsHeader().wrap(ByteBuffer.wrap(s.bytes()), 0)).toList();
    }

    @Test
    void shouldAnswerStaleCutoffVersionFromAFreshServerOnTheFirstPacket() {
        HomaEngine server = new HomaEngine(CONFIG, EnginePair.SERVER.getPort(), HomaEngine.clockDerivedFirstRpcId(1_764_000_000_000_000L));
        long nowNs = 5_000_000_000L;
        // A client still holding the cutoffs of this server's previous process (version 7).
        server.onPacket(nowNs, CLIENT, requestData(1_000, 7));
        List<CutoffsHeader> cutoffs = cutoffsIn(drain(server, nowNs));
        assertThat(cutoffs).as("CUTOFFS with the first answer, not after 256 messages").hasSize(1);
        int version = cutoffs.get(0).cutoffVersion();
        assertThat(version).isNotEqualTo(7).isNotZero();
        assertThat(cutoffs.get(0).cutoff(0)).as("defaults: every length at the highest level in use")
                .isEqualTo(Integer.MAX_VALUE);
        assertThat(cutoffs.get(0).cutoff(CONFIG.priorityLevels() - 1)).isEqualTo(Integer.MAX_VALUE);

        // The CUTOFFS is lost: the next DATA within the interval draws none, one after it does.
        server.onPacket(nowNs + 1_000_000, CLIENT, requestData(1_002, 7));
        assertThat(cutoffsIn(drain(server, nowNs + 1_000_000))).as("at most once per resend interval").isEmpty();
        long laterNs = nowNs + CONFIG.resendIntervalNs();
        server.onPacket(laterNs, CLIENT, requestData(1_004, 7));
        assertThat(cutoffsIn(drain(server, laterNs))).as("a lost CUTOFFS is repaired")
                .extracting(CutoffsHeader::cutoffVersion).containsExactly(version);

        // A sender that applied them names the current version: no more CUTOFFS.
        long muchLaterNs = laterNs + 10 * CONFIG.resendIntervalNs();
        server.onPacket(muchLaterNs, CLIENT, requestData(1_006, version));
        assertThat(cutoffsIn(drain(server, muchLaterNs))).isEmpty();
    }

    @Test
    void shouldCarryTheServersVersionInTheClientsDataOnceLearned() {
        EnginePair pair = new EnginePair(CONFIG);
        pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {1}));
        pair.collect();
        DataHeader first = new DataHeader().wrap(ByteBuffer.wrap(pair.inFlight.get(0).bytes()), 0);
        assertThat(first.cutoffVersion()).as("a client with no cutoffs from the server says 0").isZero();
        EnginePairTest.runUntilQuiet(pair, new java.util.Random(1));
        long cutoffsSent = pair.server.counters().packetsSent(PacketType.CUTOFFS);
        assertThat(cutoffsSent).isEqualTo(1);

        pair.client.sendRequest(pair.nowNs, EnginePair.SERVER, SendOptions.of(new byte[] {2}));
        pair.collect();
        EnginePair.Packet data = pair.inFlight.stream()
                .filter(p -> p.bytes()[HomaHeader.TYPE_OFFSET] == PacketType.DATA.code()).findFirst().orElseThrow();
        assertThat(new DataHeader().wrap(ByteBuffer.wrap(data.bytes()), 0).cutoffVersion()).isNotZero();
        EnginePairTest.runUntilQuiet(pair, new java.util.Random(2));
        assertThat(pair.server.counters().packetsSent(PacketType.CUTOFFS)).as("no more once current").isEqualTo(cutoffsSent);
    }

    @Test
    void shouldStartARestartedServerUnderAnotherVersion() {
        long previousRun = HomaEngine.clockDerivedFirstRpcId(1_764_000_000_000_000L);
        long restarted = HomaEngine.clockDerivedFirstRpcId(1_764_000_003_000_000L);
        int before = UnscheduledCutoffs.initialVersion(previousRun);
        assertThat(before).isBetween(1, 65535);
        assertThat(UnscheduledCutoffs.initialVersion(restarted)).isBetween(1, 65535).isNotEqualTo(before);
        // Spread: consecutive run starts (a microsecond apart) land on many different versions.
        java.util.Set<Integer> versions = new java.util.HashSet<>();
        for (int i = 0; i < 1_000; i++) {
            versions.add(UnscheduledCutoffs.initialVersion(HomaEngine.clockDerivedFirstRpcId(1_764_000_000_000_000L + i)));
        }
        assertThat(versions).hasSizeGreaterThan(990);
    }
}
