package io.homa.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.engine.trace.Timetrace;
import io.homa.engine.trace.Timetrace.Event;
import io.homa.engine.trace.TraceRecord;
import io.homa.engine.wire.PacketType;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The timetrace: what the engines record about one RPC, and its dump read back. */
class TimetraceTest {
    private static final InetSocketAddress CLIENT = EnginePair.CLIENT;
    private static final InetSocketAddress SERVER = EnginePair.SERVER;

    private final Timetrace clientTrace = Timetrace.withCapacity(1_000);
    private final Timetrace serverTrace = Timetrace.withCapacity(1_000);
    private final HomaEngine client = new HomaEngine(EngineConfig.defaults(), CLIENT.getPort(), 1000, null, clientTrace);
    private final HomaEngine server = new HomaEngine(EngineConfig.defaults(), SERVER.getPort(), 2000, null, serverTrace);
    private long nowNs = 5_000;

    @Test
    void shouldRecordEachStepOfAnRpcWithItsTimeOnBothEnds() throws IOException {
        long rpcId = client.sendRequest(nowNs, SERVER, SendOptions.of(new byte[3_000]));
        AtomicReference<HomaEvent.RequestReceived> request = new AtomicReference<>();
        AtomicReference<HomaEvent.ResponseReceived> response = new AtomicReference<>();
        for (int round = 0; round < 20 && response.get() == null; round++) {
            move(client, CLIENT, server);
            move(server, SERVER, client);
            HomaEvent event;
            while ((event = server.pollEvent()) != null) {
                HomaEvent.RequestReceived received = (HomaEvent.RequestReceived) event;
                request.set(received);
                server.sendResponse(nowNs, received.client(), received.rpcId(), SendOptions.of(new byte[100]));
            }
            while ((event = client.pollEvent()) != null) {
                response.set((HomaEvent.ResponseReceived) event);
            }
        }
        assertThat(response.get()).as("the RPC completed").isNotNull();

        List<TraceRecord> c = readBack(clientTrace, CLIENT);
        List<TraceRecord> s = readBack(serverTrace, SERVER);
        assertThat(c).allMatch(r -> r.rpcId() == rpcId && !r.server() && r.peerKey() == Timetrace.peerKey(SERVER));
        assertThat(s).allMatch(r -> r.rpcId() == rpcId && r.server() && r.peerKey() == Timetrace.peerKey(CLIENT));
        assertThat(c.get(0).event()).isEqualTo(Event.QUEUED);
        assertThat(c.get(0).lengthBytes()).isEqualTo(3_000);
        assertThat(c).filteredOn(r -> r.event() == Event.XMIT && r.type() == PacketType.DATA)
                .extracting(TraceRecord::offset).as("the request's three packets, then its first again after first"
                        + " contact").contains(0, 1_416, 2_832);
        assertThat(s).filteredOn(r -> r.event() == Event.RECV && r.type() == PacketType.DATA)
                .extracting(TraceRecord::lengthBytes).contains(1_416, 168);
        assertThat(s).filteredOn(r -> r.event() == Event.DELIVERED).singleElement()
                .satisfies(r -> assertThat(r.lengthBytes()).isEqualTo(3_000));
        assertThat(s).filteredOn(r -> r.event() == Event.QUEUED).singleElement()
                .satisfies(r -> assertThat(r.lengthBytes()).isEqualTo(100));
        assertThat(c.get(c.size() - 1).event()).as("the client's last word").isIn(Event.DELIVERED, Event.XMIT);
        assertThat(c).filteredOn(r -> r.event() == Event.DELIVERED).singleElement()
                .satisfies(r -> assertThat(r.lengthBytes()).isEqualTo(100));
        assertThat(c).extracting(TraceRecord::timeNs).isSorted();
    }

    @Test
    void shouldKeepTheLatestEventsOfEachThreadWhenTheRingIsFull() throws IOException {
        Timetrace trace = Timetrace.withCapacity(4);
        for (int i = 0; i < 10; i++) {
            trace.record(i, Event.XMIT, false, SERVER, 2 * i, PacketType.DATA, i, 100);
        }
        assertThat(trace.size()).isEqualTo(4);
        assertThat(readBack(trace, CLIENT)).extracting(TraceRecord::timeNs).containsExactly(6L, 7L, 8L, 9L);
        trace.clear();
        assertThat(trace.size()).isZero();
    }

