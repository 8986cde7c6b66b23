package io.homa.reactive.internal.transport;

import io.homa.engine.EngineConfig;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaSecurityConfig;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.internal.security.PacketSealer;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.DatagramChannel;
import io.homa.engine.SharedIdentity;
import io.homa.engine.trace.Timetrace;
import io.netty.channel.socket.nio.NioChannelOption;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.time.Duration;
import java.util.SplittableRandom;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.netty.resources.LoopResources;

/**
 * Binds a transport's datagram channel: picks the event loop and the channel class (native epoll
 * or NIO), sets the socket's buffers, and chooses the offloads the platform offers: recvmmsg(2)
 * reads, UDP GSO on send ({@link GsoBatcher}) and UDP GRO on receive ({@link UdpOffload}); the
 * loop's busy poll comes with the loops ({@link BusyPollLoops}), priorities in the IP TOS byte
 * with the transport ({@link PriorityTosWriter}). Once bound, on the event loop and before the
 * first datagram is read, it makes the {@link NettyHomaTransport} that drives the channel.
 *
 * <p>Packet size: bound to one address, the engine uses that interface's MTU ({@link LinkProbe};
 * 65,535 on loopback), and the channel receives datagrams of up to {@value #MAX_DATAGRAM_BYTES}
 * bytes whatever its own MTU.
 */
final class DatagramBootstrap {
    private static final Logger log = LoggerFactory.getLogger(DatagramBootstrap.class);

    /**
     * Receive buffer per datagram: the largest UDP payload, whatever this endpoint's own MTU, so
     * that a peer with a larger one (bound to loopback, {@link HomaTransportConfig#deviceMtu()}) is
     * heard. Pooled, so it costs no more than a smaller buffer would.
     */
    static final int MAX_DATAGRAM_BYTES = 65_535 - EngineConfig.IP_UDP_HEADER_BYTES;
    /** Reads (recvmsg or recvmmsg calls) per readiness notification: in effect, until the socket is empty. */
    static final int MAX_READS_PER_READINESS = 1 << 16;
    /** Datagrams one recvmmsg(2) call may return (native epoll only). */
    static final int DATAGRAMS_PER_RECVMMSG = 16;
    /** How long loops of the transport's own may take to shut down after it closes. */
    static final Duration OWN_LOOPS_SHUTDOWN_TIMEOUT = Duration.ofSeconds(2);

    private DatagramBootstrap() {}

    /**
     * Binds lazily: the {@code Mono} emits the bound transport, or {@link HomaException} with
     * {@link HomaStatus#UNAVAILABLE}. With {@link HomaTransportConfig#resolvedLoops()} above 1 (and
     * {@code SO_REUSEPORT} available) a {@link LoopGroupTransport} of one socket and engine per loop,
     * otherwise one {@link NettyHomaTransport}.
     */
    static Mono<HomaTransport> bind(TransportSettings settings) {
        HomaTransportConfig config = settings.config();
        InetSocketAddress bindAddress = new InetSocketAddress(config.bindAddress(), config.port());
        if (bindAddress.isUnresolved()) {
            return Mono.error(new HomaException(HomaStatus.UNAVAILABLE,
                    "cannot bind Homa transport: bind-address '" + config.bindAddress() + "' does not resolve"));
        }
        return Mono.defer(() -> {
            boolean useNative = config.nativeTransport() && LoopResources.hasNativeSupport();
            LoopResources given = settings.loops();
            // Without loops of the caller's, loops of our own, disposed with the transport.
            LoopResources loops = given != null ? given : HomaTransport.loops(config);
            Runnable disposeOwnLoops = given != null ? null
                    : () -> loops.disposeLater(Duration.ZERO, OWN_LOOPS_SHUTDOWN_TIMEOUT).subscribe();
            BusyPollLoops busyPoll = loops instanceof BusyPollLoops polling ? polling : null;
            EventLoopGroup group = loops.onServer(useNative);
            Class<? extends DatagramChannel> channelType = loops.onChannelClass(DatagramChannel.class, group);
            EngineConfig engineConfig = LinkProbe.engineConfig(config, bindAddress);
            int count = config.resolvedLoops();
            ChannelOption<Boolean> reusePort = count > 1 ? reusePortOption(channelType) : null;
            if (count > 1 && reusePort == null) {
                log.info("Homa transport on {}: {} has no SO_REUSEPORT here, so the endpoint runs on one event loop"
                        + " instead of {} (homa.transport.loops)", bindAddress, channelType.getSimpleName(), count);
                count = 1;
            }
            Member single = new Member(settings, (EventLoop) group.next(), channelType, engineConfig, busyPoll, null,
                    SharedIdentity.of(NettyHomaTransport.firstRpcId(), new SplittableRandom()),
                    Timetrace.withCapacity(config.timetraceEvents()));
            if (count == 1) {
                return bindMember(single, bindAddress, disposeOwnLoops).cast(HomaTransport.class);
            }
            return LoopGroupTransport.bind(single, bindAddress, count, group, reusePort, disposeOwnLoops);
        });
    }

