package io.homa.engine.trace;

import io.homa.engine.wire.PacketType;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An opt-in record of what happens to each RPC and packet, with the time, as Linux Homa's
 * {@code timetrace.c} ({@code tt_record}) keeps one: an endpoint's engine records each message
 * handed to it, each packet written to or read from the socket, each hold of the pacer and each
 * delivery; the transport records calls and handlers. A breakdown (the benchmarks'
 * {@code TimetraceBreakdown}) then merges the client's and the server's traces (one clock on one machine) into where each RPC's time went.
 *
 * <p>Events go into a ring per recording thread (the event loop's, and those of the threads that
 * start calls or finish handlers), which overwrites its oldest events when full. A trace that is
 * off ({@link #off()}) returns from {@link #record} at its first test, which the JIT folds
 * away on a field it sees never change; its cost on the send and receive paths is measured by the
 * {@code TimetraceBenchmark} JMH benchmark.
 *
 * <p>Times are {@link System#nanoTime()}'s (CLOCK_MONOTONIC on Linux, shared by every process and
 * network namespace of one machine), or whatever clock the engine is driven with. Recording is
 * thread-safe (each thread writes its own ring); {@link #writeTo} is meant for a quiescent trace
 * (events recorded while it runs may be torn) and never throws for the recording threads.
 */
public final class Timetrace {
    /** What happened. Stored by ordinal: add new ones at the end. */
    public enum Event {
        /** A caller started a call (its own thread, before the hop to the event loop); rpcid as assigned later. */
        CALL_START,
        /** A message was handed to the engine ({@code sendRequest}/{@code sendResponse}); length = message bytes. */
        QUEUED,
        /** The pacer had no credit for the message at the head of the sender's queue. */
        PACER_HOLD,
        /** A packet went to the socket; offset = DATA's offset or GRANT's granted offset. */
        XMIT,
        /** A packet came from the socket and was handed to the engine. */
        RECV,
        /** A whole message was delivered to the application (request to the server, response to the client). */
        DELIVERED,
        /** The server's transport handed the request to the application's handler. */
        HANDLER_START,
        /** The application handed the server's transport its response. */
        HANDLER_END,
        /** The caller's call completed (response or failure). */
        CALL_END
    }

    /** Largest ring, events per thread. */
    public static final int MAX_EVENTS_PER_THREAD = 1 << 26;
    /** First line of a dump, followed by the local address. */
    static final String MAGIC = "homa-timetrace-1";

    private static final Timetrace OFF = new Timetrace(0);
    private static final Event[] EVENTS = Event.values();
    private static final PacketType[] TYPES = PacketType.values();

    private final boolean enabled;
    private final int eventsPerThread;
    private final List<Ring> rings = new CopyOnWriteArrayList<>();
    private final ThreadLocal<Ring> ring;

    private Timetrace(int eventsPerThread) {
        this.enabled = eventsPerThread > 0;
        this.eventsPerThread = eventsPerThread;
        this.ring = enabled ? ThreadLocal.withInitial(this::newRing) : null;
    }

    /** The trace that records nothing. */
    public static Timetrace off() {
        return OFF;
    }

    /**
     * A trace that keeps the latest {@code eventsPerThread} events of each recording thread (32
     * bytes each, allocated when a thread first records).
     *
     * @param eventsPerThread 0 for {@link #off()}, else 1..{@value #MAX_EVENTS_PER_THREAD}
     * @throws IllegalArgumentException if {@code eventsPerThread} is outside 0..{@value #MAX_EVENTS_PER_THREAD}
     */
    public static Timetrace withCapacity(int eventsPerThread) {
        if (eventsPerThread < 0 || eventsPerThread > MAX_EVENTS_PER_THREAD) {
            throw new IllegalArgumentException("timetrace events per thread must be between 0 and "
                    + MAX_EVENTS_PER_THREAD + ", was " + eventsPerThread);
        }
        return eventsPerThread == 0 ? OFF : new Timetrace(eventsPerThread);
    }

    /** Whether events are kept. */
    public boolean enabled() {
        return enabled;
    }

    /**
     * Records one event (nothing when off).
     *
     * @param timeNs when, in nanoseconds of the engine's clock
     * @param event what
     * @param server whether this endpoint is the RPC's server (else its client)
     * @param peer the other endpoint of the RPC
     * @param rpcId the RPC's id as its client chose it (the wire's S bit is ignored)
     * @param type the packet's type, or null for events about messages
     * @param offset byte offset (DATA, GRANT), 0..2^28-1, else 0
     * @param lengthBytes bytes (of the packet's data, or of the message), 0..2^24-1, larger ones saturate
     */
    public void record(long timeNs, Event event, boolean server, InetSocketAddress peer, long rpcId,
            PacketType type, int offset, int lengthBytes) {
        if (!enabled) {
            return;
        }
        ring.get().add(timeNs, peerKey(peer), rpcId & ~1L,
                TraceRecord.pack(event, server, type, offset, lengthBytes));
    }

    /**
     * A peer as one long: an IPv4 address's 32 bits above its 16-bit port; other addresses by
     * their hash (still distinct from every IPv4 key in practice, as bit 48 is set).
     */
    public static long peerKey(InetSocketAddress peer) {
        if (peer == null) {
            return 0;
        }
        if (peer.getAddress() instanceof Inet4Address v4) {
            byte[] a = v4.getAddress();
            long ip = ((a[0] & 0xFFL) << 24) | ((a[1] & 0xFFL) << 16) | ((a[2] & 0xFFL) << 8) | (a[3] & 0xFFL);
            return ip << 16 | peer.getPort();
        }
        return 1L << 48 | (peer.getAddress() == null ? 0 : (peer.getAddress().hashCode() & 0xFFFF_FFFFL)) << 16
                | peer.getPort();
    }

    /** Events kept now, over every thread's ring. */
    public long size() {
        long total = 0;
        for (Ring r : rings) {
            total += r.size();
        }
        return total;
    }

    /** Forgets every event kept (the rings stay allocated). Meant for a quiescent trace. */
    public void clear() {
        for (Ring r : rings) {
            r.clear();
        }
    }

    /**
     * Writes every event kept to {@code file} (created or replaced), in the format
     * {@link TraceRecord#read} reads: a text line with {@value #MAGIC} and the local endpoint,
     * then 32 bytes per event, thread by thread, each thread's oldest first (the reader puts them
     * in time order). Nothing is allocated per event: a process may hold rings of hundreds of
     * megabytes and write them at exit.
     *
     * @param local this endpoint's address, as its peers see it
     * @throws IOException if the file cannot be written
     */
    public void writeTo(Path file, InetSocketAddress local) throws IOException {
        try (OutputStream out = Files.newOutputStream(file)) {
            writeTo(out, local);
        }
    }

    /** As {@link #writeTo(Path, InetSocketAddress)}, to a stream it does not close. */
    public void writeTo(OutputStream stream, InetSocketAddress local) throws IOException {
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(stream, 1 << 16));
        out.write((MAGIC + " " + peerKey(local) + "\n").getBytes(StandardCharsets.US_ASCII));
        for (Ring r : rings) {
            r.writeTo(out);
        }
        out.flush();
    }

    static Event event(int ordinal) {
        return EVENTS[ordinal];
    }

    static PacketType type(int code) {
        return code == 0 ? null : TYPES[code - 1];
    }

    private Ring newRing() {
        Ring r = new Ring(eventsPerThread);
        rings.add(r);
        return r;
    }

    /** One thread's events: parallel arrays, the oldest overwritten when full. */
    private static final class Ring {
        private final long[] times;
        private final long[] peers;
        private final long[] rpcIds;
        private final long[] packed;
        private long count;

        Ring(int capacity) {
            times = new long[capacity];
            peers = new long[capacity];
            rpcIds = new long[capacity];
            packed = new long[capacity];
        }

        void add(long timeNs, long peer, long rpcId, long info) {
            int i = (int) (count % times.length);
            times[i] = timeNs;
            peers[i] = peer;
            rpcIds[i] = rpcId;
            packed[i] = info;
            count++;
        }

        long size() {
            return Math.min(count, times.length);
        }

        void clear() {
            count = 0;
        }

        void writeTo(DataOutputStream out) throws IOException {
            long end = count;
            for (long k = end - Math.min(end, times.length); k < end; k++) {
                int i = (int) (k % times.length);
                out.writeLong(times[i]);
                out.writeLong(peers[i]);
                out.writeLong(rpcIds[i]);
                out.writeLong(packed[i]);
            }
        }
    }
}
