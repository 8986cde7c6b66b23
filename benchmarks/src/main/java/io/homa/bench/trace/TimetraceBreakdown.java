package io.homa.bench.trace;

import io.homa.engine.trace.Timetrace.Event;
import io.homa.engine.trace.TraceRecord;
import io.homa.engine.wire.PacketType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongPredicate;
import java.util.stream.Stream;

/**
 * Where each RPC's time went, from the timetraces of its client and its server
 * ({@link io.homa.engine.trace.Timetrace}, one clock for both: processes of one machine). Each RPC
 * whose client recorded its whole call is cut at the events both ends recorded into consecutive
 * segments, which add up to the call's time exactly:
 * <ol>
 *   <li>call to engine: the caller's subscribe to the request handed to the client's engine (the
 *       hop to the event loop);
 *   <li>sender queue and pacer, client: to the request's completing DATA packet written to the
 *       socket; of it, pacer: the time the pacer held the message for credit;
 *   <li>network, request: that packet written to the socket to read from the server's socket:
 *       the hosts' queues and the switch (and the kernels and the reading loop's wake-up);
 *   <li>receiver, server: that packet read to the request delivered;
 *   <li>handler: delivered to the response handed to the server's engine (dispatch, the
 *       application's handler, the hop back to the loop);
 *   <li>sender queue and pacer, server; network, response; receiver, client: as for the request;
 *   <li>completion: the response delivered to the caller's call completed.
 * </ol>
 * The completing packet of a message is the last DATA its receiver read before delivering it; its
 * send is the latest write of a packet at that offset before it was read.
 */
public final class TimetraceBreakdown {
    /** Segment names, in the order of the call. */
    public static final List<String> SEGMENTS = List.of(
            "call to engine (client)",
            "sender queue (client)",
            "pacer (client)",
            "network: request (host queue, switch)",
            "receiver (server)",
            "handler (server)",
            "sender queue (server)",
            "pacer (server)",
            "network: response (host queue, switch)",
            "receiver (client)",
            "completion (client)");

    /**
     * One RPC taken apart.
     *
     * @param requestBytes the request's length
     * @param startNs the call's start, in the traces' clock
     * @param totalNs the call's time, subscribe to completion
     * @param segmentsNs the time of each of {@link #SEGMENTS}, in order, summing to {@code totalNs}
     */
    public record Rpc(int requestBytes, long startNs, long totalNs, long[] segmentsNs) {}

    /**
     * The segments of the RPCs around one percentile of the call time.
     *
     * @param percentile e.g. 50 or 99
     * @param rpcs RPCs averaged (those whose call time is within half a percent of it, at least one)
     * @param totalUs their mean call time, µs
     * @param segmentsUs their mean time in each of {@link #SEGMENTS}, µs
     */
    public record Row(double percentile, int rpcs, double totalUs, double[] segmentsUs) {}

    private TimetraceBreakdown() {}

    /** Reads every {@code *.trace} file of {@code dir} and takes apart each RPC they hold whole. */
    public static List<Rpc> fromDirectory(Path dir) throws IOException {
        return rpcs(readDumps(dir));
    }

