package io.homa.engine.trace;

import io.homa.engine.trace.Timetrace.Event;
import io.homa.engine.wire.PacketType;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One event of a {@link Timetrace}, as written to and read from a dump.
 *
 * @param timeNs when, in nanoseconds of the recording engine's clock
 * @param peerKey the RPC's other endpoint ({@link Timetrace#peerKey})
 * @param rpcId the RPC's id as its client chose it (even)
 * @param packed event, role, packet type, offset and length, in one long (see the accessors)
 */
public record TraceRecord(long timeNs, long peerKey, long rpcId, long packed) implements Comparable<TraceRecord> {
    private static final int OFFSET_BITS = 28;
    private static final int LENGTH_BITS = 24;

    /** What happened. */
    public Event event() {
        return Timetrace.event((int) (packed & 0xF));
    }

    /** Whether the recording endpoint is the RPC's server. */
    public boolean server() {
        return (packed & 0x10) != 0;
    }

    /** The packet's type, or null for an event about a message. */
    public PacketType type() {
        return Timetrace.type((int) (packed >>> 5 & 0xF));
    }

    /** Length in bytes, saturated at 2^24-1. */
    public int lengthBytes() {
        return (int) (packed >>> 9 & ((1L << LENGTH_BITS) - 1));
    }

    /** Offset in bytes (DATA's offset, GRANT's granted offset), saturated at 2^28-1. */
    public int offset() {
        return (int) (packed >>> (9 + LENGTH_BITS) & ((1L << OFFSET_BITS) - 1));
    }

    @Override
    public int compareTo(TraceRecord other) {
        return Long.compare(timeNs, other.timeNs);
    }

    static long pack(Event event, boolean server, PacketType type, int offset, int lengthBytes) {
        long o = Math.min(Math.max(offset, 0), (1L << OFFSET_BITS) - 1);
        long l = Math.min(Math.max(lengthBytes, 0), (1L << LENGTH_BITS) - 1);
        return event.ordinal() | (server ? 0x10 : 0) | (long) (type == null ? 0 : type.ordinal() + 1) << 5
                | l << 9 | o << (9 + LENGTH_BITS);
    }

    /**
     * A dump read back: the recording endpoint and its events in time order.
     *
     * @param localKey the recording endpoint ({@link Timetrace#peerKey})
     * @param records its events, oldest first
     */
    public record Dump(long localKey, List<TraceRecord> records) {}

    /**
     * Reads a dump written by {@link Timetrace#writeTo}.
     *
     * @throws IOException if the file cannot be read or is not a timetrace dump
     */
    public static Dump read(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return read(in);
        }
    }

    /** As {@link #read(Path)}, from a stream it does not close. */
    public static Dump read(InputStream stream) throws IOException {
        DataInputStream in = new DataInputStream(new BufferedInputStream(stream, 1 << 16));
        StringBuilder header = new StringBuilder();
        int c;
        while ((c = in.read()) != '\n') {
            if (c < 0 || header.length() > 200) {
                throw new IOException("not a timetrace dump: no header line");
            }
            header.append((char) c);
        }
        String[] fields = new String(header.toString().getBytes(StandardCharsets.US_ASCII), StandardCharsets.US_ASCII)
                .split(" ");
        if (fields.length != 2 || !fields[0].equals(Timetrace.MAGIC)) {
            throw new IOException("not a timetrace dump: header '" + header + "'");
        }
        long localKey;
        try {
            localKey = Long.parseLong(fields[1]);
        } catch (NumberFormatException e) {
            throw new IOException("not a timetrace dump: header '" + header + "'", e);
        }
        List<TraceRecord> records = new ArrayList<>();
        while (true) {
            long timeNs;
            try {
                timeNs = in.readLong();
            } catch (EOFException end) {
                break;
            }
            records.add(new TraceRecord(timeNs, in.readLong(), in.readLong(), in.readLong()));
        }
        records.sort(null); // written thread by thread
        return new Dump(localKey, records);
    }
}
