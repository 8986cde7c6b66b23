package io.homa.engine.incast;

import io.homa.engine.HomaEngine;
import io.homa.engine.HomaEvent;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * A deterministic packet-level model of one top-of-rack switch with hosts around it (a star),
 * driven by a virtual clock in nanoseconds. Each host runs one {@link HomaEngine}.
 *
 * <p>Every host has a full-duplex link of {@code linkMbps}:
 * <ul>
 *   <li>Uplink (host to switch): the host serializes one packet at a time at link rate. The
 *       engine's {@link HomaEngine#pollTransmit} is asked for exactly one packet whenever the
 *       uplink is free, so a host can never inject faster than its link, and packets it has not
 *       yet handed out stay in the engine (which decides their order: control first, SRPT).
 *   <li>Switch: store and forward; a packet reaches the egress port of its destination's
 *       downlink {@code propagationNs} after its last bit left the sender.
 *   <li>Downlink egress port: one queue per priority 0..7 (strict priority, highest first; FIFO
 *       within a level), or a single FIFO queue if {@code priorityQueues} is false. All queues
 *       of a port share one drop-tail buffer of {@code bufferBytes}: a packet whose frame does
 *       not fit is dropped and counted. A packet holds its buffer space until its last bit has
 *       left the port. The port drains at link rate; the packet reaches the host
 *       {@code propagationNs} later.
 * </ul>
 *
 * <p>Sizes: the engine hands out a Homa packet (the UDP payload); its frame, which occupies the
 * switch buffer, adds {@value #IP_UDP_HEADER_BYTES} bytes of IPv4 + UDP header and
 * {@value #ETHERNET_HEADER_FCS_BYTES} bytes of Ethernet header and FCS; serializing it costs
 * another {@value #ETHERNET_PREAMBLE_GAP_BYTES} bytes of preamble and inter-frame gap.
 *
 * <p>Nothing is random: the same inputs always give the same run.
 */
final class StarNetwork {
    static final int IP_UDP_HEADER_BYTES = 28;
    static final int ETHERNET_HEADER_FCS_BYTES = 18;
    static final int ETHERNET_PREAMBLE_GAP_BYTES = 20;
    static final int PRIORITY_LEVELS = 8;

    /** The application on a host: gets every event its engine produces. */
    interface Application {
        void onEvent(Host host, HomaEvent event);
    }

    /** Link, switch and timing parameters of the fabric. */
    record Fabric(int linkMbps, long propagationNs, int bufferBytes, boolean priorityQueues) {
        Fabric {
            if (linkMbps < 1) {
                throw new IllegalArgumentException("linkMbps must be at least 1, was " + linkMbps);
            }
            if (propagationNs < 0) {
                throw new IllegalArgumentException("propagationNs must not be negative, was " + propagationNs);
            }
            if (bufferBytes < 1) {
                throw new IllegalArgumentException("bufferBytes must be at least 1, was " + bufferBytes);
            }
        }

        /** Time to serialize {@code wireBytes} at link rate, rounded up to whole nanoseconds. */
        long transmitNs(int wireBytes) {
            return ((long) wireBytes * 8 * 1000 + linkMbps - 1) / linkMbps;
        }
    }

    /** One packet between two hosts. */
    static final class Packet {
        final Host from;
        final Host to;
        final byte[] bytes;
        final int priority;
        /** Bytes the packet occupies in the switch buffer. */
        final int frameBytes;
        /** Bytes it costs on a link. */
        final int wireBytes;

        Packet(Host from, Host to, byte[] bytes, int priority) {
            this.from = from;
            this.to = to;
            this.bytes = bytes;
            this.priority = priority;
            this.frameBytes = bytes.length + IP_UDP_HEADER_BYTES + ETHERNET_HEADER_FCS_BYTES;
            this.wireBytes = frameBytes + ETHERNET_PREAMBLE_GAP_BYTES;
        }
    }

    /** A switch egress port: the downlink towards one host. */
    final class EgressPort {
        private final ArrayDeque<Packet>[] queues;
        private boolean busy;
        long bufferedBytes;
        long maxBufferedBytes;
        /** When {@link #maxBufferedBytes} was first reached. */
        long maxBufferedAtNs;
        long droppedPackets;
        long droppedBytes;
        long firstDropAtNs = -1;

        @SuppressWarnings("unchecked")
        EgressPort() {
            this.queues = new ArrayDeque[fabric.priorityQueues() ? PRIORITY_LEVELS : 1];
            for (int i = 0; i < queues.length; i++) {
                queues[i] = new ArrayDeque<>();
            }
        }

        void arrive(Packet packet) {
            if (bufferedBytes + packet.frameBytes > fabric.bufferBytes()) {
                packetsInFlight--;
                if (observer != null) {
                    observer.dropped(this, packet);
                }
                if (firstDropAtNs < 0) {
                    firstDropAtNs = nowNs;
                }
                droppedPackets++;
                droppedBytes += packet.frameBytes;
                return;
            }
            queues[fabric.priorityQueues() ? packet.priority : 0].add(packet);
            bufferedBytes += packet.frameBytes;
            if (bufferedBytes > maxBufferedBytes) {
                maxBufferedBytes = bufferedBytes;
                maxBufferedAtNs = nowNs;
            }
            if (!busy) {
                startNext();
            }
        }

        private void startNext() {
            Packet next = null;
            for (int i = queues.length - 1; i >= 0 && next == null; i--) {
                next = queues[i].poll();
            }
            if (next == null) {
                busy = false;
                return;
            }
            busy = true;
            Packet packet = next;
            at(nowNs + fabric.transmitNs(packet.wireBytes), () -> {
                bufferedBytes -= packet.frameBytes;
                at(nowNs + fabric.propagationNs(), () -> deliver(packet));
                startNext();
            });
        }

        /** The queued packets, highest priority first (for diagnostics). */
        List<Packet> queued() {
            List<Packet> all = new ArrayList<>();
            for (int i = queues.length - 1; i >= 0; i--) {
                all.addAll(queues[i]);
            }
            return all;
        }
    }

    /** One endpoint: an engine behind a link. */
    final class Host {
        final String name;
        final InetSocketAddress address;
        final HomaEngine engine;
        final EgressPort downlink;
        final Application application;
        private boolean transmitting;
        private long timerAtNs = Long.MAX_VALUE;

        Host(String name, InetSocketAddress address, HomaEngine engine, Application application) {
            this.name = name;
            this.address = address;
            this.engine = engine;
            this.application = application;
            this.downlink = new EgressPort();
        }

        /**
         * Call after any input to the engine (packet, timer, application call): hands its events to
         * the application, starts the uplink if it was idle, and sets the engine's timer.
         */
        void settle() {
            HomaEvent event;
            while ((event = engine.pollEvent()) != null) {
                application.onEvent(this, event);
            }
            if (!transmitting) {
                transmitOne();
            }
            armTimer();
        }

        /** The uplink is free: takes at most one packet from the engine and serializes it. */
        private void transmitOne() {
            captured = null;
            engine.pollTransmit(nowNs, sink, 1);
            Packet packet = captured;
            captured = null;
            if (packet == null) {
                transmitting = false;
                return;
            }
            transmitting = true;
            packetsInFlight++;
            long doneNs = nowNs + fabric.transmitNs(packet.wireBytes);
            at(doneNs + fabric.propagationNs(), () -> packet.to.downlink.arrive(packet));
            at(doneNs, () -> {
                transmitOne();
                armTimer();
            });
        }

        private final io.homa.engine.PacketSink sink = this::capture;

        private void capture(InetSocketAddress peer, ByteBuffer buffer, int priority) {
            Host to = hostsByAddress.get(peer);
            if (to == null) {
                throw new IllegalStateException(name + " sent a packet to unknown " + peer);
            }
            byte[] bytes = new byte[buffer.remaining()];
            buffer.get(buffer.position(), bytes);
            captured = new Packet(this, to, bytes, priority);
            if (observer != null) {
                observer.sent(captured);
            }
        }

        private void armTimer() {
            long due = engine.nextTimeoutNs();
            if (due == Long.MAX_VALUE || due >= timerAtNs) {
                return;
            }
            long atNs = Math.max(due, nowNs);
            timerAtNs = atNs;
            at(atNs, () -> {
                if (timerAtNs != atNs) {
                    return; // replaced by an earlier timer
                }
                timerAtNs = Long.MAX_VALUE;
                engine.onTimeout(nowNs);
                settle();
            });
        }
    }

    /** Sees packets for statistics: every packet a host hands to its uplink, every drop. */
    interface Observer {
        void sent(Packet packet);

        /** Called before the dropped packet is counted in {@code port}. */
        void dropped(EgressPort port, Packet packet);
    }

    private record Event(long atNs, long sequence, Runnable action) implements Comparable<Event> {
        @Override
        public int compareTo(Event other) {
            int byTime = Long.compare(atNs, other.atNs);
            return byTime != 0 ? byTime : Long.compare(sequence, other.sequence);
        }
    }

    private final Fabric fabric;
    private final PriorityQueue<Event> events = new PriorityQueue<>();
    private final java.util.Map<InetSocketAddress, Host> hostsByAddress = new java.util.HashMap<>();
    private final List<Host> hosts = new ArrayList<>();
    private long sequence;
    private long nowNs;
    private long packetsInFlight;
    private long eventsRun;
    private Packet captured;
    Observer observer;

    StarNetwork(Fabric fabric, long startNs) {
        this.fabric = fabric;
        this.nowNs = startNs;
    }

    Fabric fabric() {
        return fabric;
    }

    Host addHost(String name, InetSocketAddress address, HomaEngine engine, Application application) {
        Host host = new Host(name, address, engine, application);
        if (hostsByAddress.putIfAbsent(address, host) != null) {
            throw new IllegalArgumentException("two hosts at " + address);
        }
        hosts.add(host);
        return host;
    }

    List<Host> hosts() {
        return hosts;
    }

    long nowNs() {
        return nowNs;
    }

    /** Packets on links, in switch queues or serializing: sent by a host, not yet delivered or dropped. */
    long packetsInFlight() {
        return packetsInFlight;
    }

    long eventsRun() {
        return eventsRun;
    }

    /** Schedules {@code action} at virtual time {@code atNs} (never before now). */
    void at(long atNs, Runnable action) {
        events.add(new Event(Math.max(atNs, nowNs), sequence++, action));
    }

    /**
     * Runs events in time order until {@code done} holds after an event, no event is left, or the
     * next event lies beyond {@code untilNs}.
     *
     * @return whether {@code done} was reached
     */
    boolean runUntil(java.util.function.BooleanSupplier done, long untilNs) {
        Event event;
        while ((event = events.peek()) != null && event.atNs() <= untilNs) {
            events.poll();
            nowNs = event.atNs();
            event.action().run();
            eventsRun++;
            if (done.getAsBoolean()) {
                return true;
            }
        }
        return done.getAsBoolean();
    }

    private void deliver(Packet packet) {
        packetsInFlight--;
        packet.to.engine.onPacket(nowNs, packet.from.address, ByteBuffer.wrap(packet.bytes));
        packet.to.settle();
    }
}
