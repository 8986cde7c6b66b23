package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRequest;
import io.homa.reactive.HomaRequestHandler;
import io.homa.reactive.HomaStatus;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The RPC layer's server side: a {@link HomaRequestHandler} that decodes the request envelope,
 * finds the {@link RpcMethod}, runs it on a scheduler and encodes the result or error in the
 * response envelope. Every request gets a response:
 *
 * <ul>
 *   <li>a malformed envelope, or a codec other than this dispatcher's: INVALID_ARGUMENT;
 *   <li>unknown service or method: UNIMPLEMENTED, naming {@code service.method};
 *   <li>an argument that does not decode: INVALID_ARGUMENT;
 *   <li>a method that throws or signals an error: INTERNAL with {@code "ExceptionType: message"},
 *       or the status and message of a {@link HomaException};
 *   <li>otherwise OK with the encoded result ({@code null} for an empty {@code Mono}).
 * </ul>
 *
 * <p>Thread-safe: methods may be registered while requests are served.
 */
public class RpcDispatcher implements HomaRequestHandler {
    private static final Logger log = LoggerFactory.getLogger(RpcDispatcher.class);

    private final PayloadCodec codec;
    private final Scheduler scheduler;
    private final Map<MethodKey, RpcMethod> methods = new ConcurrentHashMap<>();

    /**
     * @param codec decodes arguments and encodes results
     * @param scheduler where methods run (never the event loop)
     */
    public RpcDispatcher(PayloadCodec codec, Scheduler scheduler) {
        this.codec = Objects.requireNonNull(codec, "codec must not be null");
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler must not be null");
    }

    /**
     * Exports a method; a later registration of the same service and method replaces it.
     *
     * @return this dispatcher
     */
    public RpcDispatcher register(RpcMethod method) {
        Objects.requireNonNull(method, "method must not be null");
        methods.put(new MethodKey(method.service(), method.method()), method);
        return this;
    }

    /** The method exported as {@code service.method}, if any. */
    public Optional<RpcMethod> lookup(String service, String method) {
        return Optional.ofNullable(methods.get(new MethodKey(service, method)));
    }

    /** The exported methods (a snapshot). */
    public Collection<RpcMethod> methods() {
        return List.copyOf(methods.values());
    }

    /** The codec of this dispatcher. */
    public PayloadCodec codec() {
        return codec;
    }

    /**
     * Answers one request. Never signals an error and never completes empty: failures become
     * error responses.
     */
    @Override
    public Mono<ByteBuf> handle(HomaRequest request) {
        return Mono.defer(() -> dispatch(request))
                .onErrorResume(error -> Mono.just(errorResponse(error, "request " + request.rpcId())))
                .map(Unpooled::wrappedBuffer);
    }

    private Mono<byte[]> dispatch(HomaRequest request) {
        RpcEnvelope.Request envelope = RpcEnvelope.decodeRequest(request.payload());
        if (!codec.name().equals(envelope.codec())) {
            throw new HomaException(HomaStatus.INVALID_ARGUMENT, "codec '" + envelope.codec()
                    + "' is not supported by this server, which uses '" + codec.name() + "'");
        }
        String name = envelope.service() + "." + envelope.method();
        RpcMethod method = methods.get(new MethodKey(envelope.service(), envelope.method()));
        if (method == null) {
            throw new HomaException(HomaStatus.UNIMPLEMENTED, "unknown method " + name);
        }
        Object argument = decodeArgument(method, name, envelope.payload());
        return Mono.defer(() -> invoke(method, argument))
                .subscribeOn(scheduler)
                .map(result -> RpcEnvelope.encodeOk(codec.encode(result)))
                .switchIfEmpty(Mono.fromCallable(() -> RpcEnvelope.encodeOk(codec.encode(null))))
                .onErrorResume(error -> Mono.just(errorResponse(error, name)));
    }

    private @Nullable Object decodeArgument(RpcMethod method, String name, byte[] payload) {
        if (method.argumentType() == null || payload.length == 0) {
            return null;
        }
        try {
            return codec.decode(payload, method.argumentType());
        } catch (HomaException e) {
            throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                    "invalid argument for " + name + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                    "invalid argument for " + name + ": " + describe(e), e);
        }
    }

    private static Mono<?> invoke(RpcMethod method, @Nullable Object argument) {
        Mono<?> result = method.invoker().apply(argument);
        if (result == null) {
            throw new NullPointerException("invoker of " + method.service() + "." + method.method() + " returned null");
        }
        return result;
    }

    private static byte[] errorResponse(Throwable error, String what) {
        if (error instanceof HomaException homa) {
            log.debug("Homa RPC {} answered {}: {}", what, homa.status(), homa.getMessage());
            return RpcEnvelope.encodeError(homa.status(), String.valueOf(homa.getMessage()));
        }
        log.warn("Homa RPC {} failed", what, error);
        return RpcEnvelope.encodeError(HomaStatus.INTERNAL, describe(error));
    }

    /** {@code "ExceptionType: message"}, or just the type when there is no message. */
    static String describe(Throwable error) {
        String type = error.getClass().getSimpleName();
        if (type.isEmpty()) {
            type = error.getClass().getName();
        }
        String message = error.getMessage();
        return message == null ? type : type + ": " + message;
    }

    private record MethodKey(String service, String method) {}
}
