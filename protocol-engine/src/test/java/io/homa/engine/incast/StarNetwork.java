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
 *       of a port share one drop-tail buffer of {@code bufferBytes}, or with
 *       {@code perClassBuffers} each priority queue has a drop-tail buffer of its own of
 *       {@code bufferBytes / 8} (as a switch, or a Linux {@code prio} qdisc, that gives each class
 *       a fixed share): a packet whose frame does not fit is dropped and counted, per port and
 *       priority. A packet holds its buffer space until its last bit has left the port. The port
 *       drains at link rate; the packet reaches the host {@code propagationNs} later.
 *   <li>Receiving host: with {@code rxDelayNs > 0}, each packet costs that much software time
 *       before its engine sees it, one packet at a time in arrival order (a receive thread that
 *       is busy for {@code rxDelayNs} per packet: a JVM event loop, say); 0 hands each packet
 *       to the engine as it arrives.
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

    /**
     * Link, switch and timing parameters of the fabric.
     *
     * @param perClassBuffers each priority queue of a port has its own buffer of
     *     {@code bufferBytes / 8} instead of all sharing {@code bufferBytes} (needs
     *     {@code priorityQueues})
     * @param rxDelayNs software time a receiving host spends on each packet before its engine sees
     *     it, packets handled one at a time; 0 for none
     */
    record Fabric(int linkMbps, long propagationNs, int bufferBytes, boolean priorityQueues, boolean perClassBuffers,
            long rxDelayNs) {
        /** A shared buffer per port and no receive delay. */
        Fabric(int linkMbps, long propagationNs, int bufferBytes, boolean priorityQueues) {
            this(linkMbps, propagationNs, bufferBytes, priorityQueues, false, 0);
        }

        Fabric {
            if (perClassBuffers && !priorityQueues) {
                throw new IllegalArgumentException("perClassBuffers needs priorityQueues");
            }
            if (rxDelayNs < 0) {
                throw new IllegalArgumentException("rxDelayNs must not be negative, was " + rxDelayNs);
            }
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

        Fabric withPriorityQueues(boolean value) {
            return new Fabric(linkMbps, propagationNs, bufferBytes, value, value && perClassBuffers, rxDelayNs);
        }

        Fabric withPerClassBuffers(boolean value) {
            return new Fabric(linkMbps, propagationNs, bufferBytes, priorityQueues, value, rxDelayNs);
        }

        Fabric withRxDelayNs(long value) {
            return new Fabric(linkMbps, propagationNs, bufferBytes, priorityQueues, perClassBuffers, value);
        }

        /** The buffer of one priority queue: {@code bufferBytes / 8} with per-class buffers, else the port's. */
        long classBufferBytes() {
            return perClassBuffers ? bufferBytes / PRIORITY_LEVELS : bufferBytes;
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
        /** When its sender's engine handed it out (its uplink serialization started). */
        long sentNs;
        /** When it reached its switch egress port, and when the port started to send it. */
        long portArrivedNs;
        long portStartNs;
        /** Bytes queued at its egress port, at its priority or higher, when it arrived there. */
        long queuedAheadBytes;
        /** When it reached its destination host (before any receive delay). */
        long arrivedNs;

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
        /** The host the port sends to. */
        final String name;
        private final ArrayDeque<Packet>[] queues;
        private boolean busy;
        /** Buffered bytes per queue. */
        final long[] queueBytes;
        final long[] maxQueueBytes = new long[PRIORITY_LEVELS];
        final long[] droppedByPriority = new long[PRIORITY_LEVELS];
        final long[] arrivedByPriority = new long[PRIORITY_LEVELS];
        /** Bytes sent by the port. */
        long departedBytes;
        long bufferedBytes;
        long maxBufferedBytes;
        /** When {@link #maxBufferedBytes} was first reached. */
        long maxBufferedAtNs;
        long droppedPackets;
        long droppedBytes;
        long firstDropAtNs = -1;

        @SuppressWarnings("unchecked")
        EgressPort(String name) {
            this.name = name;
            this.queues = new ArrayDeque[fabric.priorityQueues() ? PRIORITY_LEVELS : 1];
            this.queueBytes = new long[queues.length];
            for (int i = 0; i < queues.length; i++) {
                queues[i] = new ArrayDeque<>();
            }
        }

        void arrive(Packet packet) {
            int queue = fabric.priorityQueues() ? packet.priority : 0;
            arrivedByPriority[packet.priority]++;
            boolean full = fabric.perClassBuffers()
                    ? queueBytes[queue] + packet.frameBytes > fabric.classBufferBytes()
                    : bufferedBytes + packet.frameBytes > fabric.bufferBytes();
            if (full) {
                packetsInFlight--;
                droppedByPriority[packet.priority]++;
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
            packet.portArrivedNs = nowNs;
            long ahead = 0;
            for (int i = queue; i < queues.length; i++) {
                ahead += queueBytes[i];
            }
            packet.queuedAheadBytes = ahead;
            queues[queue].add(packet);
            queueBytes[queue] += packet.frameBytes;
            maxQueueBytes[queue] = Math.max(maxQueueBytes[queue], queueBytes[queue]);
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
            packet.portStartNs = nowNs;
            at(nowNs + fabric.transmitNs(packet.wireBytes), () -> {
                bufferedBytes -= packet.frameBytes;
                queueBytes[fabric.priorityQueues() ? packet.priority : 0] -= packet.frameBytes;
                departedBytes += packet.wireBytes;
                at(nowNs + fabric.propagationNs(), () -> packet.to.arrive(packet));
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
        /** Packets arrived and waiting for the receive delay ({@link Fabric#rxDelayNs()}). */
        private final ArrayDeque<Packet> receiveQueue = new ArrayDeque<>();
        private boolean receiving;
        /** Most packets ever waiting in {@link #receiveQueue}. */
        int maxReceiveQueue;

        Host(String name, InetSocketAddress address, HomaEngine engine, Application application) {
            this.name = name;
            this.address = address;
            this.engine = engine;
            this.application = application;
            this.downlink = new EgressPort(name);
        }

        /** A packet reached the host: to the engine now, or after the receive delay. */
        private void arrive(Packet packet) {
            packet.arrivedNs = nowNs;
            if (observer != null) {
                observer.arrived(packet);
            }
            if (fabric.rxDelayNs() == 0) {
                deliver(packet);
                return;
            }
            receiveQueue.add(packet);
            maxReceiveQueue = Math.max(maxReceiveQueue, receiveQueue.size());
            if (!receiving) {
                receiveNext();
            }
        }

        private void receiveNext() {
            Packet packet = receiveQueue.peek();
            if (packet == null) {
                receiving = false;
                return;
            }
            receiving = true;
            at(nowNs + fabric.rxDelayNs(), () -> {
                receiveQueue.poll();
                deliver(packet);
                receiveNext();
            });
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
            captured.sentNs = nowNs;
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

        /** The packet reached its destination host (before any receive delay). */
        default void arrived(Packet packet) {}
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
