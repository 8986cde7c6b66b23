package io.homa.reactive;

/**
 * Outcome of an RPC at the RPC layer, carried in the response envelope. Codes are those of gRPC,
 * so that users and tools coming from gRPC read them the same way.
 */
public enum HomaStatus {
    OK(0),
    CANCELLED(1),
    UNKNOWN(2),
    INVALID_ARGUMENT(3),
    DEADLINE_EXCEEDED(4),
    NOT_FOUND(5),
    ALREADY_EXISTS(6),
    PERMISSION_DENIED(7),
    RESOURCE_EXHAUSTED(8),
    FAILED_PRECONDITION(9),
    ABORTED(10),
    OUT_OF_RANGE(11),
    UNIMPLEMENTED(12),
    INTERNAL(13),
    UNAVAILABLE(14),
    DATA_LOSS(15),
    UNAUTHENTICATED(16);

    private static final HomaStatus[] BY_CODE = values();

    private final int code;

    HomaStatus(int code) {
        this.code = code;
    }

    /** The wire code, 0..16. */
    public int code() {
        return code;
    }

    /** The status for a wire code; codes this version does not know map to {@link #UNKNOWN}. */
    public static HomaStatus fromCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
    }
}
