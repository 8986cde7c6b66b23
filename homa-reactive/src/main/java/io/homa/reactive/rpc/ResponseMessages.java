package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.internal.rpc.EnvelopeCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.jspecify.annotations.Nullable;
import reactor.core.Fuseable;
import reactor.core.publisher.Mono;

/** A server's response as the message the transport sends, within the largest a message may be. */
final class ResponseMessages {
    private ResponseMessages() {}

    /**
     * The response's bytes: its envelope, then its payload, which a long payload is not copied
     * behind ({@link EnvelopeCodec#SEPARATE_PAYLOAD_BYTES}: the transport sends the two arrays as
     * one message). One longer than {@code maxResponseBytes} (its payload checked when the result
     * was encoded, its metadata only here) becomes a RESOURCE_EXHAUSTED error response.
     *
     * @param what names the request in that error; built only then (every response passes here)
     */
    static ByteBuf encodeWithinLimit(RpcEnvelope.Response response, java.util.function.Supplier<String> what,
            int maxResponseBytes, ServerErrors errors) {
        boolean separate = response.payloadLengthBytes() >= EnvelopeCodec.SEPARATE_PAYLOAD_BYTES;
        byte[] envelope = separate
                ? EnvelopeCodec.encodeResponse(response.status(), response.message(), response.metadata(), EnvelopeCodec.NO_PAYLOAD)
                : EnvelopeCodec.encodeResponse(response);
        long lengthBytes = envelope.length + (separate ? response.payloadLengthBytes() : 0);
        if (lengthBytes > maxResponseBytes) {
            return Unpooled.wrappedBuffer(EnvelopeCodec.encodeResponse(
                    errors.errorResponse(tooLarge(what.get(), lengthBytes, maxResponseBytes), what.get())));
        }
        if (!separate) {
            return Unpooled.wrappedBuffer(envelope);
        }
        return EnvelopeCodec.behindEnvelope(envelope, response.payloadParts());
    }

    static HomaException tooLarge(String what, long lengthBytes, int maxResponseBytes) {
        return new HomaException(HomaStatus.RESOURCE_EXHAUSTED, "the response of " + what + " is " + lengthBytes
                + " bytes encoded, more than the " + maxResponseBytes + " bytes a message may have (max-message-size)");
    }

    /**
     * The response {@code response} already holds, if it is a {@code Mono.just} ({@link Fuseable.ScalarCallable}
     * with a value); else null (still to come, or empty).
     */
    static RpcEnvelope.@Nullable Response ready(Mono<RpcEnvelope.Response> response) {
        if (response instanceof Fuseable.ScalarCallable<?> scalar) {
            try {
                return (RpcEnvelope.Response) scalar.call();
            } catch (Exception e) {
                return null; // Mono.error: the chain turns it into an error response
            }
        }
        return null;
    }
}
