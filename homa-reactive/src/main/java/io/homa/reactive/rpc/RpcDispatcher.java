package io.homa.reactive.rpc;

import io.homa.reactive.HomaRequest;
import io.homa.reactive.HomaRequestHandler;
import io.netty.buffer.ByteBuf;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The RPC layer's server side: a {@link HomaRequestHandler} that decodes the request envelope,
 * finds the {@link RpcMethod}, runs it on a scheduler and encodes the result or error in the
 * response envelope. Unknown service or method answers UNIMPLEMENTED; undecodable arguments
 * INVALID_ARGUMENT; an exception from the method INTERNAL with its message.
 *
 * <p>STUB: the implementation is being written; signatures are final.
 */
public class RpcDispatcher implements HomaRequestHandler {

    /**
     * @param codec decodes arguments and encodes results
     * @param scheduler where methods run (never the event loop)
     */
    public RpcDispatcher(PayloadCodec codec, Scheduler scheduler) {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * Exports a method; a later registration of the same service and method replaces it.
     *
     * @return this dispatcher
     */
    public RpcDispatcher register(RpcMethod method) {
        throw new UnsupportedOperationException("stub");
    }

    @Override
    public Mono<ByteBuf> handle(HomaRequest request) {
        throw new UnsupportedOperationException("stub");
    }
}
