package io.homa.reactive;

import io.homa.engine.EngineCounters;
import io.homa.engine.trace.Timetrace;
import io.homa.reactive.internal.transport.BusyPollLoops;
import io.netty.buffer.ByteBuf;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.resources.LoopResources;

/**
 * The message layer: one Homa endpoint, acting as client and server at once, on
 * {@link HomaTransportConfig#resolvedLoops()} event loops. Each loop has its own UDP socket and its
 * own {@link io.homa.engine.HomaEngine}, confined to that loop: the serving sockets share the
 * endpoint's port ({@code SO_REUSEPORT}), and calls leave from one more socket per loop, each on a
 * port of its own, calls to one server always from the same one (docs/architecture.md, "Event
 * loops"). With one loop the endpoint is one socket.
 *
 * <p>Threading: request handlers run on the handler scheduler. Responses of {@link #call} are
 * signalled on the event loop, so operators placed directly after a call must not block (use
 * {@code publishOn} for heavy or blocking work). Nothing here blocks the event loop.
 *
 * <p>Event loops: the {@link LoopResources} given to {@link HomaTransportSpec#runOn}, which their
 * owner disposes (each transport starts at the next loop in turn); without them a transport creates
 * loops of its own ({@link #loops}: daemon threads {@code homa-epoll-...}, which busy-poll
 * {@link HomaTransportConfig#busyPollNs()} before they sleep, or {@code homa-nio-N}) and disposes
 * them with itself. Netty's native epoll transport is used when it is available and
 * {@link HomaTransportConfig#nativeTransport()} is set, NIO otherwise. Outgoing packets are paced
 * at {@link HomaTransportConfig#linkMbps()} by the engine.
 *
 * <p>IP priorities: with {@link HomaTransportConfig#priorityTos()} on (the default, except on
 * loopback) each packet leaves with the engine's priority for it (0..7; control packets 7) in the
 * IP TOS byte as {@code priority << 5}, on epoll and NIO alike.
 *
 * <p>Threads: the handler is called on the transport's event loop, as WebFlux and RSocket call
 * reactive handlers, so it must not block (hand blocking work to a scheduler with
 * {@code subscribeOn}); or on a scheduler set with {@link HomaTransportSpec#handlerScheduler},
 * at the cost of a thread hop each way.
 */
public abstract class HomaTransport implements Disposable {

    /**
     * A spec to bind a transport with: where ({@code config}), on which event loops, with which
     * clock and handler ({@link HomaTransportSpec}).
     */
    public static HomaTransportSpec create(HomaTransportConfig config) {
        return HomaTransportSpec.of(config);
    }

    /**
     * The event loops a transport bound with {@code config} and no loops of the caller's creates
     * for itself, for callers that own the loops (and pass them with {@link HomaTransportSpec#runOn}),
     * such as the Spring Boot starter: {@link HomaTransportConfig#resolvedLoops()} daemon threads.
     * With Netty's native epoll transport ({@link HomaTransportConfig#nativeTransport()}, where it
     * loads) and {@link HomaTransportConfig#busyPollNs()} above 0, loops that busy-poll that long
     * before they sleep; otherwise Reactor Netty's {@code LoopResources.create("homa", loops, true)}.
     * The caller disposes them after the transports that run on them.
     */
    public static LoopResources loops(HomaTransportConfig config) {
        int threads = config.resolvedLoops();
        if (config.nativeTransport() && config.busyPollNs() > 0) {
            BusyPollLoops polling = BusyPollLoops.create(config.busyPollNs(), threads);
            if (polling != null) {
                return polling;
            }
        }
        return LoopResources.create("homa", threads, true);
    }

    /**
     * Binds a transport lazily, on loops of its own; request handlers run on
     * {@link Schedulers#boundedElastic()}. Same as {@code create(config).handler(handler).bind()}.
     *
     * @param config where to bind and protocol settings
     * @param handler server side: answers requests; {@code null} for a client-only endpoint, whose
     *     incoming requests are dropped and counted ({@link #droppedRequests()}) and left
     *     unanswered (see {@link HomaRequestHandler#handle})
     * @return a {@code Mono} that binds on subscribe and emits the bound transport, or signals an
     *     error if the socket cannot be bound ({@link HomaException} with
     *     {@link HomaStatus#UNAVAILABLE}, the cause attached)
     */
    public static Mono<HomaTransport> bind(HomaTransportConfig config, @Nullable HomaRequestHandler handler) {
        return create(config).handler(handler).bind();
    }

    /**
     * Binds a transport lazily, running request handlers on {@code handlerScheduler}.
     *
     * @param config where to bind and protocol settings
     * @param handler server side, or {@code null} for a client-only endpoint
     * @param handlerScheduler where {@link HomaRequestHandler#handle} is called instead of the event loop
     * @return a {@code Mono} that binds on subscribe and emits the bound transport
     */
    public static Mono<HomaTransport> bind(
            HomaTransportConfig config, @Nullable HomaRequestHandler handler, Scheduler handlerScheduler) {
        return create(config).handler(handler).handlerScheduler(handlerScheduler).bind();
    }

