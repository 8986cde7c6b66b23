package io.homa.reactive.internal.transport;

import io.homa.reactive.HomaTransport;
import io.netty.channel.EventLoop;
import reactor.core.publisher.Mono;

/**
 * What tests outside this package may read of a bound transport's insides: its event loop, its
 * engine's RPC tables, its offloads. Each reads the part that owns it.
 */
public final class TransportProbes {

    private TransportProbes() {}

    private static NettyHomaTransport netty(HomaTransport transport) {
        return (NettyHomaTransport) transport;
    }

    /** The event loop the engine is confined to. */
    public static EventLoop eventLoop(HomaTransport transport) {
        return netty(transport).driver().eventLoop();
    }

    /** The largest lag of the event loop seen so far, ns. */
    public static long maxEventLoopLagNs(HomaTransport transport) {
        return netty(transport).driver().maxEventLoopLagNs();
    }

    /** Timers that ran late and waited for a pass of the loop's I/O. */
    public static long lateTimers(HomaTransport transport) {
        return netty(transport).driver().lateTimers();
    }

    /** Client calls waiting for their response. */
    public static Mono<Integer> pendingCallCount(HomaTransport transport) {
        return netty(transport).calls().count();
    }

    /** The engine's server RPCs held (from the first request DATA until ACK). */
    public static Mono<Integer> activeServerRpcs(HomaTransport transport) {
        return netty(transport).driver().activeServerRpcs();
    }

    /** The engine's client RPCs in progress. */
    public static Mono<Integer> activeClientRpcs(HomaTransport transport) {
        return netty(transport).driver().activeClientRpcs();
    }

    /** Busy polls that found work before their deadline, or -1 if the loop does not busy-poll. */
    public static long busyPollHits(HomaTransport transport) {
        BusyPollLoops loops = netty(transport).busyPoll();
        return loops == null ? -1 : loops.hits();
    }

    /** The channel's class, e.g. {@code EpollDatagramChannel}. */
    public static Class<?> channelType(HomaTransport transport) {
        return netty(transport).driver().channel().getClass();
    }

    /** GSO sends and the packets they carried so far. */
    public static Mono<long[]> gsoCounters(HomaTransport transport) {
        return netty(transport).driver().gsoCounters();
    }

    /** Whether the transport's channel and the kernel can send with GSO. */
    public static boolean gsoSupported(HomaTransport transport) {
        return UdpOffload.isEpoll(channelType(transport)) && UdpOffload.GSO_SUPPORTED;
    }

    /** Whether Netty's native epoll transport loads here. */
    public static boolean epollAvailable() {
        return UdpOffload.epollAvailable();
    }
}
