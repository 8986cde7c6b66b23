package io.homa.reactive.internal.transport;

import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.socket.DatagramPacket;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes Homa packets to one datagram channel with their priority in the IP TOS byte, as
 * {@code priority << 5} (DSCP class selector CS0..CS7), as the draft asks.
 *
 * <p>Netty has no per-datagram TOS: the socket has one (IP_TOS, IPV6_TCLASS), and the kernel
 * stamps it on each datagram when it takes it (sendmsg), which is at {@code flush}, not at
 * {@code write}. So before a packet whose TOS differs from the socket's, this writer flushes what
 * it wrote and changes the socket's TOS, but only once Netty's outbound queue is empty. If the
 * kernel refused datagrams (send buffer full) and some are still queued, the packet is held here,
 * with every packet after it (order is kept), until {@link #drainHeld()} finds the queue empty.
 * A packet thus never leaves with another packet's priority. Switching costs one setsockopt and
 * ends one sendmmsg batch; a transmit round switches about twice (control packets first, then
 * DATA by SRPT).
 *
 * <p>Disabled, or once the socket refuses to set its TOS (logged once), packets are written as
 * they come, with the socket's default TOS.
 *
 * <p>Confined to the channel's event loop.
 */
final class PriorityTosWriter {
    private static final Logger log = LoggerFactory.getLogger(PriorityTosWriter.class);

    /** TOS = priority shifted into the three IP precedence (DSCP class selector) bits. */
    static final int TOS_SHIFT = 5;
    /** Highest Homa priority. */
    static final int MAX_PRIORITY = 7;

    private final Channel channel;
    private final IntConsumer setSocketTos;
    private final ArrayDeque<Held> held = new ArrayDeque<>();
    private boolean enabled;
    private int socketTos;
    private boolean unflushed;
    private int prioritiesSentMask;

    /**
     * @param channel the datagram channel; its event loop runs every call
     * @param enabled whether to mark packets; if false, {@link #write} is a plain write
     * @param initialTos the socket's TOS now (0 for a new socket)
     * @param setSocketTos sets the socket's TOS (IP_TOS / IPV6_TCLASS), e.g.
     *     {@code DatagramChannelConfig::setTrafficClass}; may throw if the socket refuses
     */
    PriorityTosWriter(Channel channel, boolean enabled, int initialTos, IntConsumer setSocketTos) {
        this.channel = channel;
        this.enabled = enabled;
        this.socketTos = initialTos;
        this.setSocketTos = setSocketTos;
    }

    /** The IP TOS byte of a packet of priority 0..7: {@code priority << 5}. */
    static int tos(int priority) {
        if (priority < 0 || priority > MAX_PRIORITY) {
            throw new IllegalArgumentException("priority must be between 0 and 7, was " + priority);
        }
        return priority << TOS_SHIFT;
    }

    /**
     * Writes (or holds) one packet; the caller flushes with {@link #flush()} when its round ends.
     *
     * @param packet the datagram; this writer owns it from now on
     * @param priority its Homa priority, 0..7 (outside, clamped: marking is a hint and must not
     *     break transmission)
     */
    void write(DatagramPacket packet, int priority) {
        priority = Math.max(0, Math.min(MAX_PRIORITY, priority));
        int tos = tos(priority);
        if (enabled) {
            if (held.isEmpty() && (tos == socketTos || switchTos(tos))) {
                prioritiesSentMask |= 1 << priority;
            } else if (enabled) { // still enabled: the outbound queue is not empty, or packets are held before it
                held.add(new Held(packet, tos, priority));
                return;
            } // else the socket refused its TOS: marking is off, write as is
        }
        writeNow(packet);
    }

    /** Flushes what was written since the last flush. */
    void flush() {
        if (unflushed) {
            unflushed = false;
            channel.flush();
        }
    }

    /**
     * Writes held packets, switching TOS where needed, as far as the outbound queue allows, and
     * flushes.
     *
     * @return whether nothing is held any more
     */
    boolean drainHeld() {
        Held next;
        while ((next = held.peek()) != null) {
            if (enabled && next.tos != socketTos && !switchTos(next.tos) && enabled) {
                break; // still queued (if switchTos turned marking off, the rest is written as is)
            }
            held.poll();
            if (enabled) {
                prioritiesSentMask |= 1 << next.priority;
            }
            writeNow(next.packet);
        }
        flush();
        return held.isEmpty();
    }

    /** Whether packets wait for the outbound queue to drain. */
    boolean hasHeld() {
        return !held.isEmpty();
    }

    /** Drops held packets (on close). */
    void releaseHeld() {
        Held next;
        while ((next = held.poll()) != null) {
            ReferenceCountUtil.safeRelease(next.packet);
        }
    }

    /** Whether packets are being marked (false when disabled or when the socket refused). */
    boolean enabled() {
        return enabled;
    }

    /** The TOS this writer last gave the socket. */
    int socketTos() {
        return socketTos;
    }

    /** Bit {@code p} set when a packet of priority {@code p} has been written marked; for tests and diagnostics. */
    int prioritiesSentMask() {
        return prioritiesSentMask;
    }

    private void writeNow(DatagramPacket packet) {
        channel.write(packet, channel.voidPromise());
        unflushed = true;
    }

    /**
     * Sends what is written, then sets the socket's TOS if nothing is left queued in Netty.
     *
     * @return whether the socket now has {@code tos}; false if datagrams are still queued, or if
     *     setting failed (then marking is off from now on)
     */
    private boolean switchTos(int tos) {
        flush();
        ChannelOutboundBuffer queue = channel.unsafe().outboundBuffer();
        if (queue != null && queue.totalPendingWriteBytes() > 0) {
            return false;
        }
        try {
            setSocketTos.accept(tos);
            socketTos = tos;
            return true;
        } catch (RuntimeException e) {
            enabled = false;
            log.debug("Homa transport on {}: the socket refused IP TOS {} ({}); packets are sent without priorities",
                    channel.localAddress(), tos, e.toString());
            return false;
        }
    }

    private record Held(DatagramPacket packet, int tos, int priority) {}
}
