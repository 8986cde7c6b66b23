package io.homa.reactive;

import io.homa.engine.CongestionControl;
import io.homa.engine.EngineConfig;
import io.homa.engine.InvalidSettingException;
import io.homa.engine.trace.Timetrace;
import io.homa.reactive.internal.security.PacketSealer;
import java.net.InetAddress;
import java.util.Objects;

/**
 * Settings of one {@link HomaTransport}: where it binds, socket sizes and the protocol settings
 * of its engine. Validated on construction: a bad value fails with an
 * {@link InvalidSettingException} naming it and its allowed range.
 *
 * @param bindAddress host or IP to bind the UDP socket to, e.g. {@code "0.0.0.0"} or
 *     {@code "127.0.0.1"}; default {@code "0.0.0.0"}
 * @param port UDP port = Homa port, 0..65535; 0 picks a free one; default 0
 * @param receiveBufferBytes SO_RCVBUF: loopback drops datagrams when it overflows, and a 1 MiB
 *     message is ~750 packets; the kernel caps it at {@code net.core.rmem_max}. 64 KiB..1 GiB,
 *     default 4 MiB
 * @param sendBufferBytes SO_SNDBUF, 64 KiB..1 GiB, default 4 MiB
 * @param nativeTransport whether to use Netty's native epoll transport when it is available
 *     (Linux); NIO otherwise. Default true
 * @param engine protocol settings
 * @param linkMbps the pacer's rate in megabits per second (Homa's {@code link_mbps}): this
 *     endpoint puts at most this many bits of UDP payload plus IP/UDP headers per second on the
 *     wire, with at most {@code maxNicQueueNs} of it handed to the kernel ahead of time. A real NIC paces a
 *     sender; over loopback nothing does, and a receiver that cannot drain its socket as fast as
 *     the sender fills it drops datagrams, so set it to what a receiving endpoint can absorb.
 *     0 disables pacing (send as fast as the socket accepts). 0..1,000,000, or
 *     {@value #AUTO_LINK_MBPS} (the default, {@code auto}): the speed the bound device reports
 *     ({@code /sys/class/net/DEVICE/speed} on Linux) when the bound address names one device that
 *     reports one; {@value #LOOPBACK_LINK_MBPS} on a loopback address (no wire: what two JVMs carry
 *     over loopback without overflowing the receiver's socket, see {@link #LOOPBACK_LINK_MBPS});
 *     otherwise {@value #DEFAULT_LINK_MBPS} (the wildcard address, virtual devices without a speed,
 *     other systems). {@link HomaTransport#dataPath()} says which. On a loopback address the
 *     engine's grant window ({@link EngineConfig#rttBytes()}), when not set, is
 *     {@value #LOOPBACK_RTT_BYTES} bytes whatever the rate
 * @param priorityTos whether each packet carries its Homa priority (0..7, from the engine) in
 *     the IP TOS byte as {@code priority << 5} (DSCP class selectors CS0..CS7; IPV6_TCLASS for
 *     IPv6), so that switches with priority queues serve short messages and control packets
 *     first: {@link PriorityTos#ON}, {@link PriorityTos#OFF}, or {@link PriorityTos#AUTO} (the
 *     default): on, except for a transport bound to a loopback address, where no queue acts on the
 *     byte and switching it would cost a setsockopt per change of priority. Works with epoll and
 *     NIO; the socket's TOS is switched between packets of different priorities
 * @param maxNicQueueNs how far the pacer may run ahead of the link (Homa's {@code max_nic_queue_ns}),
 *     in nanoseconds of transmission at {@code linkMbps}: packets handed to the kernel but not yet
 *     on the wire, where a short message would queue behind them. Control packets and messages of
 *     one packet bypass the pacer. 1,000..10,000,000 ns, default {@value #DEFAULT_MAX_NIC_QUEUE_NS}
 * @param deviceMtu whether a transport bound to one address (not the wildcard) sizes its packets by
 *     that interface's MTU (capped at 65,535 bytes) instead of {@code engine.mtuBytes()}, as Linux
 *     Homa sizes them by the route's device: on loopback (MTU 65,536) one datagram carries up to
 *     65,451 message bytes instead of 1,416: a sixth of the per-packet work, and a short message
 *     waits behind far fewer packets. Every transport receives datagrams of up to 65,507 bytes,
 *     whatever its own MTU. Default true
 * @param segmentationOffload whether, on Linux with Netty's native epoll transport, consecutive
 *     packets of equal length to one peer leave in one UDP GSO send ({@code UDP_SEGMENT}; each
 *     segment is a whole Homa packet, so any receiver sees ordinary datagrams), at most what the
 *     link carries in {@code maxNicQueueNs} and at most 64 packets or 65,507 bytes per send, and the
 *     socket receives with {@code UDP_GRO} (the kernel hands over coalesced datagrams, one read for
 *     many). What matters at a 1500-byte MTU, where a 1 MiB message is 741 packets. Off, or where
 *     the kernel or transport lacks it (NIO, macOS), one system call carries each packet; a kernel
 *     that refuses a GSO send turns it off (logged once). {@link HomaTransport#dataPath()} says
 *     which path is on. Default true
 * @param incastBufferBytes the buffer a fan-out's response heads may fill
 *     ({@link EngineConfig#incastBufferBytes()}, SIGCOMM 2018 §3.6), replacing the engine's, in
 *     bytes, 0..1 GiB; or {@value #AUTO_INCAST_BUFFER} (the default): on a transport bound to a
 *     loopback address {@value #LOOPBACK_INCAST_BUFFER_FACTOR} x {@code receiveBufferBytes} (16 MiB
 *     with the defaults: no switch lies in between, the socket holds twice what it is given, as
 *     Linux doubles SO_RCVBUF for its bookkeeping, and the client drains it while responses arrive,
 *     so that a fan-out's many short responses need no GRANT round trip), elsewhere the engine's (2 MiB by
 *     default: set it to the port buffer of the switch in front of the clients)
 * @param security packet authentication: {@link HomaSecurityConfig#off()} (the default), or every
 *     datagram sealed with a 41-byte AES-256-GCM trailer ({@link HomaSecurityConfig});
 *     when on, the engine's MTU is 41 bytes below the one it would otherwise use, so that sealed
 *     datagrams fit the device's MTU (and stay within 65,507 bytes on loopback), and
 *     {@code engine.mtuBytes()} must be at least {@value #MIN_SEALED_MTU_BYTES}
 * @param busyPollNs how long, in nanoseconds, the transport's event loop keeps polling its socket
 *     (a non-blocking {@code epoll_wait}, the core yielded to any other runnable thread between
 *     polls) once it has run out of work, before it sleeps in a blocking {@code epoll_wait}. A
 *     datagram or task that arrives meanwhile is taken without a wake-up, which on a virtual
 *     machine costs tens of microseconds per side of a round trip: as Homa's own implementations
 *     (SIGCOMM 2018 §5, "Homa detects incoming packets with polling rather than interrupts"; the
 *     Linux module busy-waits {@code poll_usecs}, 50 µs, before a receiver sleeps). The price is
 *     CPU: up to this long per wake-up of sparse traffic, counted against a container's CPU quota.
 *     Only on loops from {@link HomaTransport#loops}, which a transport bound without loops of the
 *     caller's ({@link HomaTransportSpec#loops}) creates for itself, with Netty's native epoll
 *     transport (not NIO); {@link HomaTransport#dataPath()} says whether it is on. 0 disables. 0..{@value #MAX_BUSY_POLL_NS}, default
 *     {@value #DEFAULT_BUSY_POLL_NS}
 * @param timetraceEvents the timetrace ({@link io.homa.engine.trace.Timetrace}; Linux Homa's
 *     {@code timetrace.c}): how many of the latest events each recording thread keeps, 32 bytes
 *     each, read through {@link HomaTransport#timetrace()}. 0 (the default) records nothing and
 *     costs nothing measurable. 0..{@value io.homa.engine.trace.Timetrace#MAX_EVENTS_PER_THREAD}
 * @param loops how many event loops the endpoint runs on, each with its own socket and engine
 *     ({@code homa.transport.loops}): the sockets of a server endpoint share its port with
 *     {@code SO_REUSEPORT} (the kernel hashes each client's datagrams to one of them), and its
 *     calls leave from one socket per loop on a port of that loop's own, where their responses
 *     come back. {@value #AUTO_LOOPS} (the default) takes the processors this process may run on
 *     ({@link Runtime#availableProcessors()}, which honours CPU affinity and container limits).
 *     1..{@value #MAX_LOOPS}, or {@value #AUTO_LOOPS}; see {@link #resolvedLoops()}
 */
