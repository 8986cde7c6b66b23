package io.homa.reactive;

import io.netty.buffer.ByteBuf;
import reactor.core.publisher.Mono;

/**
 * Server side of the message layer: request bytes in, response bytes out. Called off the event
 * loop, on the transport's handler scheduler.
 */
@FunctionalInterface
public interface HomaRequestHandler {
    /**
     * Produces the response to a request.
     *
     * @param request the request; its payload is valid until the returned {@code Mono} terminates
     * @return the response bytes (1..maxMessageBytes; the transport releases the buffer). An
     *     empty or failed {@code Mono}, or a response of the wrong size, is a handler bug: it is
     *     logged at WARN and the RPC is left unanswered. With the current engine the server then
     *     answers the client's RESENDs with BUSY for as long as it keeps the RPC, so the client
     *     does not time out: callers that can meet such a server should bound their calls (e.g.
     *     {@code Mono.timeout}), which cancels the RPC. The RPC layer's dispatcher always answers.
     */
    Mono<ByteBuf> handle(HomaRequest request);
}
