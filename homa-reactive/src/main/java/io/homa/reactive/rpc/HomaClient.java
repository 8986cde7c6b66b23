package io.homa.reactive.rpc;

import io.homa.reactive.HomaTransport;
import reactor.core.publisher.Mono;

/**
 * The RPC layer's client: calls a method of a remote service with one argument and decodes the
 * result. Thread-safe; share one per application.
 *
 * <p>STUB: the implementation is being written; signatures are final.
 */
public class HomaClient {

    /**
     * @param transport the message layer to send on
     * @param resolver finds the endpoint of each service
     * @param codec encodes arguments and decodes results
     */
    public HomaClient(HomaTransport transport, ServiceResolver resolver, PayloadCodec codec) {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * Calls {@code service.method(argument)}. Lazy: nothing is sent before subscribe; cancelling
     * abandons the RPC.
     *
     * @param service the service name
     * @param method the method name
     * @param argument the argument, or {@code null} for a method without one
     * @param responseType the result type
     * @return the decoded result (empty for a {@code null} result), or an error:
     *     {@link io.homa.reactive.HomaRemoteException} with the server's status and message,
     *     {@link io.homa.reactive.HomaTimeoutException}, or {@link io.homa.reactive.HomaException}
     *     (UNAVAILABLE when the service cannot be resolved)
     */
    public <T> Mono<T> call(String service, String method, Object argument, Class<T> responseType) {
        throw new UnsupportedOperationException("stub");
    }
}
