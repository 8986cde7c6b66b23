package io.homa.bench.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.EngineConfig;
import io.homa.engine.HomaEngine;
import io.homa.engine.HomaEvent;
import io.homa.engine.SendOptions;
import io.homa.engine.trace.Timetrace;
import io.homa.engine.trace.Timetrace.Event;
import io.homa.engine.trace.TraceRecord;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two engines exchange RPCs over a simulated network with known delays, recording timetraces; the
 * breakdown must find each delay in its segment and add up to the call's time.
 */
class TimetraceBreakdownTest {
    private static final InetSocketAddress CLIENT = new InetSocketAddress("10.0.0.1", 5000);
    private static final InetSocketAddress SERVER = new InetSocketAddress("10.0.0.2", 4000);
    private static final long WIRE_NS = 7_000;
    private static final long HANDLER_NS = 30_000;
    private static final long HOP_NS = 2_000;

    private final Timetrace clientTrace = Timetrace.withCapacity(10_000);
    private final Timetrace serverTrace = Timetrace.withCapacity(10_000);
    private final HomaEngine client = new HomaEngine(EngineConfig.defaults(), CLIENT.getPort(), 1000, null, clientTrace);
    private final HomaEngine server = new HomaEngine(EngineConfig.defaults(), SERVER.getPort(), 2000, null, serverTrace);
    private long nowNs = 1_000_000;

    @Test
    void shouldPutEachDelayInItsSegmentAndAddUpToTheCall(@TempDir Path dir) throws IOException {
        // The first call meets first contact (a RESEND round trip) on the way; the rest do not.
        for (int i = 0; i < 5; i++) {
            call(100 + i);
        }
        clientTrace.writeTo(dir.resolve("client.trace"), CLIENT);
        serverTrace.writeTo(dir.resolve("server.trace"), SERVER);

        List<TimetraceBreakdown.Rpc> rpcs = TimetraceBreakdown.fromDirectory(dir);

        assertThat(rpcs).hasSize(5);
        for (TimetraceBreakdown.Rpc rpc : rpcs) {
            assertThat(Arrays.stream(rpc.segmentsNs()).sum()).as("segments add up").isEqualTo(rpc.totalNs());
            assertThat(Arrays.stream(rpc.segmentsNs()).min().orElseThrow()).as("no segment negative").isNotNegative();
        }
        TimetraceBreakdown.Rpc last = rpcs.get(4);
        assertThat(last.requestBytes()).isEqualTo(104);
        long[] s = last.segmentsNs();
        assertThat(s[0]).as("call to engine").isEqualTo(HOP_NS);
        assertThat(s[3]).as("network: request").isEqualTo(WIRE_NS);
        assertThat(s[5]).as("handler").isEqualTo(HANDLER_NS);
        assertThat(s[8]).as("network: response").isEqualTo(WIRE_NS);
        assertThat(s[10]).as("completion").isEqualTo(HOP_NS);
        assertThat(last.totalNs()).isEqualTo(2 * HOP_NS + 2 * WIRE_NS + HANDLER_NS + s[1] + s[4] + s[6] + s[9]);

        List<TimetraceBreakdown.Row> rows = TimetraceBreakdown.rows(rpcs, length -> length <= 104, 50, 99);
        assertThat(rows).hasSize(2);
        assertThat(rows.get(0).totalUs()).isEqualTo(Arrays.stream(rows.get(0).segmentsUs()).sum(),
                org.assertj.core.data.Offset.offset(1e-6));
        assertThat(rows.get(1).totalUs()).as("the first call, which met first contact, is the slowest")
                .isGreaterThan(rows.get(0).totalUs());
        assertThat(TimetraceReport.markdown(java.util.Map.of("rows", TimetraceBreakdown.json(rows))))
                .contains("| network: request (host queue, switch) | 7 | 7 |");
        assertThat(TimetraceBreakdown.rows(rpcs, length -> length > 1_000, 50)).isEmpty();
    }

    @Test
    void shouldSkipAnRpcWhoseServerSideIsMissing() throws IOException {
        call(100);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        clientTrace.writeTo(out, CLIENT);
        TraceRecord.Dump clientOnly = TraceRecord.read(new ByteArrayInputStream(out.toByteArray()));
        assertThat(TimetraceBreakdown.rpcs(List.of(clientOnly))).isEmpty();
    }

    /** One call: the caller's hop, the network's delay each way, the handler's time. */
    private void call(int requestBytes) {
        long subscribedNs = nowNs;
        nowNs += HOP_NS;
        long rpcId = client.sendRequest(nowNs, SERVER, SendOptions.of(new byte[requestBytes]));
        HomaEvent.ResponseReceived response = null;
        for (int round = 0; round < 20 && response == null; round++) {
            move(client, CLIENT, server);
            HomaEvent event;
            while ((event = server.pollEvent()) != null) {
                HomaEvent.RequestReceived request = (HomaEvent.RequestReceived) event;
                serverTrace.record(nowNs, Event.HANDLER_START, true, request.client(), request.rpcId(), null, 0, 0);
                nowNs += HANDLER_NS;
                serverTrace.record(nowNs, Event.HANDLER_END, true, request.client(), request.rpcId(), null, 0, 0);
                server.sendResponse(nowNs, request.client(), request.rpcId(), SendOptions.of(new byte[10]));
            }
            move(server, SERVER, client);
            while ((event = client.pollEvent()) != null) {
                response = (HomaEvent.ResponseReceived) event;
            }
        }
        assertThat(response).isNotNull();
        nowNs += HOP_NS;
        clientTrace.record(subscribedNs, Event.CALL_START, false, SERVER, rpcId, null, 0, 0);
        clientTrace.record(nowNs, Event.CALL_END, false, SERVER, rpcId, null, 0, 10);
        move(client, CLIENT, server); // the ACKs, before the next call
        nowNs += 1_000_000;
    }

    private void move(HomaEngine from, InetSocketAddress fromAddress, HomaEngine to) {
        List<byte[]> packets = new ArrayList<>();
        from.pollTransmit(nowNs, (peer, packet, priority) -> {
            byte[] bytes = new byte[packet.remaining()];
            packet.get(packet.position(), bytes);
            packets.add(bytes);
        }, 64);
        if (packets.isEmpty()) {
            return;
        }
        nowNs += WIRE_NS;
        for (byte[] packet : packets) {
            to.onPacket(nowNs, fromAddress, ByteBuffer.wrap(packet));
        }
    }
}