    /**
     * What one socket of a transport binds with.
     *
     * @param settings the transport's settings; a caller socket of a loop group has no handler
     * @param loop the event loop the socket and its engine run on
     * @param reusePort {@code SO_REUSEPORT} for a socket that shares its port with the other loops', else null
     * @param shared what the endpoint's engines share
     * @param trace the endpoint's timetrace, shared by its engines (each thread records in a ring of its own)
     */
    record Member(TransportSettings settings, EventLoop loop, Class<? extends DatagramChannel> channelType,
            EngineConfig engineConfig, @Nullable BusyPollLoops busyPoll, @Nullable ChannelOption<Boolean> reusePort,
            SharedIdentity shared, Timetrace trace) {

        Member on(EventLoop otherLoop, TransportSettings otherSettings, @Nullable ChannelOption<Boolean> otherReusePort) {
            return new Member(otherSettings, otherLoop, channelType, engineConfig, busyPoll, otherReusePort, shared, trace);
        }
    }

    /**
     * Binds one socket and starts its engine on {@code member.loop()}.
     *
     * @param onClosed run once the channel closes, also after a failed bind (disposes loops of the
     *     transport's own), or null
     */
    static Mono<NettyHomaTransport> bindMember(Member member, InetSocketAddress bindAddress, @Nullable Runnable onClosed) {
        TransportSettings settings = member.settings();
        HomaTransportConfig config = settings.config();
        EngineConfig engineConfig = member.engineConfig();
        return Mono.create(sink -> {
            DatagramHandler datagramHandler = new DatagramHandler();
            Bootstrap bootstrap = new Bootstrap()
                    .group(member.loop())
                    .channel(member.channelType())
                    .option(ChannelOption.SO_RCVBUF, config.receiveBufferBytes())
                    .option(ChannelOption.SO_SNDBUF, config.sendBufferBytes())
                    .handler(datagramHandler);
            if (member.reusePort() != null) {
                bootstrap.option(member.reusePort(), true);
            }
            boolean epoll = UdpOffload.isEpoll(member.channelType());
            boolean offload = epoll && config.segmentationOffload();
            int gsoBatchBytes = offload && UdpOffload.GSO_SUPPORTED
                    ? GsoBatcher.maxBatchBytes(engineConfig.linkMbps(), engineConfig.maxNicQueueNs()) : 0;
            receiveOffloads(bootstrap, epoll, offload && UdpOffload.UDP_GRO != null);
            ChannelFuture bindFuture = bootstrap.bind(bindAddress);
            sink.onCancel(() -> bindFuture.channel().close());
            bindFuture.addListener((ChannelFutureListener) future -> {
                // Loops of our own are disposed only from here: disposed when a failed bind closed the
                // channel, they rejected the task that notifies this listener when the bind
                // completed before the listener was added (seen with binds to a port in use).
                if (onClosed != null) {
                    future.channel().closeFuture().addListener(closed -> onClosed.run());
                }
                if (!future.isSuccess()) {
                    future.channel().close();
                    Throwable cause = future.cause();
                    sink.error(new HomaException(HomaStatus.UNAVAILABLE,
                            "cannot bind Homa transport to " + bindAddress + ": " + cause, cause));
                    return;
                }
                NettyHomaTransport transport;
                try {
                    transport = new NettyHomaTransport(member, future.channel(), gsoBatchBytes);
                } catch (RuntimeException e) {
                    future.channel().close();
                    sink.error(new HomaException(HomaStatus.UNAVAILABLE, "cannot start Homa engine: " + e, e));
                    return;
                }
                datagramHandler.attach(transport);
                log.debug("Homa transport bound to {} ({}, handler on {}, engine {})",
                        transport.localAddress(), transport.dataPath(),
                        settings.handlerScheduler() == null ? "the event loop" : settings.handlerScheduler(),
                        engineConfig);
                sink.success(transport);
            });
        });
    }

