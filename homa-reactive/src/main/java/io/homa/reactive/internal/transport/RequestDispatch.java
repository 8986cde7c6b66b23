package io.homa.reactive.internal.transport;

import io.homa.engine.HomaEvent;
import io.homa.engine.MessageBytes;
import io.homa.engine.SendOptions;
import io.homa.engine.trace.Timetrace;
import io.homa.reactive.HomaRequest;
import io.homa.reactive.HomaRequestHandler;
import io.homa.reactive.HomaTransportSpec;
import io.netty.buffer.ByteBuf;
import io.netty.util.ReferenceCountUtil;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The server side: hands each request the engine delivers to the handler and its response back to
 * the engine; aborts a request the handler fails, answers empty or answers with a message of the
 * wrong length; drops requests when there is no handler, and has the {@link Drain} refuse them
 * while draining. While the handler says it is full ({@link HomaRequestHandler#overloaded()}), it
 * refuses them unexecuted with the overloaded reason, before they are decoded: here as they are
 * delivered, and in the engine on their first packet ({@link #admit()}).
 *
 * <p>Handlers are called on the event loop (no thread hop; a response produced there goes out in
 * the same drive as the request's arrival), or on {@link HomaTransportSpec#handlerScheduler} if set.
 */
final class RequestDispatch {
    private static final Logger log = LoggerFactory.getLogger(RequestDispatch.class);

    private final EngineDriver driver;
    private final Timetrace trace;
    private final Drain drain;
    private final @Nullable HomaRequestHandler handler;
    private final @Nullable Scheduler handlerScheduler;
    private final int maxMessageBytes;
    private final AtomicLong droppedRequests = new AtomicLong();
    /** The engine's count of overload refusals, published for other threads ({@link #publishCounters()}). */
    private volatile long refusedOverloadedRequests;

    /**
     * @param handler the server side, or null for a client-only endpoint
     * @param handlerScheduler where the handler runs, or null for the event loop
     */
    RequestDispatch(EngineDriver driver, Drain drain, @Nullable HomaRequestHandler handler,
            @Nullable Scheduler handlerScheduler, int maxMessageBytes, Timetrace trace) {
        this.driver = driver;
        this.trace = trace;
        this.drain = drain;
        this.handler = handler;
        this.handlerScheduler = handlerScheduler;
        this.maxMessageBytes = maxMessageBytes;
    }

    /** Requests dropped unanswered because there is no handler. */
    long droppedRequests() {
        return droppedRequests.get();
    }

    /** Requests refused unexecuted because the handler was full ({@link HomaRequestHandler#overloaded()}). */
    long refusedOverloadedRequests() {
        return refusedOverloadedRequests;
    }

    /**
     * Tells the engine whether to refuse new requests on their first packet: while the handler is
     * full, a request that arrived would only be refused once delivered, after its bytes took memory
     * and grants. Asked once per batch of received datagrams, so that the engine takes requests
     * again as soon as the handler has room. On the event loop.
     */
    void admit() {
        HomaRequestHandler requestHandler = handler;
        boolean refusing = requestHandler != null && !drain.isDraining() && requestHandler.overloaded();
        if (refusing != driver.engine().isRefusingNewRequests()) {
            driver.engine().refuseNewRequests(refusing);
            log.debug("Homa transport on {} {} new requests: the handler is {}", driver.localAddress(),
                    refusing ? "refuses" : "takes", refusing ? "full" : "no longer full");
        }
    }

    /** Makes the engine's overload refusals visible to {@link #refusedOverloadedRequests()}. On the event loop. */
    void publishCounters() {
        long refused = driver.engine().counters().requestsRefusedOverloaded();
        if (refused != refusedOverloadedRequests) {
            refusedOverloadedRequests = refused;
        }
    }

    /** A request the engine delivered. On the event loop. */
    void onRequest(HomaEvent.RequestReceived event) {
        HomaRequestHandler requestHandler = handler;
        boolean closed = driver.isClosed();
        if (drain.isDraining() && requestHandler != null && !closed) {
            drain.refuse(event);
            return;
        }
        if (requestHandler != null && !closed && requestHandler.overloaded()) {
            // Refused before it is decoded: nothing ran, so the client may send it again.
            driver.engine().refuseOverloaded(driver.clock().nanoTime(), event.client(), event.rpcId());
            driver.engine().refuseNewRequests(true);
            publishCounters();
            log.debug("Homa transport on {} refused request {} from {}: the handler is full", driver.localAddress(),
                    event.rpcId(), event.client());
            return;
        }
        if (requestHandler == null || closed) {
            droppedRequests.incrementAndGet();
            log.debug("Homa transport on {} dropped request {} from {}: no handler",
                    driver.localAddress(), event.rpcId(), event.client());
            if (!closed) {
                driver.engine().abortRequest(driver.clock().nanoTime(), event.client(), event.rpcId());
            }
            return;
        }
        // A long request arrives as the engine's chunks: a composite of them, never joined, each
        // back to the engine's pool when the request is released.
        HomaRequest request = new HomaRequest(event.client(), event.rpcId(),
                ReceivedMessage.of(event.parts(), driver.engine().chunkPool()));
        Mono<ByteBuf> response = Mono.defer(() -> requestHandler.handle(request));
        Scheduler scheduler = handlerScheduler;
        if (scheduler != null) {
            response = response.subscribeOn(scheduler);
        }
        if (trace.enabled()) {
            trace.record(driver.clock().nanoTime(), Timetrace.Event.HANDLER_START, true, event.client(), event.rpcId(),
                    null, 0, 0);
        }
        response.subscribe(new ResponseSubscriber(request));
    }

    /** Called with the handler's response, on the loop or off it; answers the RPC on the loop. */
    private void respond(HomaRequest request, ByteBuf response) {
        if (trace.enabled()) {
            trace.record(driver.clock().nanoTime(), Timetrace.Event.HANDLER_END, true, request.client(),
                    request.rpcId(), null, 0, response.readableBytes());
        }
        byte[][] parts;
        try {
            parts = MessageParts.of(response);
        } finally {
            ReferenceCountUtil.release(response);
        }
        long lengthBytes = MessageBytes.lengthBytes(parts);
        if (lengthBytes < 1 || lengthBytes > maxMessageBytes) {
            log.warn("Homa handler answered RPC {} from {} with {} bytes, outside 1..{}; request aborted",
                    request.rpcId(), request.client(), lengthBytes, maxMessageBytes);
            abortRequest(request);
            return;
        }
        driver.runOnLoop(() -> {
            if (driver.isClosed()) {
                return;
            }
            if (!driver.engine().sendResponse(driver.clock().nanoTime(), request.client(), request.rpcId(), SendOptions.of(parts))) {
                log.debug("Homa RPC {} from {} no longer known; response dropped", request.rpcId(), request.client());
            }
            driver.requestDrive();
        });
    }

    /**
     * Gives up a request the handler did not answer: the engine forgets it (never executing it
     * again) and the client's RPC fails at its next RESEND. On the loop or off it.
     */
    private void abortRequest(HomaRequest request) {
        driver.runOnLoop(() -> {
            if (!driver.isClosed()) {
                driver.engine().abortRequest(driver.clock().nanoTime(), request.client(), request.rpcId());
                driver.requestDrive();
            }
        });
    }

    /** Receives a handler's response, on the loop or off it; the request payload lives until the handler's Mono ends. */
    private final class ResponseSubscriber implements CoreSubscriber<ByteBuf> {
        private final HomaRequest request;
        private boolean answered;

        ResponseSubscriber(HomaRequest request) {
            this.request = request;
        }

        @Override
        public void onSubscribe(Subscription subscription) {
            subscription.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(ByteBuf response) {
            if (answered) {
                ReferenceCountUtil.release(response);
                return;
            }
            answered = true;
            try {
                respond(request, response);
            } catch (RuntimeException e) {
                log.warn("Homa transport on {} failed to send the response to RPC {} from {}",
                        driver.localAddress(), request.rpcId(), request.client(), e);
            }
        }

        @Override
        public void onError(Throwable error) {
            release();
            log.warn("Homa handler failed on RPC {} from {}; request aborted", request.rpcId(), request.client(), error);
            abortRequest(request);
        }

        @Override
        public void onComplete() {
            release();
            if (!answered) {
                log.warn("Homa handler answered RPC {} from {} with an empty Mono; request aborted",
                        request.rpcId(), request.client());
                abortRequest(request);
            }
        }

        private void release() {
            ReferenceCountUtil.safeRelease(request.payload());
        }
    }
}
