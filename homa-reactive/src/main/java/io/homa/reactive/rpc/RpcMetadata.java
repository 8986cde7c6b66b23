package io.homa.reactive.rpc;

/**
 * Metadata keys the RPC layer itself reads and writes in {@link RpcEnvelope} metadata. Every other
 * key is free for applications and interceptors (e.g. W3C {@code traceparent}, {@code b3}); keys
 * starting with {@code homa-} are reserved.
 */
public final class RpcMetadata {
    /** Prefix of the reserved keys. */
    public static final String RESERVED_PREFIX = "homa-";

    /**
     * Request: the time left until the caller's deadline when the request was sent, in whole
     * milliseconds as a decimal integer ({@code "250"}); absent = no deadline. Relative, so peers
     * need no synchronised clocks. {@code "0"} or less means the deadline has passed.
     */
    public static final String TIMEOUT_MS = "homa-timeout-ms";

    /** Response: the fully qualified class name of the exception the server's method threw. */
    public static final String ERROR_TYPE = "homa-error-type";

    /**
     * Request: marks a stream control RPC; the value is {@link #STREAM_OPEN}, {@link #STREAM_NEXT}
     * or {@link #STREAM_CANCEL}. Absent for unary calls.
     */
    public static final String STREAM = "homa-stream";

    /** {@link #STREAM} value: subscribe to the method's {@code Flux} and return the first batch. */
    public static final String STREAM_OPEN = "open";

    /** {@link #STREAM} value: return the next batch of an open stream. */
    public static final String STREAM_NEXT = "next";

    /** {@link #STREAM} value: cancel an open stream. */
    public static final String STREAM_CANCEL = "cancel";

    /**
     * Request (next, cancel) and response (open, next): the server's id of the stream, a decimal
     * {@code long}.
     */
    public static final String STREAM_ID = "homa-stream-id";

    /**
     * Request (open, next): how many more items the client's subscriber asked for, a positive
     * decimal integer; the batch in the response holds 1 to that many items (fewer only at the
     * end of the stream).
     */
    public static final String STREAM_REQUEST = "homa-stream-request";

    /**
     * Response: {@code "true"} when this batch ends the stream (the {@code Flux} completed, or, with
     * an error status, failed after the items in the batch).
     */
    public static final String STREAM_END = "homa-stream-end";

    private RpcMetadata() {}

    /** Whether {@code key} is reserved for the RPC layer. */
    public static boolean isReserved(String key) {
        return key.startsWith(RESERVED_PREFIX);
    }
}
