package io.homa.reactive.internal.transport;

import io.homa.engine.HomaEvent;
import io.homa.engine.MessageBytes;
import io.homa.engine.SendOptions;
import io.homa.engine.trace.Timetrace;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.netty.util.collection.LongObjectHashMap;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * The client side: each call from subscribe to its end, by the engine's rpcid, and the servers
 * that said they are shutting down. Confined to the event loop, except {@link #call}, which any
 * thread may subscribe to, and a call's cancellation.
 */
final class PendingCalls {
    private final EngineDriver driver;
    private final int maxMessageBytes;
    private final AtomicBoolean disposed;
    /** How long calls to a server that refused one because it is shutting down fail at once, ns. */
    private final long shuttingDownHoldNs;
    private final Timetrace trace;

    // ---- confined to the event loop ----
    private final LongObjectHashMap<PendingCall> pending = new LongObjectHashMap<>();
    /** Servers that refused one of our requests because they are shutting down, until when calls to them fail at once. */
    private final Map<InetSocketAddress, Long> shuttingDownUntilNs = new HashMap<>();

    /**
     * @param disposed whether the transport is disposed: new calls fail at once
     * @param shuttingDownHoldNs the engine's peer-silence timeout
     */
    PendingCalls(EngineDriver driver, int maxMessageBytes, AtomicBoolean disposed, long shuttingDownHoldNs,
            Timetrace trace) {
        this.driver = driver;
        this.trace = trace;
        this.maxMessageBytes = maxMessageBytes;
        this.disposed = disposed;
        this.shuttingDownHoldNs = shuttingDownHoldNs;
    }

    /** One RPC whose request is {@code parts} in order; the response comes as the engine's parts. */
    Mono<byte[][]> call(InetSocketAddress server, byte[][] parts) {
        return Mono.create(sink -> {
            long lengthBytes = MessageBytes.lengthBytes(parts);
            if (lengthBytes < 1 || lengthBytes > maxMessageBytes) {
                sink.error(TransportErrors.badRequestLength(lengthBytes, maxMessageBytes));
                return;
            }
            if (server.isUnresolved()) {
                sink.error(new HomaException(HomaStatus.INVALID_ARGUMENT, "server address " + server + " is unresolved"));
                return;
            }
            if (disposed.get()) {
                sink.error(unavailable("transport is disposed"));
                return;
            }
            PendingCall call = new PendingCall(server, parts, sink, trace.enabled() ? driver.clock().nanoTime() : 0);
            sink.onCancel(call);
            if (!driver.runOnLoop(call::start)) {
                sink.error(unavailable("event loop is shut down"));
            }
        });
    }

    /** The engine's response to one of our calls. On the event loop. */
    void complete(HomaEvent.ResponseReceived response) {
        PendingCall call = pending.remove(response.rpcId());
        if (call != null) {
            call.traceEnd(response.rpcId(), MessageBytes.lengthBytes(response.parts()));
            call.sink.success(response.parts());
        }
    }

    /** The engine gave one of our calls up. On the event loop. */
    void fail(HomaEvent.RpcFailed failed) {
        PendingCall call = pending.remove(failed.rpcId());
        if (failed.reason() == HomaEvent.Reason.SERVER_SHUTTING_DOWN) {
            // Calls to that server fail at once for a while: it will refuse them too, and
            // so do those whose request has not left yet (it may be gone when they would).
            long nowNs = driver.clock().nanoTime();
            if (shuttingDownUntilNs.put(failed.server(), nowNs + shuttingDownHoldNs) == null) {
                driver.engine().failUnsentRequests(nowNs, failed.server());
            }
        }
        if (call != null) {
            call.traceEnd(failed.rpcId(), 0);
            call.sink.error(TransportErrors.failure(failed));
        }
    }

    /** Forgets servers whose shutdown hold is over. On the event loop. */
    void expireShutdownHolds() {
        if (!shuttingDownUntilNs.isEmpty()) {
            long nowNs = driver.clock().nanoTime();
            shuttingDownUntilNs.values().removeIf(untilNs -> nowNs - untilNs >= 0);
        }
    }

    /** Fails every call still waiting: the transport is disposed. On the event loop, after the engine closed. */
    void failAll() {
        if (!pending.isEmpty()) {
            List<PendingCall> left = new ArrayList<>(pending.values());
            pending.clear();
            for (PendingCall call : left) {
                call.sink.error(unavailable("transport is disposed"));
            }
        }
    }

    /** Calls waiting for their response. */
    Mono<Integer> count() {
        return driver.onLoop(pending::size);
    }

    private HomaException unavailable(String why) {
        return TransportErrors.unavailable(driver.localAddress(), why);
    }

    /** One client RPC from subscribe to its end. */
    private final class PendingCall implements Disposable {
        final InetSocketAddress server;
        final MonoSink<byte[][]> sink;
        private byte @Nullable [][] request;
        private volatile boolean cancelled;
        /** 0 until started; then the engine's rpcid. Event loop only. */
        private long rpcId;
        /** When the caller subscribed, for the timetrace (0 when it is off). */
        private final long subscribedNs;

        PendingCall(InetSocketAddress server, byte[][] request, MonoSink<byte[][]> sink, long subscribedNs) {
            this.server = server;
            this.request = request;
            this.sink = sink;
            this.subscribedNs = subscribedNs;
        }

        /** Records the call's start, now that it has an rpcid, and its end. On the loop. */
        void traceEnd(long id, long responseBytes) {
            if (trace.enabled()) {
                trace.record(subscribedNs, Timetrace.Event.CALL_START, false, server, id, null, 0, 0);
                trace.record(driver.clock().nanoTime(), Timetrace.Event.CALL_END, false, server, id, null, 0,
                        (int) Math.min(Integer.MAX_VALUE, responseBytes));
            }
        }

        /** On the loop. */
        void start() {
            byte[][] parts = request;
            request = null;
            if (cancelled || parts == null) {
                return;
            }
            if (driver.isClosed()) {
                sink.error(unavailable("transport is disposed"));
                return;
            }
            Long untilNs = shuttingDownUntilNs.get(server);
            if (untilNs != null) {
                long nowNs = driver.clock().nanoTime();
                if (untilNs - nowNs > 0) {
                    long agoMs = (shuttingDownHoldNs - (untilNs - nowNs)) / 1_000_000L;
                    sink.error(new HomaException(HomaStatus.UNAVAILABLE, "Homa RPC to " + server
                            + " not sent: server is shutting down (it refused a request " + agoMs + " ms ago; calls to it"
                            + " fail at once for peer-silence-timeout, " + shuttingDownHoldNs / 1_000_000L + " ms)",
                            HomaException.Refusal.SHUTTING_DOWN));
                    return;
                }
                shuttingDownUntilNs.remove(server);
            }
            try {
                rpcId = driver.engine().sendRequest(driver.clock().nanoTime(), server, SendOptions.of(parts));
            } catch (RuntimeException e) {
                sink.error(new HomaException(HomaStatus.INTERNAL, "Homa engine refused the request: " + e, e));
                return;
            }
            pending.put(rpcId, this);
            driver.requestDrive();
        }

        /** Cancellation from the subscriber, on any thread. */
        @Override
        public void dispose() {
            cancelled = true;
            driver.runOnLoop(this::cancelOnLoop);
        }

        @Override
        public boolean isDisposed() {
            return cancelled;
        }

        private void cancelOnLoop() {
            if (rpcId != 0 && pending.get(rpcId) == this) {
                pending.remove(rpcId);
                if (!driver.isClosed()) {
                    driver.engine().cancel(driver.clock().nanoTime(), rpcId);
                    driver.requestDrive();
                }
            }
        }
    }
}
