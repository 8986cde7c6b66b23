package io.homa.spring;

import io.homa.reactive.HomaTransportConfig;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.DeprecatedConfigurationProperty;
import org.springframework.boot.convert.DataSizeUnit;
import org.springframework.util.unit.DataSize;
import org.springframework.util.unit.DataUnit;

/** Settings of the UDP socket under the engine, under {@code homa.transport.*}. */
public class HomaTransportProperties {

    /**
     * Socket receive buffer (SO_RCVBUF), 64KB..1GB; the kernel caps it at
     * net.core.rmem_max. Loopback drops datagrams when it overflows.
     */
    @DataSizeUnit(DataUnit.BYTES)
    private DataSize receiveBufferSize = DataSize.ofMegabytes(4);

    /** Socket send buffer (SO_SNDBUF), 64KB..1GB; the kernel caps it at net.core.wmem_max. */
    @DataSizeUnit(DataUnit.BYTES)
    private DataSize sendBufferSize = DataSize.ofMegabytes(4);

    /**
     * Whether to use Netty's native epoll transport when it is available (Linux); NIO
     * otherwise.
     */
    private boolean nativeTransport = true;

    /**
     * Whether a transport bound to one address (homa.server.bind-address other than 0.0.0.0
     * or ::) sizes its packets by that interface's MTU, capped at 65535 (loopback: 64 KB
     * datagrams instead of 1500-byte ones), instead of homa.protocol.mtu. A receiver reads
     * datagrams of any size, so endpoints with different settings talk. As Linux Homa, which
     * sizes packets by the route's device.
     */
    private boolean deviceMtu = true;

    /**
     * Whether to send consecutive equal-length packets to one peer in one UDP GSO send
     * (UDP_SEGMENT: each segment a whole Homa packet, at most max-nic-queue at link-mbps per
     * send; a packet longer than half of that goes alone) and receive with UDP_GRO, on Linux
     * with the native transport. What makes a 1500-byte MTU fast: a 1 MiB message is about 17
     * sends instead of 741 system calls; on loopback a burst of short responses to one client
     * is one send and one read.
     * Ignored where the kernel or transport lacks it (NIO, macOS); the start-up line says
     * which path is on.
     */
    private boolean segmentationOffload = true;

    /**
     * How long the endpoint's event loop keeps polling its socket once it has run out of
     * work, yielding the core between polls, before it sleeps, 0..1ms; 0 turns it off. A
     * datagram that arrives meanwhile is read without a wake-up, which on a virtual machine
     * costs tens of microseconds on each side of a round trip (Linux Homa polls 50us for
     * the same reason). The price is CPU, counted against a container's CPU quota, so each
     * loop polls only while nearly all of its recent idle spells ended within this window
     * (nine in ten at 50us: its traffic comes in quick succession) and sleeps at once
     * otherwise. Native transport only;
     * the start-up line says whether it is on.
     */
    private Duration busyPoll = Duration.ofNanos(50_000);

    /**
     * How many event loops the endpoint runs on, each with its own socket and engine, 1..64;
     * 0 (the default) takes one per processor the JVM may use (its CPU affinity and container
     * limit). The sockets share the server port with SO_REUSEPORT, and calls leave from a port
     * per loop. Reactive handlers run on the loop that received their request, so more loops
     * serve more requests at once. 1 gives one engine SRPT-scheduling all of the endpoint's
     * incoming messages, as Linux Homa does per host.
     */
    private int loops;

    public int getLoops() {
        return this.loops;
    }

    public void setLoops(int loops) {
        this.loops = loops;
    }

    public Duration getBusyPoll() {
        return this.busyPoll;
    }

    public void setBusyPoll(Duration busyPoll) {
        this.busyPoll = busyPoll;
    }

    /**
     * Events of the endpoint's timetrace that each recording thread keeps (32 bytes each), 0..2^26;
     * 0 (the default) records nothing. A record of each message, packet, pacer hold, delivery,
     * call and handler with its time, for finding where an RPC's time goes (Linux Homa's
     * timetrace); read it through HomaTransport.timetrace() and write it with its writeTo.
     */
    private int timetraceEvents;

    public int getTimetraceEvents() {
        return this.timetraceEvents;
    }

    public void setTimetraceEvents(int timetraceEvents) {
        this.timetraceEvents = timetraceEvents;
    }

    /** Moved to homa.protocol.link-mbps; setting it fails start-up with a message saying so. */
    private @Nullable Integer linkMbps;

    /**
     * Moved to homa.protocol.link-mbps.
     *
     * @return the value set under the old name, or null
     */
    @Deprecated(since = "0.1.0")
    @DeprecatedConfigurationProperty(replacement = "homa.protocol.link-mbps",
            reason = "The pacer's rate is a protocol setting (draft section Pacing).")
    public @Nullable Integer getLinkMbps() {
        return this.linkMbps;
    }

    @Deprecated(since = "0.1.0")
    public void setLinkMbps(@Nullable Integer linkMbps) {
        this.linkMbps = linkMbps;
    }

    /**
     * Whether each packet carries its Homa priority (0-7, control packets 7) in the IP TOS
     * byte as priority << 5 (DSCP class selectors CS0-CS7), for switches with priority queues:
     * on, off, or auto (on unless bound to a loopback address, where nothing reads it).
     * true and false mean on and off.
     */
    private HomaTransportConfig.PriorityTos priorityTos = HomaTransportConfig.PriorityTos.AUTO;

    public HomaTransportConfig.PriorityTos getPriorityTos() {
        return this.priorityTos;
    }

    public void setPriorityTos(HomaTransportConfig.PriorityTos priorityTos) {
        this.priorityTos = priorityTos;
    }

    public boolean isDeviceMtu() {
        return this.deviceMtu;
    }

    public void setDeviceMtu(boolean deviceMtu) {
        this.deviceMtu = deviceMtu;
    }

    public boolean isSegmentationOffload() {
        return this.segmentationOffload;
    }

    public void setSegmentationOffload(boolean segmentationOffload) {
        this.segmentationOffload = segmentationOffload;
    }

    public DataSize getReceiveBufferSize() {
        return this.receiveBufferSize;
    }

    public void setReceiveBufferSize(DataSize receiveBufferSize) {
        this.receiveBufferSize = receiveBufferSize;
    }

    public DataSize getSendBufferSize() {
        return this.sendBufferSize;
    }

    public void setSendBufferSize(DataSize sendBufferSize) {
        this.sendBufferSize = sendBufferSize;
    }

    public boolean isNative() {
        return this.nativeTransport;
    }

    public void setNative(boolean nativeTransport) {
        this.nativeTransport = nativeTransport;
    }
}
