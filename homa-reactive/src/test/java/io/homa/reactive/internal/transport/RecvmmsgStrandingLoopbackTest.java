package io.homa.reactive.internal.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.DatagramPacket;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.netty.resources.LoopResources;

/**
 * RecvmmsgAllocator on Netty's epoll channel and a real kernel: a read that stops after a recvmmsg
 * returned fewer datagrams than its slots, or after the one recvmsg of a sparse wake-up, must
 * never leave a datagram in the socket with nothing to signal it. The receiver here has no timer and no other traffic, so a stranded datagram is
 * never read: the burst it belongs to never completes. (Netty 4.2's epoll is level-triggered, so
 * this guards that assumption as much as the allocator: with an edge-triggered channel, a read
 * that stopped after a full call would strand the held bursts.)
 */
class RecvmmsgStrandingLoopbackTest {
    private static final int SLOTS = DatagramBootstrap.DATAGRAMS_PER_RECVMMSG;
    private static final int SLOT_BYTES = 2_048;
    private static final int BURSTS = 3_000;
    /** Far above any pause of a loaded machine; only a stranded datagram waits this long. */
    private static final long STRANDED_AFTER_SECONDS = 20;

    private static void awaitUninterruptibly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** @param slots datagrams per call: {@code SLOTS} for recvmmsg, 1 for recvmsg with UDP_GRO */
    @ParameterizedTest(name = "{0} slot(s) per call")
    @ValueSource(ints = {SLOTS, 1})
    void shouldReadEveryDatagramOfEveryBurstWithoutATimerOrMoreTraffic(int slots) throws Exception {
        LoopResources loops = LoopResources.create("stranding", 1, true);
        try {
            EventLoopGroup group = loops.onServer(true);
            Class<? extends DatagramChannel> channelType = loops.onChannelClass(DatagramChannel.class, group);
            assumeTrue(UdpOffload.isEpoll(channelType) && UdpOffload.MAX_DATAGRAM_PAYLOAD_SIZE != null,
                    "needs Netty's native epoll transport");
            Semaphore received = new Semaphore(0);
            RecvmmsgAllocator allocator = new RecvmmsgAllocator(slots, SLOT_BYTES);
            allocator.maxMessagesPerRead(DatagramBootstrap.MAX_READS_PER_READINESS);
            Bootstrap bootstrap = new Bootstrap().group(group).channel(channelType);
            if (slots > 1) {
                bootstrap.option(UdpOffload.MAX_DATAGRAM_PAYLOAD_SIZE, SLOT_BYTES);
            } else if (UdpOffload.UDP_GRO != null) {
                bootstrap.option(UdpOffload.UDP_GRO, true);
            }
            Channel receiver = bootstrap
                    .option(ChannelOption.RECVBUF_ALLOCATOR, allocator)
                    .option(ChannelOption.SO_RCVBUF, 4 << 20)
                    .handler(new SimpleChannelInboundHandler<DatagramPacket>() {
                        @Override
                        protected void channelRead0(ChannelHandlerContext ctx, DatagramPacket packet) {
                            received.release();
                        }
                    })
                    .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
            InetSocketAddress target = (InetSocketAddress) receiver.localAddress();
            SplittableRandom random = new SplittableRandom(42);
            ByteBuffer payload = ByteBuffer.allocate(100);
            int sent = 0;
            int stalled = 0;
            try (java.nio.channels.DatagramChannel sender = java.nio.channels.DatagramChannel.open()) {
                for (int burst = 0; burst < BURSTS; burst++) {
                    // Bursts below, at and above one call's slots, so reads end on short calls, on
                    // calls that filled every slot, and while the sender is still adding datagrams.
                    // Every other burst is queued whole while the event loop is held, so that one
                    // wake-up finds more than one call's worth.
                    int datagrams = 1 + random.nextInt(3 * SLOTS);
                    CountDownLatch hold = new CountDownLatch(1);
                    if (burst % 2 == 0) {
                        receiver.eventLoop().execute(() -> awaitUninterruptibly(hold));
                    }
                    for (int i = 0; i < datagrams; i++) {
                        sender.send(payload.clear(), target);
                    }
                    hold.countDown();
                    sent += datagrams;
                    if (!received.tryAcquire(datagrams, STRANDED_AFTER_SECONDS, TimeUnit.SECONDS)) {
                        stalled++;
                        break;
                    }
                }
            } finally {
                receiver.close().sync();
            }

            assertThat(stalled).as("bursts whose datagrams were left in the socket (%d sent)", sent).isZero();
            assertThat(received.availablePermits()).as("datagrams beyond those sent").isZero();
        } finally {
            loops.dispose();
        }
    }
}