    /**
     * Binds and waits.
     *
     * @throws IllegalStateException if binding fails or takes longer than {@code timeout}
     */
    public static HomaTransport bindNow(
            HomaTransportConfig config, @Nullable HomaRequestHandler handler, Duration timeout) {
        return create(config).handler(handler).bindNow(timeout);
    }

    /**
     * Binds with a handler scheduler and waits.
     *
     * @throws IllegalStateException if binding fails or takes longer than {@code timeout}
     */
    public static HomaTransport bindNow(
            HomaTransportConfig config,
            @Nullable HomaRequestHandler handler,
            Scheduler handlerScheduler,
            Duration timeout) {
        return create(config).handler(handler).handlerScheduler(handlerScheduler).bindNow(timeout);
    }

    /**
     * Sends a request and emits its response. Lazy: nothing is sent before subscribe; cancelling
     * abandons the RPC. The request bytes are taken when this method is called and the buffer is
     * released at once, so the returned {@code Mono} may be subscribed again (each subscription is
     * a new RPC). They are copied, except where they are exactly one or two whole arrays of unpooled
     * heap buffers ({@code Unpooled.wrappedBuffer(array)} or {@code Unpooled.wrappedBuffer(head, body)}):
     * those arrays are kept as {@link #call(InetSocketAddress, byte[], byte[])} keeps them.
     *
     * @param server the server endpoint
     * @param request the request bytes, 1..maxMessageBytes; the transport releases it
     * @return the response bytes (the subscriber must release them, and must not read them, nor an
     *     array it took from them, afterwards: their chunks are reused for later messages), or an error:
     *     {@link HomaTimeoutException} when the server goes silent, {@link HomaException} with
     *     {@link HomaStatus#INVALID_ARGUMENT} for an empty or oversized request, or with
     *     {@link HomaStatus#UNAVAILABLE} when the transport is disposed, or when the server is
     *     shutting down ({@link #drain}): it refused the request unexecuted, or refused another
     *     one less than {@code peer-silence-timeout} ago (then this request is not sent); the
     *     message says "server is shutting down"; or when the server's handler is full
     *     ({@link HomaRequestHandler#overloaded()}): it refused this request unexecuted, the
     *     message says "server overloaded: not executed" and {@link HomaException#refusal()} is
     *     {@link HomaException.Refusal#OVERLOADED} (other calls to it are sent as usual)
     */
    public abstract Mono<ByteBuf> call(InetSocketAddress server, ByteBuf request);

    /**
     * {@link #call(InetSocketAddress, ByteBuf)} with byte arrays. The transport keeps
     * {@code request} (no copy) until the RPC ends: do not modify it meanwhile.
     */
    public abstract Mono<byte[]> call(InetSocketAddress server, byte[] request);

    /**
     * {@link #call(InetSocketAddress, byte[])} with a request of two parts, {@code head} then
     * {@code body}, sent as one message without joining them (a framing header in front of a
     * payload the caller already holds: the RPC layer's envelope). The transport keeps both arrays
     * (no copy) until the RPC ends: do not modify them meanwhile. This default joins them; the
     * Netty transport does not.
     *
     * @param server the server endpoint
     * @param head the request's first bytes, {@code body} the rest; together 1..maxMessageBytes bytes
     * @return the response bytes, or an error as {@link #call(InetSocketAddress, ByteBuf)} gives
     */
    public Mono<byte[]> call(InetSocketAddress server, byte[] head, byte[] body) {
        byte[] request = new byte[head.length + body.length];
        System.arraycopy(head, 0, request, 0, head.length);
        System.arraycopy(body, 0, request, head.length, body.length);
        return call(server, request);
    }

    /** The bound local address (with the actual port when bound to port 0). */
    public abstract InetSocketAddress localAddress();

    /** A snapshot of the engine's counters, taken on the event loop. */
    public abstract Mono<EngineCounters> counters();

    /**
     * Starts handing requests to the handler, first those held since bind
     * ({@link HomaTransportSpec#holdRequests(boolean)}), in arrival order. Idempotent; a transport
     * bound without holding serves from the start.
     */
    public abstract void startServing();

    /** Whether requests go to the handler ({@link #startServing()} called, or bound serving). */
    public abstract boolean isServing();

    /**
     * How packets move, for the start-up log and diagnostics, e.g. {@code "epoll, recvmsg/sendmmsg,
     * MTU 1500, GSO on (up to 62500 B per send), GRO on, priorities in IP TOS on"}: the I/O
     * transport and its system calls (recvmmsg, or recvmsg where GRO needs it), the engine's MTU in bytes, whether UDP segmentation offload (GSO) joins packets on
     * send and how long a send may be, whether the kernel coalesces received datagrams (GRO),
     * whether the event loop busy-polls before it sleeps ({@link HomaTransportConfig#busyPollNs()}), and
     * whether packets carry their priority in the IP TOS byte.
     */
    public String dataPath() {
        return getClass().getSimpleName();
    }

