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
     * Request: marks a stream control RPC; the value is {@link #STREAM_OPEN}, {@link #STREAM_NEXT},
     * {@link #STREAM_PUSH} or {@link #STREAM_CANCEL}. Absent for unary calls.
     */
    public static final String STREAM = "homa-stream";

    /** {@link #STREAM} value: subscribe to the method's {@code Flux} and return the first batch. */
    public static final String STREAM_OPEN = "open";

    /** {@link #STREAM} value: return the next batch of an open stream. */
    public static final String STREAM_NEXT = "next";

    /**
     * {@link #STREAM} value: carries the next items of the client's request stream to an open
     * channel (a method with a {@code Flux} parameter), at most the credit the server granted. The
     * payload is the items' frames ({@code u32 count | count x (u32 length | bytes)}), possibly
     * none: a push without items asks for credit and is answered once the method asks for more
     * items (or the channel ends). Several pushes may be in flight, each numbered
     * ({@link #STREAM_SEQ}), within the window the open's answer names ({@link #STREAM_WINDOW_BYTES}).
     */
    public static final String STREAM_PUSH = "push";

    /** {@link #STREAM} value: cancel an open stream. */
    public static final String STREAM_CANCEL = "cancel";

    /**
     * Request (next, cancel) and response (open, next): the server's id of the stream, a decimal
     * {@code long}.
     */
    public static final String STREAM_ID = "homa-stream-id";

    /**
     * Request (open, next): how many more items this batch asks for, a positive decimal integer:
     * a part of what the client's subscriber asked for (the batch requests in flight together ask
     * for at most that); the batch in the response holds 1 to that many items (fewer at the end
     * of the stream, when the batch is full by bytes, or once its linger passed).
     */
    public static final String STREAM_REQUEST = "homa-stream-request";

    /**
     * Response: {@code "true"} when this batch ends the stream (the {@code Flux} completed, or, with
     * an error status, failed after the items in the batch). Request (push): {@code "true"} when the
     * client's request stream ends after this push's items (completed, or failed with
     * {@link #STREAM_ERROR_STATUS}).
     */
    public static final String STREAM_END = "homa-stream-end";

    /**
     * Request (open): {@code "true"} when the client will send a request stream ({@link #STREAM_PUSH}),
     * i.e. the method takes a {@code Flux} parameter. The open's payload then holds the other
     * arguments only, and the server answers it at once, without items, with {@link #STREAM_ID} and
     * {@link #STREAM_CREDIT}.
     */
    public static final String STREAM_UPLOAD = "homa-stream-upload";

    /**
     * Response (channel open, push): how many more items of the request stream the client may push,
     * a decimal {@code long} (0 or more), added to what it was granted before. The server grants
     * what the method asked for (and, to a client that opened with {@link #STREAM_AHEAD}, one of
     * its largest requests beyond that), so a slow method slows the client's source.
     */
    public static final String STREAM_CREDIT = "homa-stream-credit";

    /**
     * Request (channel open): {@code "true"} when the client can tell credit for the method's
     * demand from credit beyond it; the server then grants one of the method's largest requests
     * beyond its demand. Response (push): of the credit granted so far, how many items go beyond
     * what the method asked for, a decimal {@code long} (0 or more): the client holds back (for
     * its batch linger) only items that are not asked for, and sends those that are at once.
     * Absent: the server grants exactly the demand.
     */
    public static final String STREAM_AHEAD = "homa-stream-ahead";

    /**
     * Response (push): {@code "true"} when the method cancelled its subscription to the request
     * stream: the client cancels its source and pushes no more; the response stream goes on.
     */
    public static final String STREAM_UPLOAD_CANCELLED = "homa-stream-upload-cancelled";

    /**
     * Request (push): the status name ({@code HomaStatus}) with which the client's request stream
     * failed after the items in this push; the method's {@code Flux} parameter then signals
     * {@code HomaRemoteException} with this status, {@link #STREAM_ERROR_MESSAGE} and
     * {@link #ERROR_TYPE}. A push with {@link #STREAM_END} {@code "true"} and no status ends the
     * request stream normally.
     */
    public static final String STREAM_ERROR_STATUS = "homa-stream-error-status";

    /** Request (push): the message of the request stream's failure (see {@link #STREAM_ERROR_STATUS}). */
    public static final String STREAM_ERROR_MESSAGE = "homa-stream-error-message";

    /**
     * Request (next, push): the position of this batch request among the stream's batch requests,
     * or of this push among its pushes, a decimal {@code long}. Batch requests count from 1 (the
     * open of a stream without a request stream is batch 0), pushes from 1. The server takes them
     * in this order whatever order they arrive in: a batch request is answered with the items
     * after those of the batch before it, a push's items reach the method after those of the push
     * before it; one that arrives early waits for those before it. A number taken already, or one
     * beyond the oldest not taken yet plus the window (see {@link #STREAM_WINDOW_BYTES}; batch
     * requests: the window in batches and one more, a watch for the end, {@link #STREAM_WATCH}),
     * fails the stream with INVALID_ARGUMENT. Absent: the next in order (a client that keeps one
     * request of each kind in flight).
     */
    public static final String STREAM_SEQ = "homa-stream-seq";

    /**
     * Response (open): the server's stream window in bytes, a decimal integer (0 or more): the
     * client keeps at most max(1, min(window, its own window) / {@link #STREAM_BATCH_BYTES}), and
     * at most {@value #MAX_STREAM_BATCHES_IN_FLIGHT}, batch requests in flight and as many pushes,
     * the pushes' payloads together at most that many bytes unless one push is alone in flight.
     * Absent (a server that takes one at a time): one batch request and one push in flight.
     */
    public static final String STREAM_WINDOW_BYTES = "homa-stream-window-bytes";

    /**
     * Response (open): the most bytes of item frames the server puts in one batch, a positive
     * decimal integer; the client sizes its window in batches of this many bytes and pushes at
     * most this many bytes of frames at a time.
     */
    public static final String STREAM_BATCH_BYTES = "homa-stream-batch-bytes";

    /**
     * Response (open): {@code true} when the server holds a batch request for 0 items (a watch for
     * the end): it answers it with the end once the method's {@code Flux} ends, with no items and
     * no end as soon as a later batch request is taken (the client asked for more meanwhile), and
     * with no items and no end when the stream idle timeout passes with nothing else waiting, so
     * that a client that is gone does not hold the stream open. A client whose subscriber has no
     * demand left, with no batch request in flight, sends one so that it learns of the end, which
     * Reactive Streams delivers without demand; it sends another after an answer that was neither.
     * Absent (a server that answers 0 items at once, or refuses them): no watch; such a stream
     * completes only when the subscriber asks for one more item than there are.
     */
    public static final String STREAM_WATCH = "homa-stream-watch";

    /**
     * Request (open, next): {@code "true"} asks the server to answer this batch request as soon
     * as it holds an item, not when it is full or its batch linger passed. Absent: the linger
     * applies. A server that does not know it applies the linger.
     */
    public static final String STREAM_EAGER = "homa-stream-eager";

    /** Most batch requests, and most pushes, of one stream in flight at once, whatever the window. */
    public static final int MAX_STREAM_BATCHES_IN_FLIGHT = 64;

    private RpcMetadata() {}

    /**
     * How many batch requests (and pushes) of a stream may be in flight: {@code windowBytes} in
     * batches of {@code batchBytes}, 1 to {@value #MAX_STREAM_BATCHES_IN_FLIGHT}.
     */
    static int batchesInFlight(long windowBytes, long batchBytes) {
        long batches = windowBytes / Math.max(1, batchBytes);
        return (int) Math.max(1, Math.min(MAX_STREAM_BATCHES_IN_FLIGHT, batches));
    }

    /** Whether {@code key} is reserved for the RPC layer. */
    public static boolean isReserved(String key) {
        return key.startsWith(RESERVED_PREFIX);
    }
}