    @Test
    void shouldSaturateFieldsTooLargeForTheirBitsAndKeepTheRest() throws IOException {
        Timetrace trace = Timetrace.withCapacity(4);
        trace.record(-7, Event.CALL_END, true, SERVER, 43, PacketType.NEED_ACK, Integer.MAX_VALUE, 1 << 30);
        TraceRecord r = readBack(trace, CLIENT).get(0);
        assertThat(r.timeNs()).isEqualTo(-7);
        assertThat(r.event()).isEqualTo(Event.CALL_END);
        assertThat(r.server()).isTrue();
        assertThat(r.type()).isEqualTo(PacketType.NEED_ACK);
        assertThat(r.rpcId()).as("the S bit dropped").isEqualTo(42);
        assertThat(r.offset()).isEqualTo((1 << 28) - 1);
        assertThat(r.lengthBytes()).isEqualTo((1 << 24) - 1);
    }

    @Test
    void shouldRecordNothingWhenOff() {
        Timetrace off = Timetrace.withCapacity(0);
        off.record(1, Event.XMIT, false, SERVER, 2, PacketType.DATA, 0, 1);
        assertThat(off).isSameAs(Timetrace.off());
        assertThat(off.enabled()).isFalse();
        assertThat(off.size()).isZero();
        assertThatThrownBy(() -> Timetrace.withCapacity(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("between 0 and");
    }

    @Test
    void shouldRefuseToReadWhatIsNotADump() {
        assertThatThrownBy(() -> TraceRecord.read(new ByteArrayInputStream("hello\n".getBytes(StandardCharsets.US_ASCII))))
                .isInstanceOf(IOException.class).hasMessageContaining("not a timetrace dump");
        assertThatThrownBy(() -> TraceRecord.read(new ByteArrayInputStream(new byte[0])))
                .isInstanceOf(IOException.class);
    }

    @Test
    void shouldRecordAHeldPacerOnceUntilItsNextDataPacket() throws IOException {
        // At 1 Mbit/s the pacer's bucket holds two packets: the third waits about 12 ms.
        Timetrace trace = Timetrace.withCapacity(1_000);
        HomaEngine paced = new HomaEngine(EngineConfig.defaults().toBuilder().linkMbps(1).build(), CLIENT.getPort(), 1000,
                null, trace);
        long rpcId = paced.sendRequest(nowNs, SERVER, SendOptions.of(new byte[8_000]));
        int sent = 0;
        for (int poll = 0; poll < 5; poll++) {
            sent += paced.pollTransmit(nowNs + poll, (peer, packet, priority) -> {}, 64);
        }
        List<TraceRecord> held = readBack(trace, CLIENT).stream().filter(r -> r.event() == Event.PACER_HOLD).toList();
        assertThat(sent).as("packets the bucket let out").isBetween(1, 3);
        assertThat(held).as("five polls of one hold").singleElement()
                .satisfies(r -> assertThat(r.rpcId()).isEqualTo(rpcId));

        sent = paced.pollTransmit(nowNs + 20_000_000, (peer, packet, priority) -> {}, 64);
        paced.pollTransmit(nowNs + 20_000_001, (peer, packet, priority) -> {}, 64);
        assertThat(sent).as("the bucket refilled").isPositive();
        assertThat(readBack(trace, CLIENT)).filteredOn(r -> r.event() == Event.PACER_HOLD)
                .as("a new hold after the next DATA packet").hasSize(2);
    }

    private static List<TraceRecord> readBack(Timetrace trace, InetSocketAddress local) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        trace.writeTo(out, local);
        TraceRecord.Dump dump = TraceRecord.read(new ByteArrayInputStream(out.toByteArray()));
        assertThat(dump.localKey()).isEqualTo(Timetrace.peerKey(local));
        return dump.records();
    }

    private void move(HomaEngine from, InetSocketAddress fromAddress, HomaEngine to) {
        List<byte[]> packets = new ArrayList<>();
        nowNs += 1_000;
        from.pollTransmit(nowNs, (peer, packet, priority) -> {
            byte[] bytes = new byte[packet.remaining()];
            packet.get(packet.position(), bytes);
            packets.add(bytes);
        }, 64);
        nowNs += 1_000;
        for (byte[] packet : packets) {
            to.onPacket(nowNs, fromAddress, ByteBuffer.wrap(packet));
        }
    }
}
