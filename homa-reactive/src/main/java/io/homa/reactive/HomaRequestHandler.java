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
     *     empty or failed {@code Mono} is a handler bug: it is logged and the RPC is left
     *     unanswered, so the client eventually times out.
     */
    Mono<ByteBuf> handle(HomaRequest request);
}
