package io.homa.cli;

import io.homa.reactive.HomaStatus;

/**
 * The exit status of the {@code homa} command, one per class of failure (as {@code grpcurl}'s).
 */
final class ExitCodes {

    /** The listing or the call succeeded. */
    static final int OK = 0;

    /** An unexpected error (a bug in the command: rerun with {@code --verbose} for its stack trace). */
    static final int SOFTWARE = 1;

    /**
     * Bad usage: an unknown option or command, a bad {@code --peer}, {@code --timeout} or
     * {@code --key}, an argument that is not JSON, or the wrong number of arguments.
     */
    static final int USAGE = 2;

    /** A call that ends with status N exits with {@code STATUS_BASE + N} (N is gRPC's code, 1..16). */
    static final int STATUS_BASE = 64;

    private ExitCodes() {
    }

    /** {@value #STATUS_BASE} plus the status's code, e.g. 69 for NOT_FOUND, 76 for UNIMPLEMENTED. */
    static int of(HomaStatus status) {
        return STATUS_BASE + status.code();
    }
}