    /**
     * {@code SO_REUSEPORT} for {@code channelType}: Netty's epoll option, or the JDK's socket option
     * through NIO where the platform has it; null where neither does.
     */
    static @Nullable ChannelOption<Boolean> reusePortOption(Class<? extends DatagramChannel> channelType) {
        if (UdpOffload.isEpoll(channelType)) {
            return UdpOffload.SO_REUSEPORT;
        }
        try (java.nio.channels.DatagramChannel probe = java.nio.channels.DatagramChannel.open()) {
            return probe.supportedOptions().contains(StandardSocketOptions.SO_REUSEPORT)
                    ? NioChannelOption.of(StandardSocketOptions.SO_REUSEPORT) : null;
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
    }

    /**
     * How the channel reads. Every read goes on until the kernel has said the socket is empty (a
     * recvmmsg that returned fewer datagrams than its slots, {@link RecvmmsgAllocator}; with
     * recvmsg, a call that found nothing), with a per-read budget far above what a socket buffer
     * holds, so that one wake-up takes everything before the engine computes grants and flushes.
     * Netty 4.2's epoll transport is level-triggered, so a read that stops early costs one more
     * epoll_wait, never a stranded datagram. A wake-up of sparse traffic (none shortly before it,
     * as in an unloaded ping-pong) reads one datagram with one recvmsg: no getsockopt and no
     * second receive that finds nothing ({@link RecvmmsgAllocator}). The engine driver drives the
     * engine every {@value EngineDriver#DATAGRAMS_PER_DRIVE} datagrams meanwhile.
     *
     * <p>GRO takes a peer's GSO send (many packets, of any length, {@link GsoBatcher}) in one
     * read, and costs recvmmsg: Netty's recvmmsg passes no control buffer, so a coalesced run
     * would come up as one datagram holding all its segments; recvmsg always passes one. GRO
     * repays that wherever peers batch: on loopback too, whose 64 KB MTU leaves a long message's
     * packets alone but joins a burst of short responses.
     *
     * @param epoll whether the channel is Netty's native epoll channel
     * @param gro whether to turn UDP GRO on
     */
    private static void receiveOffloads(Bootstrap bootstrap, boolean epoll, boolean gro) {
        ChannelOption<Integer> slotBytes = UdpOffload.MAX_DATAGRAM_PAYLOAD_SIZE;
        RecvmmsgAllocator allocator;
        if (epoll && !gro && slotBytes != null) {
            // recvmmsg(2): up to DATAGRAMS_PER_RECVMMSG datagrams per system call, sliced from one buffer.
            bootstrap.option(slotBytes, MAX_DATAGRAM_BYTES);
            allocator = new RecvmmsgAllocator(DATAGRAMS_PER_RECVMMSG, MAX_DATAGRAM_BYTES);
        } else {
            // recvmsg(2): one datagram, or with GRO one run of coalesced datagrams, per system call;
            // a datagram shorter than the buffer does not mean "no more data", and sparse
            // traffic reads once per wake-up.
            allocator = new RecvmmsgAllocator(1, MAX_DATAGRAM_BYTES);
        }
        ChannelOption<Boolean> udpGro = UdpOffload.UDP_GRO;
        if (gro && udpGro != null) {
            bootstrap.option(udpGro, true);
        }
        allocator.maxMessagesPerRead(MAX_READS_PER_READINESS);
        bootstrap.option(ChannelOption.RECVBUF_ALLOCATOR, allocator);
    }

    /**
     * How packets move on a bound channel, for the start-up log and {@link HomaTransport#dataPath()}.
     *
     * @param busyPollNs how long the loop polls before it sleeps, 0 if it does not
     */
    static String describe(Channel channel, EngineConfig engineConfig, GsoBatcher batcher, boolean priorityTos,
            HomaSecurityConfig security, long busyPollNs) {
        boolean epoll = UdpOffload.isEpoll(channel.getClass());
        ChannelOption<Boolean> gro = UdpOffload.UDP_GRO;
        boolean groOn = epoll && gro != null && Boolean.TRUE.equals(channel.config().getOption(gro));
        ChannelOption<Integer> slot = UdpOffload.MAX_DATAGRAM_PAYLOAD_SIZE;
        @Nullable Integer slotBytes = epoll && slot != null ? channel.config().getOption(slot) : null;
        boolean recvmmsg = slotBytes != null && slotBytes > 0;
        return (epoll ? (recvmmsg ? "epoll, recvmmsg/sendmmsg" : "epoll, recvmsg/sendmmsg")
                        : channel.getClass().getSimpleName() + ", one datagram per system call")
                + ", MTU " + engineConfig.mtuBytes()
                + ", pacer " + (engineConfig.linkMbps() == 0 ? "off" : engineConfig.linkMbps() + " Mbit/s")
                + ", grant window " + (engineConfig.rttBytes() == 0 ? "auto" : engineConfig.rttBytes() + " B")
                + ", GSO " + (batcher.enabled() ? "on (up to " + batcher.maxBatchBytes() + " B per send)" : "off")
                + ", GRO " + (groOn ? "on" : "off")
                + ", busy-poll " + (busyPollNs > 0 ? busyPollNs / 1000 + " µs before sleeping" : "off")
                + ", priorities in IP TOS " + (priorityTos ? "on" : "off")
                + ", packet authentication " + (security.enabled()
                        ? security.mode().propertyValue() + " (key " + security.activeKeyId() + " sends, keys "
                                + security.keys().keySet() + " accepted, " + PacketSealer.TRAILER_BYTES + "-byte trailer)"
                        : "off");
    }
}
