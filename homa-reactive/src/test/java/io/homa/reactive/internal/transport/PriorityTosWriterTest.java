package io.homa.reactive.internal.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.DatagramPacket;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link PriorityTosWriter} on a channel that models the kernel: a datagram takes the socket's
 * TOS when it is flushed (sendmsg), and a "full send buffer" keeps flushed datagrams queued.
 */
class PriorityTosWriterTest {
    private static final InetSocketAddress PEER = new InetSocketAddress("127.0.0.1", 4000);

    /** The socket's TOS as last set through the writer. */
    private int socketTos;
    private final List<Integer> tosSettings = new ArrayList<>();
    private final Kernel kernel = new Kernel();
    private final EmbeddedChannel channel = new EmbeddedChannel(kernel);

    @AfterEach
    void close() {
        kernel.full = false;
        channel.flush();
        channel.finishAndReleaseAll();
    }

    private PriorityTosWriter writer(boolean enabled) {
        return new PriorityTosWriter(channel, enabled, 0, tos -> {
            tosSettings.add(tos);
            socketTos = tos;
        });
    }

    /** Datagram number {@code id} (its one content byte). */
    private static DatagramPacket packet(int id) {
        return new DatagramPacket(Unpooled.wrappedBuffer(new byte[] {(byte) id}), PEER);
    }

    @Test
    void shouldShiftPriorityIntoThePrecedenceBits() {
        assertThat(PriorityTosWriter.tos(0)).isZero();
        assertThat(PriorityTosWriter.tos(1)).isEqualTo(0x20);
        assertThat(PriorityTosWriter.tos(7)).isEqualTo(0xE0);
        assertThatThrownBy(() -> PriorityTosWriter.tos(8))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("priority must be between 0 and 7, was 8");
    }

    @Test
    void shouldSendEveryPacketWithItsOwnPriority() {
        PriorityTosWriter writer = writer(true);

        writer.write(packet(1), 7);
        writer.write(packet(2), 7);
        writer.write(packet(3), 0);
        writer.write(packet(4), 3);
        writer.write(packet(5), 3);
        writer.flush();

        assertThat(kernel.sent).containsExactly(
                new Sent(1, 0xE0), new Sent(2, 0xE0), new Sent(3, 0), new Sent(4, 0x60), new Sent(5, 0x60));
        assertThat(tosSettings).as("one setsockopt per change").containsExactly(0xE0, 0, 0x60);
        assertThat(writer.socketTos()).isEqualTo(0x60);
        assertThat(writer.prioritiesSentMask()).isEqualTo(1 << 7 | 1 | 1 << 3);
        assertThat(writer.hasHeld()).isFalse();
    }

    @Test
    void shouldHoldPacketsUntilQueuedDatagramsHaveLeftAndKeepTheirOrder() {
        PriorityTosWriter writer = writer(true);
        kernel.full = true;

        writer.write(packet(1), 0); // same TOS as the socket: written, stays queued
        writer.write(packet(2), 7); // another TOS while datagram 1 is queued: held
        writer.write(packet(3), 0); // behind a held packet: held too, though its TOS matches
        writer.flush();

        assertThat(writer.hasHeld()).isTrue();
        assertThat(writer.drainHeld()).as("still queued").isFalse();
        assertThat(kernel.sent).isEmpty();
        assertThat(tosSettings).isEmpty();

        kernel.full = false;
        channel.flush(); // what Netty does once the socket is writable again
        assertThat(writer.drainHeld()).isTrue();

        assertThat(kernel.sent).containsExactly(new Sent(1, 0), new Sent(2, 0xE0), new Sent(3, 0));
        assertThat(writer.hasHeld()).isFalse();
    }

    @Test
    void shouldWriteAsIsWhenDisabled() {
        PriorityTosWriter writer = writer(false);

        writer.write(packet(1), 7);
        writer.write(packet(2), 0);
        writer.flush();

        assertThat(kernel.sent).containsExactly(new Sent(1, 0), new Sent(2, 0));
        assertThat(tosSettings).isEmpty();
        assertThat(writer.enabled()).isFalse();
    }

    @Test
    void shouldStopMarkingWhenTheSocketRefusesButKeepSending() {
        List<Integer> attempts = new ArrayList<>();
        PriorityTosWriter writer = new PriorityTosWriter(channel, true, 0, tos -> {
            attempts.add(tos);
            throw new IllegalStateException("not supported");
        });

        writer.write(packet(1), 7);
        writer.write(packet(2), 3);
        writer.flush();

        assertThat(kernel.sent).containsExactly(new Sent(1, 0), new Sent(2, 0));
        assertThat(attempts).as("tried once, then off").containsExactly(0xE0);
        assertThat(writer.enabled()).isFalse();
    }

    @Test
    void shouldClampOutOfRangePriorities() {
        PriorityTosWriter writer = writer(true);

        writer.write(packet(1), 9);
        writer.write(packet(2), -1);
        writer.flush();

        assertThat(kernel.sent).containsExactly(new Sent(1, 0xE0), new Sent(2, 0));
    }

    @Test
    void shouldReleaseHeldPackets() {
        PriorityTosWriter writer = writer(true);
        kernel.full = true;
        writer.write(packet(1), 0);
        DatagramPacket held = packet(2);
        writer.write(held, 7);

        writer.releaseHeld();

        assertThat(held.refCnt()).isZero();
        assertThat(writer.hasHeld()).isFalse();
    }

    record Sent(int id, int tos) {}

    /**
     * Stands for the kernel: stamps each datagram with the socket's TOS when it is flushed; while
     * {@link #full}, holds flushes back so that datagrams stay in Netty's outbound queue.
     */
    private final class Kernel extends ChannelOutboundHandlerAdapter {
        final List<Sent> sent = new ArrayList<>();
        private final List<DatagramPacket> written = new ArrayList<>();
        boolean full;

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            written.add((DatagramPacket) msg);
            ctx.write(msg, promise);
        }

        @Override
        public void flush(ChannelHandlerContext ctx) {
            if (full) {
                return;
            }
            for (DatagramPacket packet : written) {
                sent.add(new Sent(packet.content().getByte(0), socketTos));
            }
            written.clear();
            ctx.flush();
        }
    }
}
