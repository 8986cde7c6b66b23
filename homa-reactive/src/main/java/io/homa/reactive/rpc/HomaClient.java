package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTransport;
import java.lang.reflect.Type;
import java.net.InetSocketAddress;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The RPC layer's client: calls a method of a remote service with one argument and decodes the
 * result. Thread-safe; share one per application.
 *
 * <p>Each call encodes the argument with the codec, wraps it in a request {@link RpcEnvelope},
 * resolves the service's endpoint and sends one Homa RPC on the transport. By default the result
 * is decoded on the thread that completes the RPC (the transport's event loop): keep downstream
 * work non-blocking, move it with {@code publishOn}, or construct the client with a result
 * scheduler.
 */
public class HomaClient {
    private final HomaTransport transport;
    private final ServiceResolver resolver;
    private final PayloadCodec codec;
    private final @Nullable Scheduler resultScheduler;

    /**
     * A client that decodes results on the transport's event loop (no thread hop).
     *
     * @param transport the message layer to send on
     * @param resolver finds the endpoint of each service
     * @param codec encodes arguments and decodes results
     */
    public HomaClient(HomaTransport transport, ServiceResolver resolver, PayloadCodec codec) {
        this(transport, resolver, codec, null);
    }

    /**
     * A client that decodes results and signals subscribers on {@code resultScheduler}: one thread
     * hop per call, in exchange for keeping decoding and downstream operators off the event loop.
     *
     * @param resultScheduler where results are decoded and emitted; {@code null} for the event loop
     */
    public HomaClient(
            HomaTransport transport, ServiceResolver resolver, PayloadCodec codec, @Nullable Scheduler resultScheduler) {
        this.transport = Objects.requireNonNull(transport, "transport must not be null");
        this.resolver = Objects.requireNonNull(resolver, "resolver must not be null");
        this.codec = Objects.requireNonNull(codec, "codec must not be null");
        this.resultScheduler = resultScheduler;
    }

    /**
     * Calls {@code service.method(argument)}. Lazy: nothing is sent before subscribe; cancelling
     * abandons the RPC. Each subscription is a new RPC.
     *
     * @param service the service name
     * @param method the method name
     * @param argument the argument, or {@code null} for a method without one
     * @param responseType the result type
     * @return the decoded result (empty for a {@code null} result), or an error:
     *     {@link io.homa.reactive.HomaRemoteException} with the server's status and message,
     *     {@link io.homa.reactive.HomaTimeoutException}, or {@link io.homa.reactive.HomaException}
     *     (UNAVAILABLE when the service cannot be resolved, INTERNAL when the argument cannot be
     *     encoded or the response cannot be decoded)
     */
    public <T> Mono<T> call(String service, String method, @Nullable Object argument, Class<T> responseType) {
        return call(service, method, argument, (Type) responseType);
    }

    /**
     * {@link #call(String, String, Object, Class)} for a generic result type, e.g. the
     * {@code Type} of {@code List<Item>}. The caller chooses {@code T} to match {@code responseType}.
     */
    @SuppressWarnings("unchecked")
    public <T> Mono<T> call(String service, String method, @Nullable Object argument, Type responseType) {
        Objects.requireNonNull(service, "service must not be null");
        Objects.requireNonNull(method, "method must not be null");
        Objects.requireNonNull(responseType, "responseType must not be null");
        Mono<byte[]> exchange = Mono.defer(() -> {
            byte[] request = RpcEnvelope.encodeRequest(service, method, codec.name(), codec.encode(argument));
            InetSocketAddress server = resolver.resolve(service);
            return transport.call(server, request);
        });
        if (resultScheduler != null) {
            exchange = exchange.publishOn(resultScheduler);
        }
        return exchange.handle((response, sink) -> {
            Object value;
            try {
                value = decode(service, method, response, responseType);
            } catch (HomaException e) {
                sink.error(e);
                return;
            }
            if (value != null) {
                sink.next((T) value);
            }
        });
    }

    /** The transport this client sends on. */
    public HomaTransport transport() {
        return transport;
    }

    private @Nullable Object decode(String service, String method, byte[] bytes, Type responseType) {
        RpcEnvelope.Response response;
        try {
            response = RpcEnvelope.decodeResponse(bytes);
        } catch (HomaException e) {
            throw new HomaException(HomaStatus.INTERNAL,
                    "bad response from " + service + "." + method + ": " + e.getMessage(), e);
        }
        if (response.status() != HomaStatus.OK) {
            throw new HomaRemoteException(response.status(), response.message());
        }
        if (response.payload().length == 0) {
            return null;
        }
        try {
            return codec.decode(response.payload(), responseType);
        } catch (HomaException e) {
            throw new HomaException(HomaStatus.INTERNAL,
                    "cannot decode the result of " + service + "." + method + ": " + e.getMessage(), e);
        }
    }
}
