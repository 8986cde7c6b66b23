package io.homa.reactive;

import io.netty.buffer.ByteBuf;
import reactor.core.publisher.Mono;

/**
 * Server side of the message layer: request bytes in, response bytes out. Called on the transport's
 * event loop, where it must not block (a response produced there leaves in the same pass of the
 * loop), or on the scheduler given to {@link HomaTransportSpec#handlerScheduler}.
 */
@FunctionalInterface
public interface HomaRequestHandler {
    /**
     * Produces the response to a request.
     *
     * @param request the request; its payload is valid until the returned {@code Mono} terminates
     * @return the response bytes (1..maxMessageBytes; the transport releases the buffer and copies
     *     its bytes, except whole arrays of unpooled heap buffers, which it keeps until the response
     *     is sent: see {@link HomaTransport#call(java.net.InetSocketAddress, ByteBuf)}; so the
     *     request's own payload, retained, is answered without a copy). An
     *     empty or failed {@code Mono}, or a response of the wrong size, is a handler bug: it is
     *     logged at WARN and the request is aborted. The server forgets the RPC without executing
     *     it again, and the caller's {@code Mono} fails with a {@link HomaException} of status
     *     UNAVAILABLE at its next RESEND (within about {@code resendIntervalNs}). The RPC layer's
     *     dispatcher always answers, with an error status when the method fails.
     */
    Mono<ByteBuf> handle(HomaRequest request);

    /**
     * Whether this handler is full (requests in service or queued work over its own bounds): while
     * it is, the transport refuses new requests unexecuted before calling {@link #handle}, the way a
     * draining transport refuses them, but with the overloaded reason: the engine forgets the
     * request (it never runs, now or later) and tells the client at once, whose call fails with
     * {@link HomaStatus#UNAVAILABLE} "server overloaded: not executed"
     * ({@link HomaException#refusal()} {@link HomaException.Refusal#OVERLOADED}); other calls to this
     * endpoint go on. While true, the engine also refuses requests on their first packet, before
     * they take any memory. Asked on the event loop before each request is handed over and once per
     * batch of received datagrams, so it must be cheap and must not block. The default is never
     * full; {@link io.homa.reactive.rpc.RpcDispatcher} bounds its calls in service and the wait of
     * its queued work.
     *
     * @return {@code true} to refuse new requests now
     */
    default boolean overloaded() {
        return false;
    }
}
