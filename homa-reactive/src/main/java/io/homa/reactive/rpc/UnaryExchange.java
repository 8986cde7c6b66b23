package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.NanoClock;
import io.homa.reactive.internal.rpc.EnvelopeCodec;
import io.netty.buffer.ByteBuf;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import reactor.core.Fuseable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A {@link HomaClient}'s unary calls: the request message, one Homa RPC on the transport, and the
 * decoding of its response where it arrives (or, if long, on {@link Schedulers#parallel()}).
 */
final class UnaryExchange {
    private final HomaClient client;
    private final HomaTransport transport;
    private final ServiceResolver resolver;
    private final @Nullable Scheduler resultScheduler;
    private final int offloadBytes;
    private final NanoClock clock;

    UnaryExchange(HomaClient client, HomaTransport transport, ServiceResolver resolver,
                  @Nullable Scheduler resultScheduler, int offloadBytes, NanoClock clock) {
        this.client = client;
        this.transport = transport;
        this.resolver = resolver;
        this.resultScheduler = resultScheduler;
        this.offloadBytes = offloadBytes;
        this.clock = clock;
    }

    /**
     * One unary exchange: resolve, send, decode. Few operators per call: a resolver's
     * {@code Mono.just} is read at once, and a short response is decoded where it arrives.
     *
     * @param valueOnly emit the result itself (empty for {@code null}) rather than a {@link HomaResponse}
     * @return {@code R} is the result type when {@code valueOnly}, else {@code HomaResponse} of it
     */
    @SuppressWarnings("unchecked")
    <R> Mono<R> exchange(RpcCall call, boolean valueOnly) {
        PayloadCodec codec = client.codec(call);
        long timeoutNs = client.timeoutNs(call);
        long startNs = clock.nanoTime();
        Mono<InetSocketAddress> resolved = resolver.resolve(call.service());
        Mono<ByteBuf> exchange;
        if (resolved instanceof Fuseable.ScalarCallable<?> scalar) {
            InetSocketAddress server;
            try {
                server = (InetSocketAddress) scalar.call();
            } catch (Exception e) {
                return Mono.error(e);
            }
            if (server == null) {
                return Mono.error(ClientErrors.noPeer(call));
            }
            exchange = transport.call(server, requestMessage(call, codec, startNs, timeoutNs));
        } else {
            exchange = ClientErrors.orNoPeer(call, resolved).flatMap(server ->
                    transport.call(server, requestMessage(call, codec, startNs, timeoutNs)));
        }
        if (timeoutNs > 0) {
            exchange = exchange.timeout(Duration.ofNanos(timeoutNs), Mono.error(() -> ClientErrors.deadlineExceeded(call, timeoutNs)));
        }
        if (resultScheduler != null) {
            return exchange.publishOn(resultScheduler).handle((message, sink) -> {
                Object result;
                try {
                    result = result(call, codec, message, valueOnly, startNs, timeoutNs);
                } catch (HomaException e) {
                    sink.error(e);
                    return;
                }
                if (result != null) {
                    sink.next((R) result);
                }
            });
        }
        return exchange.flatMap(message -> {
            if (message.readableBytes() > offloadBytes) {
                return Mono.fromCallable(() -> (R) result(call, codec, message, valueOnly, startNs, timeoutNs))
                        .subscribeOn(Schedulers.parallel());
            }
            // Decoded here, on the event loop: an inner Mono.just (or empty, or error) costs no subscription.
            try {
                return Mono.justOrEmpty((R) result(call, codec, message, valueOnly, startNs, timeoutNs));
            } catch (HomaException e) {
                return Mono.error(e);
            }
        });
    }

    /** The decoded response (released here): its value, or a {@link HomaResponse} unless {@code valueOnly}. */
    private @Nullable Object result(RpcCall call, PayloadCodec codec, ByteBuf message, boolean valueOnly,
                                    long startNs, long timeoutNs) {
        HomaResponse<?> response;
        try {
            response = decodeResult(call, codec, message);
        } catch (HomaRemoteException e) {
            throw ClientErrors.remoteError(call, e, startNs, timeoutNs, clock);
        } finally {
            message.release();
        }
        return valueOnly ? response.value() : response;
    }

    /** A unary request: its envelope, then its encoded arguments ({@link HomaClient#requestMessage}). */
    private ByteBuf requestMessage(RpcCall call, PayloadCodec codec, long startNs, long timeoutNs) {
        return client.requestMessage(call, codec, startNs, timeoutNs, Map.of(), codec.encodeArgumentParts(call.arguments()));
    }

    private HomaResponse<?> decodeResult(RpcCall call, PayloadCodec codec, ByteBuf message) {
        EnvelopeCodec.ResponseView response;
        try {
            response = EnvelopeCodec.decodeResponseView(message);
        } catch (HomaException e) {
            throw ClientErrors.badResponse(call, e);
        }
        if (response.status() != HomaStatus.OK) {
            throw ClientErrors.remoteException(response.status(), response.message(), response.metadata());
        }
        HomaMetadata metadata = HomaMetadata.readOnlyOf(response.metadata());
        if (!response.payload().isReadable()) {
            return new HomaResponse<>(null, metadata);
        }
        try {
            return new HomaResponse<>(codec.decode(response.payload(), call.responseType()), metadata);
        } catch (HomaException e) {
            throw new HomaException(HomaStatus.INTERNAL,
                    "cannot decode the result of " + call.fullMethodName() + ": " + e.getMessage(), e);
        }
    }
}
