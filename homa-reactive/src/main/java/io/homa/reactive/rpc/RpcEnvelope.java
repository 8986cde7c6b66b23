package io.homa.reactive.rpc;

import io.homa.engine.MessageBytes;
import io.homa.reactive.HomaStatus;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The RPC layer's framing of one Homa message as its users see it: a {@link Request} (which
 * service and method it calls, in which codec its arguments are encoded, and its metadata) and a
 * {@link Response} (status, error message, metadata and result), which server interceptors
 * ({@link HomaServerInterceptor}) see and may replace.
 *
 * <p>Metadata carries the deadline and error type ({@link RpcMetadata}), the stream control
 * fields, and free keys such as trace context ({@code traceparent}); keys are unique within an
 * envelope. The bytes on the wire (envelope version 2) are written and read inside the RPC layer.
 */
public final class RpcEnvelope {
    /** No payload: an error response's. */
    private static final byte[] NO_PAYLOAD = new byte[0];

    private RpcEnvelope() {}

    /**
     * A decoded request.
     *
     * @param service the service name
     * @param method the method name
     * @param codec the name of the codec that encoded {@code payload}
     * @param metadata key/value pairs (unmodifiable, in wire order)
     * @param payload the encoded arguments (may be empty)
     */
    public record Request(String service, String method, String codec, Map<String, String> metadata, byte[] payload) {
        public Request {
            Objects.requireNonNull(service, "service must not be null");
            Objects.requireNonNull(method, "method must not be null");
            Objects.requireNonNull(codec, "codec must not be null");
            metadata = copyOf(metadata);
            Objects.requireNonNull(payload, "payload must not be null");
        }

        /** A request without metadata. */
        public Request(String service, String method, String codec, byte[] payload) {
            this(service, method, codec, Map.of(), payload);
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Request that
                    && service.equals(that.service)
                    && method.equals(that.method)
                    && codec.equals(that.codec)
                    && metadata.equals(that.metadata)
                    && Arrays.equals(payload, that.payload);
        }

        @Override
        public int hashCode() {
            return Objects.hash(service, method, codec, metadata, Arrays.hashCode(payload));
        }

        @Override
        public String toString() {
            return "Request{" + service + "." + method + ", codec=" + codec
                    + (metadata.isEmpty() ? "" : ", metadata=" + metadata) + ", payload=" + payload.length + " bytes}";
        }
    }

    /**
     * A response: its status, message, metadata and encoded payload. A payload may be held as the
     * arrays it was encoded into ({@link #okParts}), such as a raw {@code byte[]} result behind its
     * codec tag; it is then sent as those arrays and joined only if {@link #payload()} is asked for.
     */
    public static final class Response {
        private final HomaStatus status;
        private final String message;
        private final Map<String, String> metadata;
        private final byte[][] payloadParts;
        private final long payloadLengthBytes;
        /** The payload as one array: the only part, or the parts joined on first use. */
        private byte @Nullable [] joined;

        /**
         * @param status the outcome
         * @param message the error message; empty when {@code status} is OK
         * @param metadata key/value pairs (copied, in wire order), e.g. {@code homa-error-type}
         * @param payload the encoded result (may be empty; a stream batch's items, framed)
         * @throws NullPointerException if an argument is null
         */
        public Response(HomaStatus status, String message, Map<String, String> metadata, byte[] payload) {
            this(status, message, metadata, new byte[][] {Objects.requireNonNull(payload, "payload must not be null")});
        }

        private Response(HomaStatus status, String message, Map<String, String> metadata, byte[][] payloadParts) {
            this.status = Objects.requireNonNull(status, "status must not be null");
            this.message = Objects.requireNonNull(message, "message must not be null");
            this.metadata = copyOf(metadata);
            long lengthBytes = 0;
            for (byte[] part : payloadParts) {
                lengthBytes += Objects.requireNonNull(part, "payload part must not be null").length;
            }
            this.payloadParts = payloadParts;
            this.payloadLengthBytes = lengthBytes;
            this.joined = payloadParts.length == 1 ? payloadParts[0] : null;
        }

        /** A response without metadata. */
        public Response(HomaStatus status, String message, byte[] payload) {
            this(status, message, Map.of(), payload);
        }

        /** An OK response carrying {@code payload}. */
        public static Response ok(byte[] payload) {
            return new Response(HomaStatus.OK, "", Map.of(), payload);
        }

        /**
         * An OK response whose payload is {@code payloadParts} in order ({@link PayloadCodec#encodeParts}):
         * the arrays are kept, not copied, and must not change afterwards.
         *
         * @throws NullPointerException if the array or one of its parts is null
         */
        public static Response okParts(byte[]... payloadParts) {
            return new Response(HomaStatus.OK, "", Map.of(), payloadParts.clone());
        }

        /**
         * A response of any status whose payload is {@code payloadParts} in order: the arrays are
         * kept, not copied, and must not change afterwards.
         */
        static Response withParts(HomaStatus status, String message, Map<String, String> metadata,
                                  byte[][] payloadParts) {
            return new Response(status, message, metadata, payloadParts.clone());
        }

        /** An error response with no payload. */
        public static Response error(HomaStatus status, String message) {
            return new Response(status, message, Map.of(), NO_PAYLOAD);
        }

        /** The outcome. */
        public HomaStatus status() {
            return status;
        }

        /** The error message; empty when {@link #status()} is OK. */
        public String message() {
            return message;
        }

        /** Key/value pairs (unmodifiable, in wire order), e.g. {@code homa-error-type}. */
        public Map<String, String> metadata() {
            return metadata;
        }

        /** The encoded result as one array (joined on first call if it is held as parts); do not change it. */
        public byte[] payload() {
            byte[] bytes = joined;
            if (bytes == null) {
                bytes = MessageBytes.join(payloadParts);
                joined = bytes;
            }
            return bytes;
        }

        /** The payload's length in bytes. */
        public long payloadLengthBytes() {
            return payloadLengthBytes;
        }

        /** The payload as the arrays it is held in, in order (not copies). */
        byte[][] payloadParts() {
            return payloadParts;
        }

        /** A copy of this response with one more metadata entry (replacing one with the same key). */
        public Response withMetadata(String key, String value) {
            Map<String, String> more = new LinkedHashMap<>(metadata);
            more.put(key, value);
            return new Response(status, message, more, payloadParts);
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Response that
                    && status == that.status
                    && message.equals(that.message)
                    && metadata.equals(that.metadata)
                    && Arrays.equals(payload(), that.payload());
        }

        @Override
        public int hashCode() {
            return Objects.hash(status, message, metadata, Arrays.hashCode(payload()));
        }

        @Override
        public String toString() {
            return "Response{" + status + (message.isEmpty() ? "" : ", message=" + message)
                    + (metadata.isEmpty() ? "" : ", metadata=" + metadata) + ", payload=" + payloadLengthBytes + " bytes}";
        }
    }

    private static Map<String, String> copyOf(Map<String, String> metadata) {
        Objects.requireNonNull(metadata, "metadata must not be null");
        if (metadata.isEmpty()) {
            return Map.of();
        }
        Map<String, String> copy = new LinkedHashMap<>(metadata.size() * 2);
        metadata.forEach((key, value) -> copy.put(
                Objects.requireNonNull(key, "metadata keys must not be null"),
                Objects.requireNonNull(value, () -> "metadata value of '" + key + "' must not be null")));
        return Collections.unmodifiableMap(copy);
    }
}
