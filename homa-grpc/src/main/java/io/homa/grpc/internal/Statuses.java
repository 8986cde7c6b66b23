package io.homa.grpc.internal;

import io.grpc.Status;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import java.util.concurrent.CancellationException;

/** gRPC statuses for failures of the RPC layer (the server's own statuses travel in the trailers). */
public final class Statuses {
    private Statuses() {
    }

    /**
     * The status a call ends with when the RPC layer fails it: a {@link HomaException}'s status
     * with its message (the codes are gRPC's), UNIMPLEMENTED as grpc-java words it (the server's
     * dispatcher has no such method: the RPC layer's own answer, since a gRPC method's statuses
     * travel in its trailers), anything else UNKNOWN.
     *
     * @param fullMethodName the gRPC method, {@code package.Service/Method}
     */
    public static Status fromRpcError(Throwable error, String fullMethodName) {
        if (error instanceof HomaException homa) {
            if (homa.status() == HomaStatus.UNIMPLEMENTED) {
                return Status.UNIMPLEMENTED.withDescription("Method not found: " + fullMethodName).withCause(error);
            }
            return Status.fromCodeValue(homa.status().code()).withDescription(homa.getMessage()).withCause(error);
        }
        if (error instanceof CancellationException) {
            return Status.CANCELLED.withDescription(error.getMessage()).withCause(error);
        }
        return Status.UNKNOWN.withDescription(String.valueOf(error)).withCause(error);
    }
}
