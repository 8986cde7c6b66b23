package io.homa.reactive.internal.transport;

import io.homa.reactive.HomaTransport;
import io.netty.channel.EventLoop;
import java.util.List;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What tests outside this package may read of a bound transport's insides: its event loop, its
 * engine's RPC tables, its offloads. Each reads the part that owns it.
 */
public final class TransportProbes {

    private TransportProbes() {}

    /** The transport's first socket: the only one, or a loop group's first serving one. */
    private static NettyHomaTransport netty(HomaTransport transport) {
        if (transport instanceof LoopGroupTransport group) {
            return group.members().get(0);
        }
        return (NettyHomaTransport) transport;
    }

    /** Every socket of the transport: the only one, or a loop group's members. */
    private static List<NettyHomaTransport> members(HomaTransport transport) {
        if (transport instanceof LoopGroupTransport group) {
            return group.members();
        }
        return List.of((NettyHomaTransport) transport);
    }

    /** What {@code read} gives summed over every engine of the transport. */
    private static Mono<Integer> summed(HomaTransport transport, Function<NettyHomaTransport, Mono<Integer>> read) {
        return Flux.fromIterable(members(transport)).concatMap(read).reduce(0, Integer::sum);
    }

    /** How many sockets (and engines) the transport runs: 1, or a loop group's serving plus caller sockets. */
    public static int sockets(HomaTransport transport) {
        return members(transport).size();
    }

    /** The local port of every socket of the transport (a loop group calls each server from one of them). */
    public static List<Integer> localPorts(HomaTransport transport) {
        return members(transport).stream().map(m -> m.localAddress().getPort()).toList();
    }

    /** The event loop the engine is confined to. */
    public static EventLoop eventLoop(HomaTransport transport) {
        return netty(transport).driver().eventLoop();
    }

    /** The event loops of every socket of the transport (one, or a loop group's). */
    public static List<EventLoop> eventLoops(HomaTransport transport) {
        return members(transport).stream().map(m -> m.driver().eventLoop()).distinct().toList();
    }

    /** The largest lag of the event loop seen so far, ns. */
    public static long maxEventLoopLagNs(HomaTransport transport) {
        return members(transport).stream().mapToLong(m -> m.driver().maxEventLoopLagNs()).max().orElse(0);
    }

    /** Timers that ran late and waited for a pass of the loop's I/O. */
    public static long lateTimers(HomaTransport transport) {
        return members(transport).stream().mapToLong(m -> m.driver().lateTimers()).sum();
    }

    /** Client calls waiting for their response. */
    public static Mono<Integer> pendingCallCount(HomaTransport transport) {
        return summed(transport, m -> m.calls().count());
    }

    /** The engine's server RPCs held (from the first request DATA until ACK). */
    public static Mono<Integer> activeServerRpcs(HomaTransport transport) {
        return summed(transport, m -> m.driver().activeServerRpcs());
    }

    /** The engine's client RPCs in progress. */
    public static Mono<Integer> activeClientRpcs(HomaTransport transport) {
        return summed(transport, m -> m.driver().activeClientRpcs());
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
        return Flux.fromIterable(members(transport)).concatMap(m -> m.driver().gsoCounters())
                .reduce(new long[2], (a, b) -> new long[] {a[0] + b[0], a[1] + b[1]});
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