    /**
     * The timetrace this transport records into ({@link HomaTransportConfig#timetraceEvents()}):
     * {@link Timetrace#off()} unless configured. Write it out with
     * {@link Timetrace#writeTo(java.nio.file.Path, InetSocketAddress)} once the traffic of interest
     * has ended, naming {@link #localAddress()} (or the address its peers see, where bound to the
     * wildcard address).
     */
    public Timetrace timetrace() {
        return Timetrace.off();
    }

    /** The clock this transport runs on; the RPC layer measures deadlines on it too. */
    public NanoClock clock() {
        return NanoClock.system();
    }

    /** Datagrams dropped before the engine saw them (e.g. arriving after dispose). */
    public abstract long droppedDatagrams();

    /**
     * Datagrams dropped, uncounted by the engine (which never saw them), because packet
     * authentication is on ({@link HomaTransportConfig#security()}) and they did not
     * authenticate: shorter than the 41-byte trailer plus one byte, a key id this endpoint does not
     * accept, or a tag that does not verify (forged, altered, another key, or a peer without
     * authentication). Always 0 with authentication off. The base implementation returns 0.
     */
    public long unauthenticatedDatagrams() {
        return 0;
    }

    /**
     * Authentic datagrams dropped as replays: their packet counter was already
     * accepted from that sender and epoch, or is more than 1,984 below the highest one accepted
     * (RFC 6479 window). Always 0 with authentication off. The base implementation returns 0.
     */
    public long replayedDatagrams() {
        return 0;
    }

    /**
     * How late, in nanoseconds, the event loop ran its most recent lag probe, a task it schedules
     * for itself every 100 ms: the time anything queued on the loop (a received packet, a RESEND
     * to answer) waited behind work that held the loop. A handler that blocks the loop shows here.
     * The base implementation returns 0.
     */
    public long eventLoopLagNs() {
        return 0;
    }

    /**
     * Requests the engine delivered that were dropped unanswered because this endpoint has no
     * handler (a client-only endpoint). The base implementation returns 0.
     */
    public long droppedRequests() {
        return 0;
    }

    /**
     * Stops serving, gracefully (the first step of a shutdown; {@link #dispose()} is the last).
     * From this call on, a request that arrives complete is refused instead of being handed to
     * the handler: the engine forgets it (it never runs, now or later) and the client is told at
     * once, with an RPC_UNKNOWN packet that carries the shutdown mark (see the table of wire
     * extensions in docs/protocol.md), so that its call fails with {@link HomaStatus#UNAVAILABLE} and the message
     * "server is shutting down" instead of timing out; a client of this library also fails new
     * calls to this endpoint at once for {@code peer-silence-timeout} (see {@link #call}).
     * Requests already handed to the handler run on, and the engine keeps answering RESENDs,
     * sending NEED_ACKs and retransmitting until every response is acknowledged. The socket stays
     * open (this endpoint's own calls keep working) until {@link #dispose()}.
     *
     * <p>The returned {@code Mono} completes when this endpoint is drained: no handler call is left,
     * the engine holds no server RPC (every response acknowledged), and no request has been
     * refused for a quiet period (four resend intervals, at least 250 ms: time for
     * requests sent before their clients heard of the shutdown to arrive, even from a client
     * whose JVM paused meanwhile); or when
     * {@code gracePeriod} ends, whichever is first. It never signals an error. Lazy: nothing
     * happens before subscribe; later calls only wait. The base implementation completes at once.
     *
     * @param gracePeriod the longest wait, at least 0 (0 only refuses new requests and completes)
     * @return completes when drained or when {@code gracePeriod} ends
     * @throws IllegalArgumentException if {@code gracePeriod} is negative
     */
    public Mono<Void> drain(Duration gracePeriod) {
        if (gracePeriod.isNegative()) {
            throw new IllegalArgumentException("gracePeriod must not be negative, was " + gracePeriod);
        }
        return Mono.empty();
    }

    /** Whether {@link #drain} was called: new requests are refused. The base implementation returns false. */
    public boolean isDraining() {
        return false;
    }

    /**
     * Requests refused because this endpoint was draining ({@link #drain}). The base
     * implementation returns 0.
     */
    public long refusedRequests() {
        return 0;
    }

    /**
     * Requests refused unexecuted because the handler was full
     * ({@link HomaRequestHandler#overloaded()}): on their first packet or once they arrived, before
     * the handler saw them. Their callers failed with {@link HomaStatus#UNAVAILABLE} "server
     * overloaded: not executed". The base implementation returns 0.
     */
    public long refusedOverloadedRequests() {
        return 0;
    }

    /**
     * Closes the socket and fails RPCs in flight with {@link HomaStatus#UNAVAILABLE}; waits up to
     * 10 s (does not wait when called on the event loop). For a graceful shutdown call
     * {@link #drain} first.
     */
    public void disposeNow() {
        disposeNow(Duration.ofSeconds(10));
    }

    /** Closes the socket and waits up to {@code timeout} (does not wait when called on the event loop). */
    public abstract void disposeNow(Duration timeout);

    /** Completes when the transport is closed. */
    public abstract Mono<Void> onDispose();
}