public record HomaTransportConfig(
        String bindAddress,
        int port,
        int receiveBufferBytes,
        int sendBufferBytes,
        boolean nativeTransport,
        EngineConfig engine,
        int linkMbps,
        PriorityTos priorityTos,
        long maxNicQueueNs,
        boolean deviceMtu,
        boolean segmentationOffload,
        int incastBufferBytes,
        HomaSecurityConfig security,
        long busyPollNs,
        int timetraceEvents,
        int loops) {

    /** Smallest {@code engine.mtuBytes()} with packet authentication on: the engine's 256 plus the trailer. */
    public static final int MIN_SEALED_MTU_BYTES = 256 + PacketSealer.TRAILER_BYTES;
    public static final String DEFAULT_BIND_ADDRESS = "0.0.0.0";
    public static final int DEFAULT_SOCKET_BUFFER_BYTES = 4 * 1024 * 1024;
    /** {@code linkMbps} when nothing better is known: a 10 Gbit/s link. */
    public static final int DEFAULT_LINK_MBPS = 10_000;
    /** {@code linkMbps}: the bound device's speed ({@code auto}, the default). */
    public static final int AUTO_LINK_MBPS = -1;
    /**
     * The automatic {@code linkMbps} of a transport bound to a loopback address. Loopback has no
     * wire: a send copies the datagram straight into the receiver's socket, so the pacer's rate is
     * what the two endpoints' threads carry, not a link's. Measured with long echoes and the window
     * at {@value #LOOPBACK_RTT_BYTES} bytes (benchmarks/results/), a slower pacer held goodput back,
     * and a faster one gained little and overflowed the receiver's socket (retransmissions).
     */
    public static final int LOOPBACK_LINK_MBPS = 25_000;
    /**
     * The engine's grant window ({@link EngineConfig#rttBytes()}) on a loopback address when not
     * set: what 10 Gbit/s carries in 100 µs. Granted bytes wait in the receiver's socket, which on
     * loopback is the only queue, ahead of any short message that arrives after them: a window
     * sized for the loopback pacer's rate made short messages' tail latency under load several
     * times worse, while the faster pacer alone leaves it where it was.
     */
    public static final int LOOPBACK_RTT_BYTES = 125_000;
    public static final int MAX_LINK_MBPS = EngineConfig.MAX_LINK_MBPS;
    public static final long DEFAULT_MAX_NIC_QUEUE_NS = EngineConfig.DEFAULT_MAX_NIC_QUEUE_NS;
    public static final long MIN_MAX_NIC_QUEUE_NS = EngineConfig.MIN_MAX_NIC_QUEUE_NS;
    public static final long MAX_MAX_NIC_QUEUE_NS = EngineConfig.MAX_MAX_NIC_QUEUE_NS;
    /** {@code incastBufferBytes}: chosen by the bound address (the default). */
    public static final int AUTO_INCAST_BUFFER = -1;
    /** On loopback, the automatic incast buffer is this many times {@code receiveBufferBytes}. */
    public static final int LOOPBACK_INCAST_BUFFER_FACTOR = 4;
    /**
     * {@code busyPollNs} by default: Linux Homa's {@code poll_usecs}. It spares an unloaded
     * ping-pong a wake-up (a context switch, on a virtual machine an interrupt to another virtual
     * CPU) on each side of every round trip.
     */
    public static final long DEFAULT_BUSY_POLL_NS = 50_000;
    /** Largest {@code busyPollNs}: 1 ms. */
    public static final long MAX_BUSY_POLL_NS = 1_000_000;
    /** {@code loops}: one per available processor (the default). */
    public static final int AUTO_LOOPS = 0;
    /** Most {@code loops}. */
    public static final int MAX_LOOPS = 64;

    public HomaTransportConfig {
        Objects.requireNonNull(bindAddress, "bind-address must not be null");
        Objects.requireNonNull(engine, "engine must not be null");
        Objects.requireNonNull(priorityTos, "priority-tos must not be null");
        EngineConfig.check("port", port, 0, 65535, InvalidSettingException.Unit.NONE);
        EngineConfig.check("receive-buffer-size", receiveBufferBytes, 64 * 1024, 1 << 30, InvalidSettingException.Unit.BYTES);
        EngineConfig.check("send-buffer-size", sendBufferBytes, 64 * 1024, 1 << 30, InvalidSettingException.Unit.BYTES);
        if (linkMbps != AUTO_LINK_MBPS) {
            EngineConfig.checkLinkMbps(linkMbps);
        }
        EngineConfig.checkMaxNicQueueNs(maxNicQueueNs);
        if (incastBufferBytes != AUTO_INCAST_BUFFER) {
            EngineConfig.checkIncastBufferBytes(incastBufferBytes);
        }
        Objects.requireNonNull(security, "security must not be null");
        EngineConfig.check("busy-poll", busyPollNs, 0, MAX_BUSY_POLL_NS, InvalidSettingException.Unit.NANOS);
        EngineConfig.check("timetrace-events", timetraceEvents, 0, Timetrace.MAX_EVENTS_PER_THREAD,
                InvalidSettingException.Unit.NONE);
        EngineConfig.check("loops", loops, AUTO_LOOPS, MAX_LOOPS, InvalidSettingException.Unit.NONE);
        if (security.enabled() && engine.mtuBytes() < MIN_SEALED_MTU_BYTES) {
            throw new InvalidSettingException("mtu", engine.mtuBytes(), MIN_SEALED_MTU_BYTES, 65535,
                    InvalidSettingException.Unit.NONE, "mtu must be between " + MIN_SEALED_MTU_BYTES
                            + " and 65535 with packet authentication on (its trailer takes " + PacketSealer.TRAILER_BYTES
                            + " bytes), was " + engine.mtuBytes());
        }
    }

    /** The settings without {@code security}: packet authentication off (as before packet authentication existed). */
    public HomaTransportConfig(String bindAddress, int port, int receiveBufferBytes, int sendBufferBytes,
            boolean nativeTransport, EngineConfig engine, int linkMbps, PriorityTos priorityTos, long maxNicQueueNs,
            boolean deviceMtu, boolean segmentationOffload) {
        this(bindAddress, port, receiveBufferBytes, sendBufferBytes, nativeTransport, engine, linkMbps, priorityTos,
                maxNicQueueNs, deviceMtu, segmentationOffload, AUTO_INCAST_BUFFER, HomaSecurityConfig.off());
    }

    /** The settings with the default {@code busyPollNs} (the shape before it). */
    public HomaTransportConfig(String bindAddress, int port, int receiveBufferBytes, int sendBufferBytes,
            boolean nativeTransport, EngineConfig engine, int linkMbps, PriorityTos priorityTos, long maxNicQueueNs,
            boolean deviceMtu, boolean segmentationOffload, int incastBufferBytes, HomaSecurityConfig security) {
        this(bindAddress, port, receiveBufferBytes, sendBufferBytes, nativeTransport, engine, linkMbps, priorityTos,
                maxNicQueueNs, deviceMtu, segmentationOffload, incastBufferBytes, security, DEFAULT_BUSY_POLL_NS, 0);
    }

    /** The settings without a timetrace (the shape before it). */
    public HomaTransportConfig(String bindAddress, int port, int receiveBufferBytes, int sendBufferBytes,
            boolean nativeTransport, EngineConfig engine, int linkMbps, PriorityTos priorityTos, long maxNicQueueNs,
            boolean deviceMtu, boolean segmentationOffload, int incastBufferBytes, HomaSecurityConfig security,
            long busyPollNs) {
        this(bindAddress, port, receiveBufferBytes, sendBufferBytes, nativeTransport, engine, linkMbps, priorityTos,
                maxNicQueueNs, deviceMtu, segmentationOffload, incastBufferBytes, security, busyPollNs, 0);
    }

    /** The settings with {@code loops} {@value #AUTO_LOOPS} (the shape before it). */
    public HomaTransportConfig(String bindAddress, int port, int receiveBufferBytes, int sendBufferBytes,
            boolean nativeTransport, EngineConfig engine, int linkMbps, PriorityTos priorityTos, long maxNicQueueNs,
            boolean deviceMtu, boolean segmentationOffload, int incastBufferBytes, HomaSecurityConfig security,
            long busyPollNs, int timetraceEvents) {
        this(bindAddress, port, receiveBufferBytes, sendBufferBytes, nativeTransport, engine, linkMbps, priorityTos,
                maxNicQueueNs, deviceMtu, segmentationOffload, incastBufferBytes, security, busyPollNs,
                timetraceEvents, AUTO_LOOPS);
    }

    /**
     * How many event loops the endpoint runs on: {@link #loops()}, or with {@value #AUTO_LOOPS} the
     * processors this process may run on, at most {@value #MAX_LOOPS}.
     */
    public int resolvedLoops() {
        return loops != AUTO_LOOPS ? loops : Math.min(MAX_LOOPS, Runtime.getRuntime().availableProcessors());
    }

    /** A builder initialised from this config. */
    public Builder toBuilder() {
        return new Builder()
                .bindAddress(bindAddress)
                .port(port)
                .receiveBufferBytes(receiveBufferBytes)
                .sendBufferBytes(sendBufferBytes)
                .nativeTransport(nativeTransport)
                .engine(engine)
                .linkMbps(linkMbps)
                .priorityTos(priorityTos)
                .maxNicQueueNs(maxNicQueueNs)
                .deviceMtu(deviceMtu)
                .segmentationOffload(segmentationOffload)
                .incastBufferBytes(incastBufferBytes)
                .security(security)
                .busyPollNs(busyPollNs)
                .timetraceEvents(timetraceEvents)
                .loops(loops);
    }

    /**
     * The defaults: any address, free port, 4 MiB socket buffers, native transport, engine
     * defaults, the pacer at the device's speed (10 Gbit/s where it reports none), priorities in
     * the TOS byte except on loopback, the device's MTU, UDP GSO and GRO where available, packet
     * authentication off, one event loop per available processor, each busy-polling 50 µs before it sleeps.
     */
    public static HomaTransportConfig defaults() {
        return builder().build();
    }

    /** The engine's congestion control ({@link EngineConfig#congestionControl()}). */
    public CongestionControl congestionControl() {
        return engine.congestionControl();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Mutable builder; {@link #build()} validates. */
    public static final class Builder {
        private String bindAddress = DEFAULT_BIND_ADDRESS;
        private int port;
        private int receiveBufferBytes = DEFAULT_SOCKET_BUFFER_BYTES;
        private int sendBufferBytes = DEFAULT_SOCKET_BUFFER_BYTES;
        private boolean nativeTransport = true;
        private EngineConfig engine = EngineConfig.defaults();
        private int linkMbps = AUTO_LINK_MBPS;
        private PriorityTos priorityTos = PriorityTos.AUTO;
        private long maxNicQueueNs = DEFAULT_MAX_NIC_QUEUE_NS;
        private boolean deviceMtu = true;
        private boolean segmentationOffload = true;
        private int incastBufferBytes = AUTO_INCAST_BUFFER;
        private HomaSecurityConfig security = HomaSecurityConfig.off();
        private long busyPollNs = DEFAULT_BUSY_POLL_NS;
        private int timetraceEvents;
        private int loops = AUTO_LOOPS;

        private Builder() {}

        public Builder bindAddress(String value) {
            this.bindAddress = value;
            return this;
        }

        public Builder port(int value) {
            this.port = value;
            return this;
        }

        public Builder receiveBufferBytes(int value) {
            this.receiveBufferBytes = value;
            return this;
        }

        public Builder sendBufferBytes(int value) {
            this.sendBufferBytes = value;
            return this;
        }

        public Builder nativeTransport(boolean value) {
            this.nativeTransport = value;
            return this;
        }

        public Builder engine(EngineConfig value) {
            this.engine = value;
            return this;
        }

        /**
         * The engine's congestion control ({@link EngineConfig#congestionControl()}, property
         * {@code homa.protocol.congestion-control}), set in the engine settings held now: call it
         * after {@link #engine}, which replaces them.
         *
         * @throws io.homa.engine.InvalidSettingException if {@code value} is null
         */
        public Builder congestionControl(CongestionControl value) {
            this.engine = engine.toBuilder().congestionControl(value).build();
            return this;
        }

        /**
         * The engine's shortest interval between RTT probes to one peer, ns
         * ({@link EngineConfig#rttProbeIntervalNs()}, property {@code homa.protocol.rtt-probe-interval}),
         * set in the engine settings held now: call it after {@link #engine}.
         *
         * @throws io.homa.engine.InvalidSettingException if outside 10 µs..10 s
         */
        public Builder rttProbeIntervalNs(long value) {
            this.engine = engine.toBuilder().rttProbeIntervalNs(value).build();
            return this;
        }

        /** The pacer's rate in Mbit/s; 0 disables pacing; {@link #AUTO_LINK_MBPS} (the default): the device's. */
        public Builder linkMbps(int value) {
            this.linkMbps = value;
            return this;
        }

        /** Whether packets carry their priority in the IP TOS byte ({@code priority << 5}). */
        public Builder priorityTos(PriorityTos value) {
            this.priorityTos = value;
            return this;
        }

        /** {@link PriorityTos#ON} or {@link PriorityTos#OFF}. */
        public Builder priorityTos(boolean value) {
            return priorityTos(value ? PriorityTos.ON : PriorityTos.OFF);
        }

        /** How far (ns at link speed) the pacer may run ahead of the link; 1,000..10,000,000. */
        public Builder maxNicQueueNs(long value) {
            this.maxNicQueueNs = value;
            return this;
        }

        /** Whether a transport bound to one address uses that interface's MTU. */
        public Builder deviceMtu(boolean value) {
            this.deviceMtu = value;
            return this;
        }

        /** Whether to use UDP GSO on send and UDP GRO on receive where the kernel and transport have them. */
        public Builder segmentationOffload(boolean value) {
            this.segmentationOffload = value;
            return this;
        }

        /** The engine's incast buffer in bytes, or {@link #AUTO_INCAST_BUFFER} (the default). */
        public Builder incastBufferBytes(int value) {
            this.incastBufferBytes = value;
            return this;
        }

        /** Packet authentication ({@link HomaSecurityConfig#off()} by default). */
        public Builder security(HomaSecurityConfig value) {
            this.security = value;
            return this;
        }

        /**
         * How long the event loop polls its socket before it sleeps, in nanoseconds, 0..{@value #MAX_BUSY_POLL_NS};
         * 0 disables; default {@value #DEFAULT_BUSY_POLL_NS}.
         */
        public Builder busyPollNs(long value) {
            this.busyPollNs = value;
            return this;
        }

        /** See {@link HomaTransportConfig#timetraceEvents()}. */
        public Builder timetraceEvents(int value) {
            this.timetraceEvents = value;
            return this;
        }

        /** See {@link HomaTransportConfig#loops()}: 1..{@value #MAX_LOOPS}, or {@value #AUTO_LOOPS} for one per processor. */
        public Builder loops(int value) {
            this.loops = value;
            return this;
        }

        public HomaTransportConfig build() {
            return new HomaTransportConfig(bindAddress, port, receiveBufferBytes, sendBufferBytes, nativeTransport,
                    engine, linkMbps, priorityTos, maxNicQueueNs, deviceMtu, segmentationOffload, incastBufferBytes,
                    security, busyPollNs, timetraceEvents, loops);
        }
    }

    /** Whether packets carry their priority in the IP TOS byte ({@code homa.transport.priority-tos}). */
    public enum PriorityTos {
        /** On unless the transport is bound to a loopback address. */
        AUTO,
        /** Always. */
        ON,
        /** Never: packets leave with the socket's default TOS. */
        OFF;

        /**
         * Whether a transport bound to {@code bound} marks its packets.
         *
         * @param bound the bound address (the wildcard counts as not loopback: peers may be remote)
         */
        public boolean enabledFor(InetAddress bound) {
            return switch (this) {
                case ON -> true;
                case OFF -> false;
                case AUTO -> !bound.isLoopbackAddress();
            };
        }
    }
}