    /** Every {@code *.trace} file of {@code dir} read, in name order; none if there is no such directory. */
    static List<TraceRecord.Dump> readDumps(Path dir) throws IOException {
        List<TraceRecord.Dump> dumps = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return dumps;
        }
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.filter(f -> f.getFileName().toString().endsWith(".trace")).sorted().toList()) {
                dumps.add(TraceRecord.read(file));
            }
        }
        return dumps;
    }

    /** Takes apart each RPC that the dumps hold whole (the client's call and the server's side). */
    public static List<Rpc> rpcs(List<TraceRecord.Dump> dumps) {
        Map<Key, List<TraceRecord>> clients = new HashMap<>();
        Map<Key, List<TraceRecord>> servers = new HashMap<>();
        for (TraceRecord.Dump dump : dumps) {
            for (TraceRecord r : dump.records()) {
                if (r.server()) {
                    servers.computeIfAbsent(new Key(r.peerKey(), r.rpcId()), k -> new ArrayList<>()).add(r);
                } else {
                    clients.computeIfAbsent(new Key(dump.localKey(), r.rpcId()), k -> new ArrayList<>()).add(r);
                }
            }
        }
        List<Rpc> out = new ArrayList<>();
        for (Map.Entry<Key, List<TraceRecord>> entry : clients.entrySet()) {
            List<TraceRecord> server = servers.get(entry.getKey());
            if (server != null) {
                Rpc rpc = takeApart(sorted(entry.getValue()), sorted(server));
                if (rpc != null) {
                    out.add(rpc);
                }
            }
        }
        out.sort(Comparator.comparingLong(Rpc::startNs));
        return out;
    }

    /**
     * The segments at the {@code percentiles} of the call time of the RPCs whose request length
     * passes {@code lengthFilter}, or an empty list if none does.
     */
    public static List<Row> rows(List<Rpc> rpcs, LongPredicate lengthFilter, double... percentiles) {
        List<Rpc> chosen = new ArrayList<>(rpcs.stream().filter(r -> lengthFilter.test(r.requestBytes())).toList());
        if (chosen.isEmpty()) {
            return List.of();
        }
        chosen.sort(Comparator.comparingLong(Rpc::totalNs));
        List<Row> rows = new ArrayList<>();
        int n = chosen.size();
        for (double p : percentiles) {
            int from = (int) Math.max(0, Math.min(n - 1, Math.floor((p - 0.5) / 100 * n)));
            int to = (int) Math.max(from + 1, Math.min(n, Math.ceil((p + 0.5) / 100 * n)));
            double[] segments = new double[SEGMENTS.size()];
            double total = 0;
            for (int i = from; i < to; i++) {
                Rpc rpc = chosen.get(i);
                total += rpc.totalNs();
                for (int s = 0; s < segments.length; s++) {
                    segments[s] += rpc.segmentsNs()[s];
                }
            }
            int count = to - from;
            for (int s = 0; s < segments.length; s++) {
                segments[s] = segments[s] / count / 1_000.0;
            }
            rows.add(new Row(p, count, total / count / 1_000.0, segments));
        }
        return rows;
    }

    /** The rows as JSON-ready maps. */
    public static List<Map<String, Object>> json(List<Row> rows) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Row row : rows) {
            Map<String, Object> segments = new LinkedHashMap<>();
            for (int s = 0; s < SEGMENTS.size(); s++) {
                segments.put(SEGMENTS.get(s), round(row.segmentsUs()[s]));
            }
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("percentile", row.percentile());
            entry.put("rpcs", row.rpcs());
            entry.put("total_us", round(row.totalUs()));
            entry.put("segments_us", segments);
            out.add(entry);
        }
        return out;
    }

    private static double round(double value) {
        return Math.round(value * 10) / 10.0;
    }

    private record Key(long clientKey, long rpcId) {}

    private static List<TraceRecord> sorted(List<TraceRecord> records) {
        records.sort(null);
        return records;
    }

    /** The segments of one RPC, or null if either trace lacks an event the cut needs. */
    static Rpc takeApart(List<TraceRecord> client, List<TraceRecord> server) {
        TraceRecord callStart = first(client, Event.CALL_START, Long.MIN_VALUE);
        TraceRecord callEnd = first(client, Event.CALL_END, Long.MIN_VALUE);
        TraceRecord requestQueued = first(client, Event.QUEUED, Long.MIN_VALUE);
        TraceRecord requestDelivered = first(server, Event.DELIVERED, Long.MIN_VALUE);
        TraceRecord responseQueued = first(server, Event.QUEUED, Long.MIN_VALUE);
        TraceRecord responseDelivered = first(client, Event.DELIVERED, Long.MIN_VALUE);
        if (callStart == null || callEnd == null || requestQueued == null || requestDelivered == null
                || responseQueued == null || responseDelivered == null) {
            return null;
        }
        TraceRecord requestRead = lastDataBefore(server, Event.RECV, requestDelivered.timeNs(), -1);
        TraceRecord responseRead = lastDataBefore(client, Event.RECV, responseDelivered.timeNs(), -1);
        if (requestRead == null || responseRead == null) {
            return null;
        }
        TraceRecord requestSent = lastDataBefore(client, Event.XMIT, requestRead.timeNs(), requestRead.offset());
        TraceRecord responseSent = lastDataBefore(server, Event.XMIT, responseRead.timeNs(), responseRead.offset());
        if (requestSent == null || responseSent == null) {
            return null;
        }
        long[] t = {callStart.timeNs(), requestQueued.timeNs(), requestSent.timeNs(), requestRead.timeNs(),
                requestDelivered.timeNs(), responseQueued.timeNs(), responseSent.timeNs(), responseRead.timeNs(),
                responseDelivered.timeNs(), callEnd.timeNs()};
        for (int i = 1; i < t.length; i++) {
            if (t[i] < t[i - 1]) {
                return null; // out of order: a retransmission the cut cannot place
            }
        }
        long clientPacerNs = pacerNs(client, t[1], t[2]);
        long serverPacerNs = pacerNs(server, t[5], t[6]);
        long[] segments = {
            t[1] - t[0],
            t[2] - t[1] - clientPacerNs,
            clientPacerNs,
            t[3] - t[2],
            t[4] - t[3],
            t[5] - t[4],
            t[6] - t[5] - serverPacerNs,
            serverPacerNs,
            t[7] - t[6],
            t[8] - t[7],
            t[9] - t[8]};
        return new Rpc(requestQueued.lengthBytes(), t[0], t[9] - t[0], segments);
    }

    /**
     * The time the pacer held this side's message between {@code fromNs} and {@code toNs}: from
     * each first hold after a DATA packet to the next DATA packet written.
     */
    private static long pacerNs(List<TraceRecord> side, long fromNs, long toNs) {
        long heldNs = 0;
        long holdStartNs = Long.MIN_VALUE;
        for (TraceRecord r : side) {
            if (r.timeNs() < fromNs) {
                continue;
            }
            if (r.timeNs() > toNs) {
                break;
            }
            if (r.event() == Event.PACER_HOLD && holdStartNs == Long.MIN_VALUE) {
                holdStartNs = r.timeNs();
            } else if (r.event() == Event.XMIT && r.type() == PacketType.DATA && holdStartNs != Long.MIN_VALUE) {
                heldNs += r.timeNs() - holdStartNs;
                holdStartNs = Long.MIN_VALUE;
            }
        }
        return heldNs;
    }

    private static TraceRecord first(List<TraceRecord> side, Event event, long notBeforeNs) {
        for (TraceRecord r : side) {
            if (r.event() == event && r.timeNs() >= notBeforeNs) {
                return r;
            }
        }
        return null;
    }

    /** The last DATA {@code event} at or before {@code atNs}, at {@code offset} (any when negative). */
    private static TraceRecord lastDataBefore(List<TraceRecord> side, Event event, long atNs, int offset) {
        TraceRecord found = null;
        for (TraceRecord r : side) {
            if (r.timeNs() > atNs) {
                break;
            }
            if (r.event() == event && r.type() == PacketType.DATA && (offset < 0 || r.offset() == offset)) {
                found = r;
            }
        }
        return found;
    }
}
